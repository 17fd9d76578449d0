"""Allowances shared by every process on one Redis (or Redis Cluster): one token bucket per key there.

A bucket is the hash ``grip:limit:<name>:{<key>}`` (tokens ``t``, time of
the last take ``s`` in ms). The whole key is one hash tag, so in a cluster
each bucket lives on the master of its own slot, and they spread over the
masters. One script takes (or gives back) a token: it reads the time from
Redis (``TIME``), so the processes' clocks do not matter, and the bucket
expires once it would be full again (a new one starts full), so idle keys
vanish. The arithmetic is ``local.Bucket``'s.

**Redis away.** A take or a give-back Redis does not answer is done on
this process's own buckets instead (``local.Buckets``), and said once in
the log until Redis answers again: a process serves on, counting alone
(each process its own allowance, as before they were shared), rather
than refusing or stalling everyone while the store recovers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ..redis_link import UNANSWERED, Client
from .local import Buckets

log = logging.getLogger(__name__)

#: KEYS: the bucket. ARGV: rate (tokens a ms), burst, 1 to take (0: give back), the process clock's
#: offset from the wall clock in ms (0 in a server: see ``RedisLimits``). Returns the ms to wait, as text.
BUCKET = """
local rate, burst, take = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == '1'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000 + tonumber(ARGV[4])
local held = redis.call('HMGET', KEYS[1], 't', 's')
local tokens, stamp = tonumber(held[1]), tonumber(held[2])
if not take then
  if tokens == nil then return '0' end  -- expired: it was full, nothing to return
  tokens = math.min(tokens + 1, burst)
else
  if tokens == nil then tokens, stamp = burst, now end
  if now > stamp then tokens = math.min(tokens + (now - stamp) * rate, burst) end
  stamp = now
end
local wait = 0
if take and tokens >= 1 then
  tokens = tokens - 1
elseif take then
  wait = (1 - tokens) / rate
end
redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 's', string.format('%.17g', stamp))
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((burst - tokens) / rate)))
return string.format('%.17g', wait)
"""


class RedisLimits:
    """The shared ``Limiter``s of one process, on the store's Redis client.

    ``clock_ms`` is the process's clock (``App.clock``): its offset from the
    wall clock is added to Redis's time, which is none in a server (both read
    the same clock), and lets a test whose clock it moves on refill a bucket.
    """

    def __init__(self, client: Client, clock_ms: Callable[[], int]) -> None:
        self._script = client.register_script(BUCKET)
        self._clock_ms = clock_ms
        self.away = False  # Redis did not answer the last call: the local buckets count meanwhile

    def __call__(
        self, name: str, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> RedisBuckets:
        return RedisBuckets(self, name, rate, burst, Buckets(rate, burst, clock))

    async def run(self, key: str, rate: float, burst: int, take: bool) -> float | None:
        """The script on ``key``: the seconds to wait; None when Redis does not answer (said once)."""
        offset = self._clock_ms() - time.time() * 1000
        try:
            wait = await self._script(keys=[key], args=[rate / 1000, burst, int(take), offset])
        except UNANSWERED as exc:
            if not self.away:
                log.warning("Redis does not answer (%s): this process counts the allowances alone", exc)
            self.away = True
            return None
        if self.away:
            log.warning("Redis answers again: the allowances are shared again")
        self.away = False
        return float(wait) / 1000


class RedisBuckets:
    """One allowance, one bucket a key in Redis (``local`` while Redis does not answer)."""

    def __init__(self, limits: RedisLimits, name: str, rate: float, burst: int, local: Buckets) -> None:
        self._limits, self._name = limits, name
        self._rate, self._burst = rate, burst
        self._local = local

    def _key(self, key: str) -> str:
        return f"grip:limit:{self._name}:{{{key}}}"

    async def take(self, key: str) -> float:
        wait = await self._limits.run(self._key(key), self._rate, self._burst, take=True)
        return await self._local.take(key) if wait is None else wait

    async def give_back(self, key: str) -> None:
        if await self._limits.run(self._key(key), self._rate, self._burst, take=False) is None:
            await self._local.give_back(key)
