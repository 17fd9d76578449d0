"""The Redis store's ratings, quick-race queue and list of live races: data every process shares.

Each is global data, so each lives on one slot (one master of a cluster),
its keys sharing a hash tag, so that one script may change them together:

- ``grip:ratings:{ratings-V}:...`` for variant V: ``players`` (hash: player to
  rating JSON), ``log`` (zset: rated match to its place in the order applied),
  ``changes`` (hash: match to its ``rated`` message), ``board`` (zset: player
  to mu, once past the provisional races), ``history:<player>`` (list of
  rating points). A variant's rated races all go through its master: one
  small script per race.
- ``grip:quick:{quick}:...``: ``places`` (hash: player to queue place JSON),
  ``order`` (zset: player to the ``since`` of their place: a round reads the
  longest waiting only), ``paired:<player>`` (the quick race they were last paired into, 2 h),
  ``lease`` (the process pairing players). Every join, leave and pairing
  goes through one master: docs/deploy.md says what that costs.
- ``grip:live:{live-races}:...``: ``races`` (hash: match to its listing),
  ``newest``, ``closest`` and ``ends`` (zsets: each listed match by its place
  in that order, and by its race's end: a refresh reads the top of each
  order and the stale listings, not the hash), ``over`` (zset: decided
  matches of the last hour, so that a listing written late by a process that
  had not heard of the decision yet stays off).

Rating a race is a follow-up of its decision (``RedisStore._follow_up``): the
racers' ratings are read, the update computed here (``server/ratings.py``),
and the RATE script writes both only if the match is not applied yet and
neither rating changed since it was read (else: read again). So a race is
rated exactly once, even when two processes run its follow-ups at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, get_args

from redis.commands.core import AsyncScript

from .. import ratings
from ..errors import StoreUnavailable
from ..protocol import LiveRace, Rated, Result, VariantName, now_ms
from ..ratings import PlayerRating, RatingPoint
from ..redis_link import Client
from . import BoardKey, BoardPage, BoardPlace, LiveTop, QueueEntry, live_gap
from .waiting import kept_place

RATE_ATTEMPTS = 16  # a racer's rating changed by another race meanwhile: compute again
PAIRED_TTL_S = 2 * 3600  # longer than a quick race's lobby, countdown, longest clock and grace
OVER_KEPT_MS = 3600_000  # decided matches the list remembers, against late listings
QUICK_TAG = "{quick}"
LIVE_TAG = "{live-races}"
VARIANTS: tuple[str, ...] = get_args(VariantName)

#: KEYS players, log, board, history of a, history of b, changes. ARGV the match, then for
#: each racer: player, rating JSON as read ('' none), new JSON, board score ('' not on it),
#: history point; then the change. 1 done (now or before), 0 a rating changed meanwhile.
RATE = """
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 1 end
for i = 0, 1 do
  local cur = redis.call('HGET', KEYS[1], ARGV[2 + i * 5])
  if (cur or '') ~= ARGV[3 + i * 5] then return 0 end
end
for i = 0, 1 do
  local o = 2 + i * 5
  redis.call('HSET', KEYS[1], ARGV[o], ARGV[o + 2])
  if ARGV[o + 3] ~= '' then redis.call('ZADD', KEYS[3], ARGV[o + 3], ARGV[o]) end
  redis.call('RPUSH', KEYS[4 + i], ARGV[o + 4])
end
redis.call('ZADD', KEYS[2], redis.call('ZCARD', KEYS[2]) + 1, ARGV[1])
redis.call('HSET', KEYS[6], ARGV[1], ARGV[12])
return 1
"""

#: A page of a board just past a place (a cursor). KEYS board; ARGV the place's mu (as the
#: server wrote it) and player, and how many lines. The board's order is score descending, then
#: member descending (bytes, as Redis orders equal scores); the place's rank is found by ZCOUNT
#: and, among the members of exactly its score, by bisection: O(log N) whatever the depth.
#: Returns the rank (0-based) of the first line, the lines as ZREVRANGE WITHSCORES gives them,
#: and the board's size.
AFTER = """
local function below(a, b)  -- a < b byte by byte (Lua's own compares by the locale)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local lo = redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[1], '+inf')
local hi = redis.call('ZCOUNT', KEYS[1], ARGV[1], '+inf')
while lo < hi do
  local mid = math.floor((lo + hi) / 2)
  if below(redis.call('ZREVRANGE', KEYS[1], mid, mid)[1], ARGV[2]) then hi = mid else lo = mid + 1 end
end
local lines = redis.call('ZREVRANGE', KEYS[1], lo, lo + tonumber(ARGV[3]) - 1, 'WITHSCORES')
return {lo, lines, redis.call('ZCARD', KEYS[1])}
"""

#: Compare and swap queue places. KEYS places, order, then the paired keys of a claim. ARGV the
#: number of places, each as player, JSON expected ('' none), new ('' take out), its ``since``;
#: then the match of a claim. 1 done, 0 (nothing done) when a place is not as expected.
SWAP_PLACES = """
local n = tonumber(ARGV[1])
for i = 0, n - 1 do
  local cur = redis.call('HGET', KEYS[1], ARGV[2 + i * 4])
  if (cur or '') ~= ARGV[3 + i * 4] then return 0 end
end
for i = 0, n - 1 do
  local o = 2 + i * 4
  if ARGV[o + 2] == '' then
    redis.call('HDEL', KEYS[1], ARGV[o])
    redis.call('ZREM', KEYS[2], ARGV[o])
  else
    redis.call('HSET', KEYS[1], ARGV[o], ARGV[o + 2])
    redis.call('ZADD', KEYS[2], ARGV[o + 3], ARGV[o])
  end
end
for k = 3, #KEYS do redis.call('SET', KEYS[k], ARGV[2 + n * 4], 'EX', ARGV[3 + n * 4]) end
return 1
"""

#: The longest-waiting places. KEYS places, order; ARGV how many. An order that does not count
#: the places (a queue written by a version that kept none) is made again from them first.
WINDOW = """
if redis.call('ZCARD', KEYS[2]) ~= redis.call('HLEN', KEYS[1]) then
  redis.call('DEL', KEYS[2])
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do redis.call('ZADD', KEYS[2], cjson.decode(all[i + 1]).since, all[i]) end
end
local players = redis.call('ZRANGE', KEYS[2], 0, tonumber(ARGV[1]) - 1)
if #players == 0 then return {} end
return redis.call('HMGET', KEYS[1], unpack(players))
"""

LEASE = """
local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""

#: KEYS races, newest, closest, ends, over; ARGV for each race: match, JSON and its three scores
#: (``live_scores``): listed and indexed unless decided meanwhile.
LIST = """
for i = 1, #ARGV, 5 do
  if not redis.call('ZSCORE', KEYS[5], ARGV[i]) then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
    for k = 2, 4 do redis.call('ZADD', KEYS[k], ARGV[i + k], ARGV[i]) end
  end
end
return 1
"""

#: Races off the list and its indexes. KEYS races, newest, closest, ends, over; ARGV when they were
#: decided ('' for stale listings: not decided), the latest decision ``over`` lets go of, the matches.
UNLIST = """
local at = ARGV[1]
for i = 3, #ARGV do
  if at ~= '' then redis.call('ZADD', KEYS[5], at, ARGV[i]) end
  redis.call('HDEL', KEYS[1], ARGV[i])
  for k = 2, 4 do redis.call('ZREM', KEYS[k], ARGV[i]) end
end
if at ~= '' then redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', ARGV[2]) end
return 1
"""

#: The top of the list. KEYS races, newest, closest, ends; ARGV depth, stale_before. Every listing
#: ended before stale_before, and each order's first depth past them (as many more as there are
#: stale ones); returns the listings' count, their JSON, and whether the indexes count the listings
#: (0: written by a version that kept none; ``SharedData.reindex``).
TOP = """
local total = redis.call('HLEN', KEYS[1])
local found, seen = {}, {}
local function add(members)
  for _, m in ipairs(members) do
    if not seen[m] then seen[m] = true; found[#found + 1] = m end
  end
end
local stale = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[2])
add(stale)
local last = tonumber(ARGV[1]) + #stale - 1
add(redis.call('ZREVRANGE', KEYS[2], 0, last))
add(redis.call('ZREVRANGE', KEYS[3], 0, last))
local bodies = {}
for i = 1, #found, 1000 do  -- unpack takes a few thousand at most
  for _, b in ipairs(redis.call('HMGET', KEYS[1], unpack(found, i, math.min(i + 999, #found)))) do
    if b then bodies[#bodies + 1] = b end
  end
end
return {total, bodies, redis.call('ZCARD', KEYS[4]) == total and 1 or 0}
"""

#: Index listings the indexes miss. KEYS races, newest, closest, ends; ARGV for each listing:
#: match and its three scores (those taken off meanwhile are left out).
REINDEX = """
for i = 1, #ARGV, 4 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    for k = 2, 4 do redis.call('ZADD', KEYS[k], 'NX', ARGV[i + k - 1], ARGV[i]) end
  end
end
return 1
"""
#: Listings a script call indexes or takes off (``SharedData.reindex``): a few ms of the master each.
REINDEX_SLICE = 1000

#: A listing's start, in ms, fits in this many bits (until the year 2109), so that the ``closest``
#: score, ``live_gap`` above it, is an exact double (``live_scores``).
START_BITS = 42
#: The ``live_gap`` a score holds exactly: far above any variant's cards.
GAP_BITS = 53 - START_BITS


def rating_key(variant: str, part: str) -> str:
    return f"grip:ratings:{{ratings-{variant}}}:{part}"


def quick_key(part: str) -> str:
    return f"grip:quick:{QUICK_TAG}:{part}"


def live_key(part: str) -> str:
    return f"grip:live:{LIVE_TAG}:{part}"


#: The keys of the list of live races, as its scripts take them.
LIVE_KEYS = [live_key(part) for part in ("races", "newest", "closest", "ends")]


def live_scores(race: LiveRace) -> tuple[int, int, int]:
    """The race's scores in ``newest``, ``closest`` and ``ends``: each zset, read from its highest, has
    its order (``Store.live_top``), ties by match descending as Redis orders equal scores.

    ``closest`` is the gap above the start, in one score: lower gaps first, then
    the later start. Doubles are exact to 53 bits, so both must fit.
    """
    gap = live_gap(r.leftover for r in race.racers)
    if not (0 <= race.started_at < 1 << START_BITS and gap < 1 << GAP_BITS):
        raise ValueError(
            f"a listing out of the list's range: started at {race.started_at}, {gap} cards apart"
        )
    return race.started_at, race.started_at - (gap << START_BITS), race.ends_at


class Link(Protocol):
    """What this needs of the Redis store (``RedisStore``), which holds a ``SharedData``."""

    @property
    def client(self) -> Client: ...

    async def call(self, coro: Any) -> Any:
        """Await a command; no answer is ``StoreUnavailable``."""

    async def script(self, script: AsyncScript, keys: list[str], args: list[Any]) -> Any: ...

    async def replicated(self, key: str) -> None: ...


class SharedData:
    """What the Redis store keeps for every process at once (module docstring)."""

    def __init__(self, store: Link) -> None:
        self._store = store
        client = store.client
        self._rate = client.register_script(RATE)
        self._swap = client.register_script(SWAP_PLACES)
        self._window = client.register_script(WINDOW)
        self._lease = client.register_script(LEASE)
        self._list = client.register_script(LIST)
        self._unlist = client.register_script(UNLIST)
        self._top = client.register_script(TOP)
        self._reindex = client.register_script(REINDEX)
        self._after = client.register_script(AFTER)

    # ------------------------------------------------------------------ ratings

    async def rate(self, result: Result) -> None:
        """Apply a rated result to both racers' ratings, once (module docstring)."""
        s, v = self._store, result.variant
        players = ratings.rated_players(result)
        keys = [rating_key(v, k) for k in ("players", "log", "board")]
        keys += [rating_key(v, f"history:{pl}") for pl in players] + [rating_key(v, "changes")]
        for _ in range(RATE_ATTEMPTS):
            read = await s.call(s.client.hmget(keys[0], players))
            raw = ["" if r is None else r.decode() for r in read]
            before = {
                pl: PlayerRating.model_validate_json(r) for pl, r in zip(players, raw, strict=True) if r
            }
            after = ratings.update(result, before)
            args: list[Any] = [result.match]
            for pl, was in zip(players, raw, strict=True):
                new = after[pl]
                board = "" if new.provisional else repr(new.mu)
                point = ratings.point(result, new).model_dump_json()
                args += [pl, was, new.model_dump_json(), board, point]
            args.append(ratings.change(result, before, after).model_dump_json())
            if await s.call(s.script(self._rate, keys, args)):
                await s.replicated(keys[0])
                return
        raise StoreUnavailable(f"the ratings of {', '.join(players)} kept changing")

    async def ratings(self, player: str) -> dict[str, PlayerRating]:
        s = self._store
        async with s.client.pipeline(transaction=False) as pipe:
            for v in VARIANTS:
                pipe.hget(rating_key(v, "players"), player)
            found = await s.call(pipe.execute())
        return {v: PlayerRating.model_validate_json(r) for v, r in zip(VARIANTS, found, strict=True) if r}

    async def history(self, player: str, variant: str, limit: int) -> list[RatingPoint]:
        s = self._store
        raw = await s.call(s.client.lrange(rating_key(variant, f"history:{player}"), -limit, -1))
        return [RatingPoint.model_validate_json(r) for r in raw]

    async def change(self, variant: str, match: str) -> Rated | None:
        s = self._store
        raw = await s.call(s.client.hget(rating_key(variant, "changes"), match))
        return None if raw is None else Rated.model_validate_json(raw)

    async def board(self, variant: str, start: int, limit: int, after: BoardKey | None) -> BoardPage:
        """A sorted set's rank is a walk of its skip list: a page at any depth, or past any place, is
        O(log N) to find. The next page's place is the last line's score in the set, not its rating
        read after (which a race may have moved meanwhile)."""
        s, key = self._store, rating_key(variant, "board")
        if after is None:
            first = start
            async with s.client.pipeline(transaction=False) as pipe:
                pipe.zrevrange(key, start, start + limit, withscores=True)
                pipe.zcard(key)
                found, total = await s.call(pipe.execute())
        else:
            args = [repr(after[0]), after[1], limit + 1]
            first, flat, total = await s.call(s.script(self._after, [key], args))
            found = [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]
        lines = [(m.decode(), float(score)) for m, score in found]
        last = lines[limit - 1] if len(lines) > limit else None
        lines = lines[:limit]
        if not lines:
            return BoardPage([], total, None)
        players = [pl for pl, _ in lines]
        bodies = await s.call(s.client.hmget(rating_key(variant, "players"), players))
        async with s.client.pipeline(transaction=False) as pipe:
            for pl in players:
                pipe.hget(f"grip:player:{pl}", "name")
            names = await s.call(pipe.execute())
        places = [
            BoardPlace(
                first + i + 1, pl, name.decode() if name else "Player", PlayerRating.model_validate_json(r)
            )
            for i, (pl, r, name) in enumerate(zip(players, bodies, names, strict=True))
            if r is not None
        ]
        return BoardPage(places, total, None if last is None else (last[1], last[0]))

    async def rank(self, variant: str, player: str) -> int | None:
        s = self._store
        found = await s.call(s.client.zrevrank(rating_key(variant, "board"), player))
        return None if found is None else int(found) + 1

    async def log(self, variant: str) -> list[str]:
        s = self._store
        return [m.decode() for m in await s.call(s.client.zrange(rating_key(variant, "log"), 0, -1))]

    # ------------------------------------------------------------- quick races

    async def join(self, entry: QueueEntry) -> tuple[QueueEntry, QueueEntry | None]:
        s = self._store
        for _ in range(RATE_ATTEMPTS):
            raw = await s.call(s.client.hget(quick_key("places"), entry.player))
            previous = None if raw is None else QueueEntry.load(raw)
            stored = kept_place(entry, previous)
            was = "" if raw is None else raw.decode()
            if await self._swap_places([(entry.player, was, stored.dump(), stored.since)]):
                return stored, previous
        raise StoreUnavailable(f"the queue place of {entry.player} kept changing")

    async def leave(self, player: str, conn: str) -> bool:
        s = self._store
        for _ in range(RATE_ATTEMPTS):
            raw = await s.call(s.client.hget(quick_key("places"), player))
            if raw is None or QueueEntry.load(raw).conn != conn:
                return False
            if await self._swap_places([(player, raw.decode(), "", "")]):
                return True
        raise StoreUnavailable(f"the queue place of {player} kept changing")

    async def entries(self, limit: int) -> list[QueueEntry]:
        s = self._store
        found = await s.call(s.script(self._window, [quick_key("places"), quick_key("order")], [limit]))
        return [QueueEntry.load(raw) for raw in found if raw is not None]

    async def places(self, players: Sequence[str]) -> dict[str, QueueEntry]:
        if not players:
            return {}
        s = self._store
        found = await s.call(s.client.hmget(quick_key("places"), list(players)))
        return {p: QueueEntry.load(raw) for p, raw in zip(players, found, strict=True) if raw is not None}

    async def claim(self, pair: tuple[QueueEntry, QueueEntry], match: str) -> bool:
        swaps = [(e.player, e.dump(), "", "") for e in pair]
        return await self._swap_places(swaps, match, [quick_key(f"paired:{e.player}") for e in pair])

    async def paired(self, player: str) -> str | None:
        s = self._store
        raw = await s.call(s.client.get(quick_key(f"paired:{player}")))
        return None if raw is None else str(raw.decode())

    async def lease(self, instance: str, ttl_ms: int) -> bool:
        s = self._store
        return bool(await s.call(s.script(self._lease, [quick_key("lease")], [instance, ttl_ms])))

    async def _swap_places(
        self, swaps: Sequence[tuple[str, str, str, int | str]], match: str = "", paired: Sequence[str] = ()
    ) -> bool:
        s = self._store
        args: list[Any] = [len(swaps)]
        for swap in swaps:
            args += swap
        args += [match, PAIRED_TTL_S]
        keys = [quick_key("places"), quick_key("order"), *paired]
        done = bool(await s.call(s.script(self._swap, keys, args)))
        if done:
            await s.replicated(quick_key("places"))
        return done

    # -------------------------------------------------------------- live races

    async def list_races(self, races: Sequence[LiveRace], stale: Sequence[str]) -> None:
        s = self._store
        if stale:
            await s.call(s.script(self._unlist, [*LIVE_KEYS, live_key("over")], ["", "", *stale]))
        if not races:
            return
        args: list[Any] = []
        for r in races:
            args += [r.match, r.model_dump_json(), *live_scores(r)]
        await s.call(s.script(self._list, [*LIVE_KEYS, live_key("over")], args))

    async def unlist(self, match: str) -> None:
        """A decided race leaves the list and its indexes, and stays off it (``over``)."""
        s, now = self._store, now_ms()
        args = [now, now - OVER_KEPT_MS, match]
        await s.call(s.script(self._unlist, [*LIVE_KEYS, live_key("over")], args))
        await s.replicated(live_key("races"))

    async def live_races(self) -> list[bytes]:
        s = self._store
        values: list[bytes] = await s.call(s.client.hvals(live_key("races")))  # not HGETALL: half the reply
        return values

    async def live_top(self, depth: int, stale_before: int) -> LiveTop:
        """The top of the list (``TOP``); indexed first if the indexes do not count the listings."""
        s = self._store
        total, races, indexed = await s.call(s.script(self._top, LIVE_KEYS, [depth, stale_before]))
        if not indexed:
            await self.reindex()
            total, races, _ = await s.call(s.script(self._top, LIVE_KEYS, [depth, stale_before]))
        return LiveTop(races, total)

    async def reindex(self) -> None:
        """Index the listings a version that kept no indexes wrote; take off what they hold of races gone.

        Reads the whole list, as every refresh did before: once after an
        upgrade, and at each refresh while a process of the earlier version
        still writes. An index's race that is no longer listed was taken off
        by such a process (its decision, or stale), so it goes as a stale one.
        """
        s, keys = self._store, [*LIVE_KEYS, live_key("over")]
        listed = await s.call(s.client.hgetall(live_key("races")))
        args: list[Any] = []
        for body in listed.values():
            race = LiveRace.model_validate_json(body)
            args += [race.match, *live_scores(race)]
        for start in range(0, len(args), 4 * REINDEX_SLICE):
            await s.call(s.script(self._reindex, LIVE_KEYS, args[start : start + 4 * REINDEX_SLICE]))
        gone: set[bytes] = set()
        for key in LIVE_KEYS[1:]:
            gone.update(await s.call(s.client.zrange(key, 0, -1)))
        gone.difference_update(listed)
        off = sorted(gone)
        for start in range(0, len(off), REINDEX_SLICE):
            await s.call(s.script(self._unlist, keys, ["", "", *off[start : start + REINDEX_SLICE]]))
