"""The scaled-out store: Redis or a Redis Cluster, through redis-py's ``redis.asyncio``.

Keys (text in braces is a Redis Cluster hash tag: keys with the same tag
share a slot, so one script may write them all):

- ``grip:match:{ID}:events`` stream, entry id ``0-<ev>``: the match log.
- ``grip:match:{ID}:seat:<n>`` stream, entry id ``0-<seq>``: accepted moves (and v2's numbered undos).
- ``grip:match:{ID}`` hash: variant, seed, status, times, for operators.
- ``grip:seat:{ID}:<n>``: the connection holding the seat (its lease).
- ``grip:result:{ID}``: the result JSON, written with the ``decided`` event.
- ``grip:replay:{ID}``: the replay's gzipped JSON (``server/replay.py``), after its daily day and a newline.
- ``grip:instance:{live}:<instance>``: a server process's heartbeat, expiring unless
  renewed. One tag for all: in a cluster they share a master, so a failover stops
  every process's heartbeat at once, and none takes the others for dead (each
  judges only after a whole time to live of its own renewals).
- ``grip:running`` set: matches started and not decided, and decided ones
  whose follow-ups (below) have not all landed yet.
- ``grip:results`` zset: every result's match id by decision time.
- ``grip:player:<id>`` hash: key hash, name, created.
- ``grip:player:{<id>}:results`` zset, ``grip:player:{<id>}:totals``: the
  player's results by decision time, and their fold (``server/stats.py``).
- ``grip:daily:{DAY}:board`` zset, ``:entries`` and ``:attempts`` hashes;
  ``grip:daily:days`` zset: the days with ranked games.

A match's keys expire: a day after they are made while it is undecided (a
lobby nobody started must not stay for good), an hour after it is called off
(it never starts), a week after its decision.

**One script, one slot.** The APPEND script writes a match's own keys only,
all declared, so it runs on the one master holding the match's slot. It
checks that the log ends at ``expected_ev`` and that every move's seq is new,
then writes everything: exactly one process wins any race to start a
match, accept a seq or write a result.

**A decision's follow-ups** live in other slots: each player's results and
totals, the day's leaderboard, the results index. They are separate steps,
each idempotent (the totals script folds a match in only if the player's
index does not hold it yet; the others set what is already set), and the
``grip:running`` set is their to-do list: a match is in it from before its
countdown is appended (and again from before its decision), and leaves it
only once every follow-up of its decision has landed. A process that dies
between the steps leaves it there, decided; ``running`` finds it and runs
the follow-ups again, so nothing is lost and nothing counted twice.

**Acked means replicated, when asked** (``replicas``): after a write, the
process writes a marker in the same slot and sends ``WAIT`` on the same
connection; replication keeps a master's writes in order, so replicas that
have the marker have the write. Too few in time: ``StoreUnavailable``.

A lone move may be *rebased*: two players on two processes move at the same
time all the time, and neither move can change whether the other is legal.
So when the only events the caller has not seen are the other seats' moves
or connection changes, the script appends the move after them (renumbering
its ``ev``) instead of sending the caller round to catch up and try again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Collection, Sequence
from dataclasses import asdict
from typing import Any

from redis.asyncio import RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import (
    AskError,
    ClusterDownError,
    ClusterError,
    MovedError,
    RedisClusterException,
    RedisError,
    TryAgainError,
)

from .. import ratings
from ..errors import Conflict, StoreUnavailable
from ..match.events import (
    UNDO,
    Connected,
    CountdownStarted,
    Decided,
    Disconnected,
    Event,
    Moved,
    TookBack,
    decode_events,
    event_json,
)
from ..protocol import PLAYER_ID_PATTERN, LiveRace, Rated, Result, ResultSummary
from ..ratings import PlayerRating, RatingPoint
from ..redis_link import UNANSWERED, Client, connect, hash_tag
from ..stats import Totals, fold
from . import BoardKey, BoardPage, BoardRow, DailyBoard, LiveTop, PlayerRecord, QueueEntry, board_rows
from .redis_ratings import SharedData

log = logging.getLogger(__name__)

FINISHED_TTL_S = 7 * 24 * 3600
#: Keys of a match not (yet) decided expire after this: a lobby nobody starts (the hub
#: lets go of it after 30 minutes), a match every process died under. A live match
#: lasts at most its lobby, countdown and one hour of play; its decision sets FINISHED_TTL_S.
UNDECIDED_TTL_S = 24 * 3600
#: Keys of a lobby called off (its creator opened another, or a quick race's racer was not ready)
#: expire this long after: it never starts, and its link stops working half an hour after it
#: opened (``LOBBY_TTL_MS``). A creator making lobby after lobby, each called off by the next,
#: kept 4.7 KB of Redis memory a create for a day (docs/benchmarks.md).
CALLED_OFF_TTL_S = 3600
RUNNING = "grip:running"
RESULTS = "grip:results"
DAYS = "grip:daily:days"
BOARD_SCALE = 10**10  # a board entry's zset score: score * BOARD_SCALE + ms to finish
#: How long a master may take to hear from its replicas before a write counts as not confirmed.
WAIT_MS = 1000
MIGRATION_WAIT_S = 2.0  # how long a script waits out its slot's migration (``RedisStore.script``)
SYNCED_TTL_MS = 60_000  # the marker written before a WAIT: only its replication matters
FOLD_ATTEMPTS = 16  # a player's totals changed by another decision meanwhile: fold again

RELEASE = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
"""  # a daily attempt given back: only by the match that holds it

APPEND = """
local events, meta, result = KEYS[1], KEYS[2], KEYS[3]
local expected, n, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local rebase, mover, undecided_ttl = ARGV[4] == '1', ARGV[5], tonumber(ARGV[6])
local called_off_ttl = tonumber(ARGV[7])
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
-- a move, or an undo with a seq (v2): it takes its seat's next seq
local function numbered(kind, seq) return kind == 'moved' or (kind == 'undone' and seq ~= '0') end
for i = 0, n - 1 do
  local o = base + i * 7
  if numbered(ARGV[o + 2], ARGV[o + 5]) then
    local key, seq = KEYS[4 + tonumber(ARGV[o + 4])], tonumber(ARGV[o + 5])
    local top = tops[key] or last_id(key)
    if top >= seq then return {-1, last} end
    -- the seat's previous move is not here: the log lost events the writer applied
    if top < seq - 1 then return {-2, last} end
    tops[key] = seq
  end
end
for i = 0, n - 1 do
  local o = base + i * 7
  local ev, kind, body, seat, seq, extra, at = ARGV[o+1], ARGV[o+2], ARGV[o+3], ARGV[o+4], ARGV[o+5], ARGV[o+6], ARGV[o+7]
  if shift ~= 0 then  -- the body starts {"ev":N, (pydantic keeps field order): renumber it
    local moved = tonumber(ev) + shift
    body = '{"ev":' .. moved .. string.sub(body, string.len('{"ev":' .. ev) + 1)
    ev = tostring(moved)
  end
  redis.call('XADD', events, '0-' .. ev, 'e', body, 'k', kind, 's', seat)
  if numbered(kind, seq) then
    redis.call('XADD', KEYS[4 + tonumber(seat)], '0-' .. seq, 'm', extra)
  end
  if kind == 'connected' then
    redis.call('SET', KEYS[6 + tonumber(seat)], extra, 'EX', ttl)
  elseif kind == 'disconnected' then
    if redis.call('GET', KEYS[6 + tonumber(seat)]) == extra then redis.call('DEL', KEYS[6 + tonumber(seat)]) end
  elseif kind == 'decided' then
    redis.call('SET', result, extra)
    for k = 1, 7 do if k ~= 3 then redis.call('EXPIRE', KEYS[k], ttl) end end
  elseif kind == 'called_off' then  -- it never starts: kept an hour, not the undecided day
    for k = 1, 7 do if k ~= 3 then redis.call('EXPIRE', KEYS[k], called_off_ttl) end end
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

#: Fold a result into a player's totals, once: KEYS their results index and totals; ARGV the
#: number of results the new totals were folded from before, the new totals, then
#: decided_at/match pairs to enter in the index. Nothing if the first match is entered already;
#: 0 if the index changed since the totals were read (fold again).
FOLD = """
if redis.call('ZSCORE', KEYS[1], ARGV[4]) then return 1 end
if redis.call('ZCARD', KEYS[1]) ~= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
for i = 3, #ARGV, 2 do redis.call('ZADD', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
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


def player_keys(player: str) -> list[str]:
    """A player's results index and totals: one slot, for the FOLD script."""
    return [f"grip:player:{{{_checked(player)}}}:results", f"grip:player:{{{player}}}:totals"]


def _checked(player: str) -> str:
    """A player id of the form the server issues: anything else would name other keys."""
    if not re.fullmatch(PLAYER_ID_PATTERN, player):
        raise ValueError(f"not a player id: {player!r}")
    return player


def _args(e: Event) -> list[Any]:
    seat = getattr(e, "seat", 0)
    seq, extra = 0, ""
    if isinstance(e, Moved):
        seq, extra = e.seq, e.move
    elif isinstance(e, TookBack) and e.seq is not None:
        seq, extra = e.seq, UNDO
    elif isinstance(e, Connected | Disconnected):
        extra = e.conn
    elif isinstance(e, Decided):
        extra = e.result.model_dump_json()
    return [e.ev, e.kind, event_json(e), seat, seq, extra, e.at]


def heartbeat_key(instance: str) -> str:
    return f"grip:instance:{{live}}:{instance}"


def daily_key(day: str) -> str:
    return f"grip:daily:{{{day}}}"


class RedisStore:
    def __init__(self, client: Client, *, replicas: int = 0) -> None:
        self._redis = client
        self._replicas = replicas
        self._append = client.register_script(APPEND)
        self._fold = client.register_script(FOLD)
        self._release = client.register_script(RELEASE)
        self._shared = SharedData(self)

    @classmethod
    async def connect(cls, url: str, *, replicas: int = 0) -> RedisStore:
        return cls(await connect(url, replicas=replicas), replicas=replicas)

    @property
    def client(self) -> Client:
        return self._redis

    @property
    def clustered(self) -> bool:
        return isinstance(self._redis, RedisCluster)

    async def call(self, coro: Any) -> Any:
        try:
            return await coro
        except UNANSWERED as exc:
            raise StoreUnavailable(str(exc)) from None

    async def script(self, script: AsyncScript, keys: list[str], args: list[Any]) -> Any:
        """Run a script, again while its slot is between two masters (a migration), for a while.

        Mid-migration a script whose keys are not all on one side is refused
        (``TRYAGAIN``: a match's result key, say, exists on neither); redis-py
        tries again for a fraction of a second, then gives up ("TTL
        exhausted"). A refused script did not run, so it is tried again here
        for up to ``MIGRATION_WAIT_S``: a slot holding many matches takes
        longer to move than redis-py waits, and a player should not notice.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + MIGRATION_WAIT_S
        delay = 0.05
        while True:
            try:
                return await script(keys=keys, args=args)
            except (TryAgainError, ClusterError) as exc:
                if isinstance(exc, ClusterDownError) or loop.time() + delay > deadline:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.25)

    async def ping(self) -> bool:
        """Whether every master answers, and a cluster has every slot served.

        A cluster client that cannot route the ping (no node reachable, slots
        uncovered while it reads the map again) raises ``RedisClusterException``,
        which is no ``RedisError``: let out, it would make ``/healthz`` websockets'
        500 page instead of the 503 every probe reads.
        """
        try:
            async with asyncio.timeout(0.5):
                if isinstance(self._redis, RedisCluster):
                    await self._redis.ping(target_nodes=RedisCluster.PRIMARIES)
                    return bool((await self._redis.cluster_info())["cluster_state"] == "ok")
                return bool(await self._redis.ping())
        except (RedisError, RedisClusterException, OSError, TimeoutError):
            return False

    async def replicated(self, key: str) -> None:
        """Return once ``key``'s last write is on the replicas asked for (``replicas``).

        A marker is written in ``key``'s slot and ``WAIT`` sent on the same
        connection: a master replicates its writes in order, so a replica
        holding the marker holds everything written there before it.
        """
        if not self._replicas:
            return
        marker = f"grip:synced:{{{hash_tag(key)}}}"
        for _ in range(3):
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.set(marker, 1, px=SYNCED_TTL_MS)
                if isinstance(self._redis, RedisCluster):  # WAIT has no key: send it where the marker goes
                    pipe.execute_command(
                        "WAIT", self._replicas, WAIT_MS, target_nodes=self._redis.get_node_from_key(marker)
                    )
                    run = pipe.execute(allow_redirections=False)  # type: ignore[call-arg]
                else:
                    pipe.execute_command("WAIT", self._replicas, WAIT_MS)
                    run = pipe.execute()
                try:
                    _, copies = await self.call(run)
                except (MovedError, AskError):  # the slot moved: ask its new master
                    assert isinstance(self._redis, RedisCluster)
                    await self.call(self._redis.nodes_manager.initialize())
                    continue
            if int(copies) >= self._replicas:
                return
            raise StoreUnavailable(f"{copies} of {self._replicas} replicas confirmed the write in time")
        raise StoreUnavailable("the slot kept moving")

    async def append(
        self, match_id: str, expected_ev: int, events: Sequence[Event], *, rebase: bool = False
    ) -> int:
        keys = match_keys(match_id)
        decided = next((e for e in events if isinstance(e, Decided)), None)
        if decided is not None or any(isinstance(e, CountdownStarted) for e in events):
            # on the to-do list before the log says it runs: a crash between leaves only a lobby listed
            await self.call(self._redis.sadd(RUNNING, match_id))
            await self.replicated(RUNNING)
        mover = events[0].seat if rebase and isinstance(events[0], Moved) else -1
        args: list[Any] = [expected_ev, len(events), FINISHED_TTL_S, int(rebase), mover, UNDECIDED_TTL_S]
        args.append(CALLED_OFF_TTL_S)
        for e in events:
            args += _args(e)
        ok, shift = await self.call(self.script(self._append, keys, args))
        if ok != 1:  # shift is then the log's last ev
            raise Conflict(match_id, behind=ok == -2 or int(shift) < expected_ev)
        await self.replicated(keys[0])
        if decided is not None:
            await self._follow_up_or_later(decided.result)
        return int(shift)

    async def _follow_up_or_later(self, result: Result) -> None:
        """The decision stands whatever happens here: what does not land now, ``running`` lands later."""
        try:
            await self._follow_up(result)
        except (StoreUnavailable, RedisError) as exc:
            log.warning(
                "match %s: its follow-ups wait for the next look at the running list: %s", result.match, exc
            )

    async def _follow_up(self, result: Result) -> None:
        """Everything a decision writes outside its match's slot, each step idempotent; then off the list."""
        for seat in result.seats:
            if seat.player is not None:
                await self._fold_in(seat.player, result)
        rows = board_rows(result)
        if rows and result.daily:
            key = daily_key(result.daily)
            async with self._redis.pipeline(transaction=False) as pipe:
                for r in rows:
                    pipe.zadd(f"{key}:board", {r.player: r.score * BOARD_SCALE + r.time_ms})
                    pipe.hset(f"{key}:entries", r.player, json.dumps(asdict(r)))
                await self.call(pipe.execute())
            await self.replicated(key)
            await self.call(self._redis.zadd(DAYS, {result.daily: 0}))
            await self.replicated(DAYS)
        await self.call(self._redis.zadd(RESULTS, {result.match: result.decided_at}))
        await self.replicated(RESULTS)
        if ratings.is_rated(result):
            await self._shared.rate(result)
        await self._shared.unlist(result.match)
        await self._off_the_list(result.match)

    async def _off_the_list(self, match_id: str) -> None:
        """The last step: every follow-up of the match's decision has landed."""
        await self.call(self._redis.srem(RUNNING, match_id))
        await self.replicated(RUNNING)

    async def _fold_in(self, player: str, result: Result) -> None:
        """Enter the result in the player's index and fold it into their totals, unless it is there."""
        keys = player_keys(player)
        for _ in range(FOLD_ATTEMPTS):
            totals = await self.totals(player)
            folded = totals.model_copy(deep=True)
            folded.add(result, player)
            args: list[Any] = [totals.games, folded.model_dump_json(), result.decided_at, result.match]
            if await self.call(self.script(self._fold, keys, args)):
                await self.replicated(keys[0])
                return
        raise StoreUnavailable(f"the totals of {player} kept changing")

    async def totals(self, player: str) -> Totals:
        raw = await self.call(self._redis.get(player_keys(player)[1]))
        if raw is None:
            return await self._fold_legacy_results(player)
        return Totals.model_validate_json(raw)

    async def _fold_legacy_results(self, player: str) -> Totals:
        """A player of an earlier version: their index had no totals beside it (nor their tag).

        Its results are folded, entered in the new index, and the old one
        removed; by the FOLD script, so that a decision meanwhile (it folds
        into the totals read first) is not lost, and two processes doing
        this at once do it once.
        """
        legacy = f"grip:player:{player}:results"
        for _ in range(FOLD_ATTEMPTS):
            entries = await self.call(self._redis.zrange(legacy, 0, -1, withscores=True))
            results = await self._results([m.decode() for m, _ in entries])
            if not results:
                return Totals()
            totals = fold(player, results)
            args: list[Any] = [0, totals.model_dump_json()]
            for r in results:
                args += [r.decided_at, r.match]
            if await self.call(self.script(self._fold, player_keys(player), args)):
                await self.call(self._redis.delete(legacy))
                raw = await self.call(self._redis.get(player_keys(player)[1]))
                return totals if raw is None else Totals.model_validate_json(raw)
        raise StoreUnavailable(f"the totals of {player} kept changing")

    async def _results(self, matches: Sequence[str]) -> list[Result]:
        """The stored results of these matches, in their order (those found)."""
        return [Result.model_validate_json(raw) for raw in await self._result_bodies(matches)]

    async def _result_bodies(self, matches: Sequence[str]) -> list[bytes]:
        if not matches:
            return []
        async with self._redis.pipeline(transaction=False) as pipe:
            for m in matches:
                pipe.get(match_keys(m)[2])
            raws = await self.call(pipe.execute())
        return [raw for raw in raws if raw is not None]

    async def confirm(self, match_id: str) -> None:
        await self.replicated(match_keys(match_id)[0])

    async def heartbeat(self, instance: str, ttl_ms: int) -> None:
        await self.call(self._redis.set(heartbeat_key(instance), 1, px=ttl_ms))

    async def alive(self, instances: Collection[str]) -> set[str]:
        names = sorted(instances)
        if not names:
            return set()
        found = await self.call(self._redis.mget([heartbeat_key(name) for name in names]))
        return {name for name, value in zip(names, found, strict=True) if value is not None}

    async def running(self) -> dict[str, tuple[str, ...]]:
        """With the seats' leases. Ids whose log has expired (every process died under it) leave
        the list; a decided one has its follow-ups run again; a lobby listed just before a
        countdown that never landed waits (it may still start)."""
        ids = sorted(m.decode() for m in await self.call(self._redis.smembers(RUNNING)))
        async with self._redis.pipeline(transaction=False) as pipe:
            for match_id in ids:
                keys = match_keys(match_id)
                pipe.exists(keys[0])
                pipe.hget(keys[1], "status")
                pipe.get(keys[5])
                pipe.get(keys[6])
            found = await self.call(pipe.execute())
        out: dict[str, tuple[str, ...]] = {}
        gone: list[str] = []
        for i, match_id in enumerate(ids):
            exists, status, *leases = found[4 * i : 4 * i + 4]
            if not exists:
                gone.append(match_id)
            elif status == b"decided":
                result = await self.result(match_id)
                if result is not None:
                    await self._follow_up_or_later(result)
            elif status in (b"countdown", b"started"):
                out[match_id] = tuple(lease.decode() for lease in leases if lease is not None)
        if gone:
            await self.call(self._redis.srem(RUNNING, *gone))
        return out

    async def forget_lobbies(self, opened_before: int) -> int:
        """Nothing to do: an undecided match's keys expire (``UNDECIDED_TTL_S``)."""
        return 0

    async def events(self, match_id: str, after: int = 0) -> list[Event]:
        entries = await self.call(self._redis.xrange(match_keys(match_id)[0], f"0-{after + 1}", "+"))
        return decode_events(b"[" + b",".join(fields[b"e"] for _, fields in entries) + b"]")

    async def has_log(self, match_id: str) -> bool:
        return bool(await self.call(self._redis.exists(match_keys(match_id)[0])))

    async def result(self, match_id: str) -> Result | None:
        raw = await self.call(self._redis.get(match_keys(match_id)[2]))
        return None if raw is None else Result.model_validate_json(raw)

    async def player(self, player_id: str) -> PlayerRecord | None:
        h = await self.call(self._redis.hgetall(f"grip:player:{_checked(player_id)}"))
        if not h:
            return None
        return PlayerRecord(player_id, h[b"key_hash"].decode(), h[b"name"].decode(), int(h[b"created_at"]))

    async def save_player(self, player: PlayerRecord) -> None:
        mapping = {"key_hash": player.key_hash, "name": player.name, "created_at": player.created_at}
        await self.call(self._redis.hset(f"grip:player:{_checked(player.id)}", mapping=mapping))  # type: ignore[arg-type]

    async def save_replay(self, match_id: str, day: str | None, body: bytes) -> None:
        kept = (day or "").encode() + b"\n" + body
        await self.call(self._redis.set(f"grip:replay:{{{match_id}}}", kept, ex=FINISHED_TTL_S))

    async def replay(self, match_id: str) -> tuple[str | None, bytes] | None:
        kept = await self.call(self._redis.get(f"grip:replay:{{{match_id}}}"))
        if kept is None:
            return None
        day, _, body = bytes(kept).partition(b"\n")
        return day.decode() or None, body

    async def setting(self, key: str, fresh: str | None = None) -> str | None:
        if fresh is not None:
            await self.call(self._redis.set(f"grip:setting:{key}", fresh, nx=True))
        stored = await self.call(self._redis.get(f"grip:setting:{key}"))
        return None if stored is None else str(stored.decode())

    async def claim_daily(self, day: str, player: str, match: str) -> tuple[str, bool]:
        taken = await self.call(self._redis.hsetnx(f"{daily_key(day)}:attempts", player, match))
        await self.replicated(daily_key(day))
        return await self.daily_attempt(day, player) or match, bool(taken)

    async def release_daily(self, day: str, player: str, match: str) -> None:
        await self.call(self._release(keys=[f"{daily_key(day)}:attempts"], args=[player, match]))
        await self.replicated(daily_key(day))

    async def daily_attempt(self, day: str, player: str) -> str | None:
        held = await self.call(self._redis.hget(f"{daily_key(day)}:attempts", player))
        return None if held is None else str(held.decode())

    async def leaderboard(self, day: str, player: str | None, limit: int = 100) -> DailyBoard:
        key = daily_key(day)
        players = await self.call(self._redis.zrange(f"{key}:board", 0, limit - 1))
        details = await self.call(self._redis.hmget(f"{key}:entries", players)) if players else []
        top = [BoardRow(**json.loads(d)) for d in details if d is not None]
        you = None
        if player is not None:
            mine = await self.call(self._redis.hget(f"{key}:entries", player))
            if mine is not None:
                row = BoardRow(**json.loads(mine))
                ahead = await self.call(
                    self._redis.zcount(f"{key}:board", "-inf", f"({row.score * BOARD_SCALE + row.time_ms}")
                )
                you = (int(ahead) + 1, row)
        async with self._redis.pipeline(transaction=False) as pipe:
            for score in range(97):
                pipe.zcount(f"{key}:board", score * BOARD_SCALE, (score + 1) * BOARD_SCALE - 1)
            counts = await self.call(pipe.execute())
        return DailyBoard(top, you, {score: int(n) for score, n in enumerate(counts) if n})

    async def daily_days(self, before: str, limit: int) -> list[tuple[str, int]]:
        days = [
            d.decode()
            for d in await self.call(self._redis.zrevrangebylex(DAYS, f"({before}", "-", start=0, num=limit))
        ]
        if not days:
            return []
        # One round trip for the days' sizes, not one each: ``days`` asks for up to 60.
        async with self._redis.pipeline(transaction=False) as pipe:
            for day in days:
                pipe.zcard(f"{daily_key(day)}:board")
            counts = await self.call(pipe.execute())
        return [(day, int(n)) for day, n in zip(days, counts, strict=True)]

    async def player_results(
        self, player: str, before: tuple[int, str] | None = None, limit: int | None = None
    ) -> list[Result]:
        return await self._results(await self._player_matches(player, before, limit))

    async def player_games(
        self, player: str, before: tuple[int, str] | None = None, limit: int | None = None
    ) -> list[ResultSummary]:
        bodies = await self._result_bodies(await self._player_matches(player, before, limit))
        return [ResultSummary.model_validate_json(raw) for raw in bodies]

    async def _player_matches(
        self, player: str, before: tuple[int, str] | None, limit: int | None
    ) -> list[str]:
        """The player's matches, newest first (``player_results``)."""
        await self.totals(player)  # a player of an earlier version: their index moves first
        key = player_keys(player)[0]
        top: int | str = "+inf"
        wanted = limit
        if before is not None:
            top = before[0]
            if wanted is not None:  # the entries at the cursor's very time may be on either side of it
                wanted += int(await self.call(self._redis.zcount(key, top, top)))
        if wanted is None:
            found = self._redis.zrevrangebyscore(key, top, "-inf", withscores=True)
        else:
            found = self._redis.zrevrangebyscore(key, top, "-inf", start=0, num=wanted, withscores=True)
        entries = await self.call(found)
        # newest first, ties by match id descending: the order of the SQLite store
        rows = sorted(((int(at), m.decode()) for m, at in entries), reverse=True)
        if before is not None:
            rows = [r for r in rows if r < before]
        return [m for _, m in rows[:limit]]

    async def ratings(self, player: str) -> dict[str, PlayerRating]:
        return await self._shared.ratings(player)

    async def rating_history(self, player: str, variant: str, limit: int) -> list[RatingPoint]:
        return await self._shared.history(player, variant, limit)

    async def rating_change(self, variant: str, match: str) -> Rated | None:
        return await self._shared.change(variant, match)

    async def rating_board(
        self, variant: str, start: int, limit: int, after: BoardKey | None = None
    ) -> BoardPage:
        return await self._shared.board(variant, start, limit, after)

    async def rating_rank(self, variant: str, player: str) -> int | None:
        return await self._shared.rank(variant, player)

    async def rating_log(self, variant: str) -> list[str]:
        return await self._shared.log(variant)

    async def queue_join(self, entry: QueueEntry) -> tuple[QueueEntry, QueueEntry | None]:
        return await self._shared.join(entry)

    async def queue_leave(self, player: str, conn: str) -> bool:
        return await self._shared.leave(player, conn)

    async def queue_entries(self, limit: int) -> list[QueueEntry]:
        return await self._shared.entries(limit)

    async def queue_places(self, players: Sequence[str]) -> dict[str, QueueEntry]:
        return await self._shared.places(players)

    async def queue_claim(self, pair: tuple[QueueEntry, QueueEntry], match: str) -> bool:
        return await self._shared.claim(pair, match)

    async def queue_paired(self, player: str) -> str | None:
        return await self._shared.paired(player)

    async def queue_lease(self, instance: str, ttl_ms: int) -> bool:
        return await self._shared.lease(instance, ttl_ms)

    async def list_races(self, races: Sequence[LiveRace], stale: Sequence[str] = ()) -> None:
        await self._shared.list_races(races, stale)

    async def live_races(self) -> list[bytes]:
        return await self._shared.live_races()

    async def live_top(self, depth: int, stale_before: int) -> LiveTop:
        return await self._shared.live_top(depth, stale_before)

    async def close(self) -> None:
        await self._redis.aclose()
