"""The scaled-out store: Redis, through redis-py's ``redis.asyncio``.

Keys (the match id in braces is a Redis Cluster hash tag, so one match's keys
share a slot and the append script stays single-slot):

- ``grip:match:{ID}:events`` stream, entry id ``0-<ev>``: the match log.
- ``grip:match:{ID}:seat:<n>`` stream, entry id ``0-<seq>``: accepted moves.
- ``grip:match:{ID}`` hash: variant, seed, status, times, for operators.
- ``grip:seat:{ID}:<n>``: the connection holding the seat (its lease).
- ``grip:instance:<instance>``: a server process's heartbeat, expiring unless renewed.
- ``grip:running`` set: the ids of the matches started and not decided (the
  append script adds one at its countdown and removes it at its decision).
- ``grip:result:{ID}``: the result JSON; ``grip:results`` zset indexes them.
- ``grip:player:<id>`` hash: key hash, name, created.

A match's keys expire: a day after they are made while it is undecided (a
lobby nobody started must not stay for good), a week after its decision.

One Lua script appends a batch: it checks the log ends at ``expected_ev``
and every move's seq is new, then writes everything, so exactly one process
wins any race to start a match, accept a seq or write a result.

A lone move may be *rebased*: two players on two processes move at the same
time all the time, and neither move can change whether the other is legal.
So when the only events the caller has not seen are the other seats' moves
or connection changes, the script appends the move after them (renumbering
its ``ev``) instead of sending the caller round to catch up and try again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Collection, Sequence
from dataclasses import asdict
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..errors import Conflict, StoreUnavailable
from ..match.events import Connected, Decided, Disconnected, Event, Moved, decode_events
from ..protocol import Result
from . import BoardRow, DailyBoard, PlayerRecord, board_rows

FINISHED_TTL_S = 7 * 24 * 3600
#: Keys of a match not (yet) decided expire after this: a lobby nobody starts (the hub
#: lets go of it after 30 minutes), a match every process died under. A live match
#: lasts at most its lobby, countdown and one hour of play; its decision sets FINISHED_TTL_S.
UNDECIDED_TTL_S = 24 * 3600
RUNNING = "grip:running"  # the APPEND script names it too
BOARD_SCALE = 10**10  # a board entry's zset score: score * BOARD_SCALE + ms to finish

APPEND = """
local events, meta, result = KEYS[1], KEYS[2], KEYS[3]
local expected, n, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local rebase, mover, undecided_ttl, id = ARGV[4] == '1', ARGV[5], tonumber(ARGV[6]), ARGV[7]
local function last_id(key)
  local top = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)
  if #top == 0 then return 0 end
  return tonumber(string.sub(top[1][1], 3))
end
local last = last_id(events)
local shift = 0
if last ~= expected then
  if not rebase or last < expected or last - expected > 64 then return {0, last} end
  -- entries are e <json> k <kind> s <seat>: only the others' moves and connection changes may be passed
  for _, entry in ipairs(redis.call('XRANGE', events, '0-' .. (expected + 1), '+')) do
    local k, s = entry[2][4], entry[2][6]
    if not ((k == 'moved' and s ~= mover) or k == 'connected' or k == 'disconnected') then return {0, last} end
  end
  shift = last - expected
end
local base = 7
local tops = {}
for i = 0, n - 1 do
  local o = base + i * 8
  if ARGV[o + 2] == 'moved' then
    local key, seq = KEYS[4 + tonumber(ARGV[o + 4])], tonumber(ARGV[o + 5])
    local top = tops[key] or last_id(key)
    if top >= seq then return {-1, last} end
    -- the seat's previous move is not here: the log lost events the writer applied
    if top < seq - 1 then return {-2, last} end
    tops[key] = seq
  end
end
for i = 0, n - 1 do
  local o = base + i * 8
  local ev, kind, body, seat, seq, extra, at = ARGV[o+1], ARGV[o+2], ARGV[o+3], ARGV[o+4], ARGV[o+5], ARGV[o+6], ARGV[o+7]
  local board = ARGV[o+8]
  if shift ~= 0 then  -- the body starts {"ev":N, (pydantic keeps field order): renumber it
    local moved = tonumber(ev) + shift
    body = '{"ev":' .. moved .. string.sub(body, string.len('{"ev":' .. ev) + 1)
    ev = tostring(moved)
  end
  redis.call('XADD', events, '0-' .. ev, 'e', body, 'k', kind, 's', seat)
  if kind == 'moved' then
    redis.call('XADD', KEYS[4 + tonumber(seat)], '0-' .. seq, 'm', extra)
  elseif kind == 'connected' then
    redis.call('SET', KEYS[6 + tonumber(seat)], extra, 'EX', ttl)
  elseif kind == 'disconnected' then
    if redis.call('GET', KEYS[6 + tonumber(seat)]) == extra then redis.call('DEL', KEYS[6 + tonumber(seat)]) end
  elseif kind == 'countdown' then
    redis.call('SADD', 'grip:running', id)
  elseif kind == 'decided' then
    redis.call('SET', result, extra)
    redis.call('SREM', 'grip:running', id)
    local decided = cjson.decode(extra)
    for _, s in ipairs(decided.seats) do
      if s.player ~= cjson.null then
        redis.call('ZADD', 'grip:player:' .. s.player .. ':results', decided.decided_at, decided.match)
      end
    end
    for k = 1, 7 do if k ~= 3 then redis.call('EXPIRE', KEYS[k], ttl) end end
    if board ~= '' then
      local b = cjson.decode(board)
      for _, row in ipairs(b.rows) do
        redis.call('ZADD', b.key .. ':board', row[2], row[1])
        redis.call('HSET', b.key .. ':entries', row[1], row[3])
      end
      redis.call('ZADD', 'grip:daily:days', 0, b.day)
    end
  end
  if kind == 'opened' or kind == 'countdown' or kind == 'started' or kind == 'decided' then
    redis.call('HSET', meta, 'status', kind, 'updated_at', at)
  end
  -- every key gets a TTL when it is made; the decision replaces it with the finished one
  if kind == 'opened' then
    redis.call('EXPIRE', events, undecided_ttl)
    redis.call('EXPIRE', meta, undecided_ttl)
  elseif kind == 'moved' and seq == '1' then
    redis.call('EXPIRE', KEYS[4 + tonumber(seat)], undecided_ttl)
  end
end
return {1, shift}
"""


def match_keys(match_id: str) -> list[str]:
    tag = f"{{{match_id}}}"
    return [
        f"grip:match:{tag}:events",
        f"grip:match:{tag}",
        f"grip:result:{tag}",
        f"grip:match:{tag}:seat:0",
        f"grip:match:{tag}:seat:1",
        f"grip:seat:{tag}:0",
        f"grip:seat:{tag}:1",
    ]


def _args(e: Event) -> list[Any]:
    seat = getattr(e, "seat", 0)
    seq, extra, board = 0, "", ""
    if isinstance(e, Moved):
        seq, extra = e.seq, e.move
    elif isinstance(e, Connected | Disconnected):
        extra = e.conn
    elif isinstance(e, Decided):
        extra = e.result.model_dump_json()
        rows = board_rows(e.result)
        if rows and e.result.daily:
            board = json.dumps(
                {
                    "day": e.result.daily,
                    "key": daily_key(e.result.daily),
                    "rows": [
                        [r.player, r.score * BOARD_SCALE + r.time_ms, json.dumps(asdict(r))] for r in rows
                    ],
                }
            )
    return [e.ev, e.kind, e.model_dump_json(), seat, seq, extra, e.at, board]


def daily_key(day: str) -> str:
    return f"grip:daily:{{{day}}}"


class RedisStore:
    def __init__(self, url: str) -> None:
        self._redis = aioredis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=1)
        self._append = self._redis.register_script(APPEND)

    async def _call(self, coro: Any) -> Any:
        try:
            return await coro
        except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from None

    async def ping(self) -> bool:
        try:
            return bool(await asyncio.wait_for(self._redis.ping(), 0.5))
        except (RedisError, OSError, TimeoutError):
            return False

    async def append(
        self, match_id: str, expected_ev: int, events: Sequence[Event], *, rebase: bool = False
    ) -> int:
        mover = events[0].seat if rebase and isinstance(events[0], Moved) else -1
        args: list[Any] = [
            expected_ev,
            len(events),
            FINISHED_TTL_S,
            int(rebase),
            mover,
            UNDECIDED_TTL_S,
            match_id,
        ]
        for e in events:
            args += _args(e)
        ok, shift = await self._call(self._append(keys=match_keys(match_id), args=args))
        if ok != 1:  # shift is then the log's last ev
            raise Conflict(match_id, behind=ok == -2 or int(shift) < expected_ev)
        for e in events:
            if isinstance(e, Decided):
                await self._call(self._redis.zadd("grip:results", {match_id: e.at}))
        return int(shift)

    async def heartbeat(self, instance: str, ttl_ms: int) -> None:
        await self._call(self._redis.set(f"grip:instance:{instance}", 1, px=ttl_ms))

    async def alive(self, instances: Collection[str]) -> set[str]:
        names = sorted(instances)
        if not names:
            return set()
        found = await self._call(self._redis.mget([f"grip:instance:{i}" for i in names]))
        return {name for name, value in zip(names, found, strict=True) if value is not None}

    async def running(self) -> dict[str, tuple[str, ...]]:
        """With the seats' leases; ids whose log has expired (every process died under it) are dropped."""
        ids = sorted(m.decode() for m in await self._call(self._redis.smembers(RUNNING)))
        async with self._redis.pipeline(transaction=False) as pipe:
            for match_id in ids:
                keys = match_keys(match_id)
                pipe.exists(keys[0])
                pipe.mget(keys[5:7])
            found = await self._call(pipe.execute())
        out: dict[str, tuple[str, ...]] = {}
        for match_id, exists, leases in zip(ids, found[::2], found[1::2], strict=True):
            if exists:
                out[match_id] = tuple(lease.decode() for lease in leases if lease is not None)
        gone = [m for m in ids if m not in out]
        if gone:
            await self._call(self._redis.srem(RUNNING, *gone))
        return out

    async def forget_lobbies(self, opened_before: int) -> int:
        """Nothing to do: an undecided match's keys expire (``UNDECIDED_TTL_S``)."""
        return 0

    async def events(self, match_id: str, after: int = 0) -> list[Event]:
        entries = await self._call(self._redis.xrange(match_keys(match_id)[0], f"0-{after + 1}", "+"))
        return decode_events(b"[" + b",".join(fields[b"e"] for _, fields in entries) + b"]")

    async def result(self, match_id: str) -> Result | None:
        raw = await self._call(self._redis.get(match_keys(match_id)[2]))
        return None if raw is None else Result.model_validate_json(raw)

    async def player(self, player_id: str) -> PlayerRecord | None:
        h = await self._call(self._redis.hgetall(f"grip:player:{player_id}"))
        if not h:
            return None
        return PlayerRecord(player_id, h[b"key_hash"].decode(), h[b"name"].decode(), int(h[b"created_at"]))

    async def save_player(self, player: PlayerRecord) -> None:
        mapping = {"key_hash": player.key_hash, "name": player.name, "created_at": player.created_at}
        await self._call(self._redis.hset(f"grip:player:{player.id}", mapping=mapping))  # type: ignore[arg-type]

    async def setting(self, key: str, fresh: str | None = None) -> str | None:
        if fresh is not None:
            await self._call(self._redis.set(f"grip:setting:{key}", fresh, nx=True))
        stored = await self._call(self._redis.get(f"grip:setting:{key}"))
        return None if stored is None else str(stored.decode())

    async def claim_daily(self, day: str, player: str, match: str) -> str:
        await self._call(self._redis.hsetnx(f"{daily_key(day)}:attempts", player, match))
        return await self.daily_attempt(day, player) or match

    async def daily_attempt(self, day: str, player: str) -> str | None:
        held = await self._call(self._redis.hget(f"{daily_key(day)}:attempts", player))
        return None if held is None else str(held.decode())

    async def leaderboard(self, day: str, player: str | None, limit: int = 100) -> DailyBoard:
        key = daily_key(day)
        players = await self._call(self._redis.zrange(f"{key}:board", 0, limit - 1))
        details = await self._call(self._redis.hmget(f"{key}:entries", players)) if players else []
        top = [BoardRow(**json.loads(d)) for d in details if d is not None]
        you = None
        if player is not None:
            mine = await self._call(self._redis.hget(f"{key}:entries", player))
            if mine is not None:
                row = BoardRow(**json.loads(mine))
                ahead = await self._call(
                    self._redis.zcount(f"{key}:board", "-inf", f"({row.score * BOARD_SCALE + row.time_ms}")
                )
                you = (int(ahead) + 1, row)
        async with self._redis.pipeline(transaction=False) as pipe:
            for score in range(97):
                pipe.zcount(f"{key}:board", score * BOARD_SCALE, (score + 1) * BOARD_SCALE - 1)
            counts = await self._call(pipe.execute())
        return DailyBoard(top, you, {score: int(n) for score, n in enumerate(counts) if n})

    async def daily_days(self, before: str, limit: int) -> list[tuple[str, int]]:
        days = await self._call(
            self._redis.zrevrangebylex("grip:daily:days", f"({before}", "-", start=0, num=limit)
        )
        out = []
        for raw in days:
            day = raw.decode()
            out.append((day, int(await self._call(self._redis.zcard(f"{daily_key(day)}:board")))))
        return out

    async def player_results(
        self, player: str, before: tuple[int, str] | None = None, limit: int | None = None
    ) -> list[Result]:
        key = f"grip:player:{player}:results"
        top = "+inf" if before is None else before[0]
        entries = await self._call(self._redis.zrevrangebyscore(key, top, "-inf", withscores=True))
        # newest first, ties by match id descending: the order of the SQLite store
        rows = sorted(((int(at), m.decode()) for m, at in entries), reverse=True)
        if before is not None:
            rows = [r for r in rows if r < before]
        matches = [m for _, m in rows[:limit]]
        raws = await self._call(self._redis.mget([match_keys(m)[2] for m in matches])) if matches else []
        return [Result.model_validate_json(raw) for raw in raws if raw is not None]

    async def close(self) -> None:
        await self._redis.aclose()
