"""One ``--redis URL`` for both shapes: a single Redis, or any node of a Redis Cluster.

``connect`` asks the node it is given whether cluster mode is on (``INFO
cluster``) and returns redis-py's client for that shape: ``Redis``, or
``RedisCluster``, which reads the slot map from the node, sends each command
to the master holding its keys' slot, and follows ``MOVED`` and ``ASK``
redirections (a slot migration, a failover) without the caller seeing them.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ClusterError, RedisError, SlotNotCoveredError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

Client = Redis | RedisCluster

#: A command gives up after 2 s without an answer; a connection after 1 s.
TIMEOUTS: dict[str, Any] = {"socket_timeout": 2, "socket_connect_timeout": 1}

#: What Redis raises when it cannot carry a command out now: its connection is down or
#: silent, a cluster has a slot without a master (a failover under way), or a slot is
#: between two masters (a migration that has moved some of a script's keys answers
#: TRYAGAIN, which redis-py retries for a while and then gives up on with a ClusterError).
#: Nothing was acknowledged; the caller answers "unavailable".
UNANSWERED: tuple[type[BaseException], ...] = (
    RedisConnectionError,
    RedisTimeoutError,
    ClusterError,  # ClusterDownError, MasterDownError, "TTL exhausted"
    SlotNotCoveredError,
    TryAgainError,
    OSError,
)


class RedisUnusable(Exception):
    """Redis cannot be used as asked (unreachable at start, too few replicas): the server exits."""


async def connect(url: str, *, replicas: int = 0, **options: Any) -> Client:
    """The client for whatever ``url`` points at; with ``replicas``, each master must have that many.

    A cluster without the replicas asked for would make every write wait
    for copies that cannot be made: better to say so at start.
    """
    probe = Redis.from_url(url, **TIMEOUTS)
    try:
        clustered = bool((await probe.info("cluster")).get("cluster_enabled"))
    except (RedisError, OSError) as exc:
        raise RedisUnusable(f"cannot reach Redis at {url}: {exc}") from None
    finally:
        await probe.aclose()
    client: Client
    if clustered:
        client = RedisCluster.from_url(url, retry=_cluster_retry(), **TIMEOUTS, **options)
        await client.initialize()
    else:
        client = Redis.from_url(url, **TIMEOUTS, **options)
    if replicas:
        short = {name: n for name, n in (await replica_counts(client)).items() if n < replicas}
        if short:
            await client.aclose()
            masters = ", ".join(f"{name} has {n}" for name, n in sorted(short.items()))
            raise RedisUnusable(
                f"--redis-replicas {replicas}: every master needs {replicas} replica(s), but {masters};"
                " add replicas or lower --redis-replicas"
            )
    return client


def _cluster_retry() -> Retry:
    """A command that finds its master gone tries again thrice, within about a second in all.

    redis-py's default (ten tries, backing off up to ten seconds) held a move
    near six seconds while a master failed over; a player is better told
    "unavailable, try again" at once. (Redirections are not retries: ``MOVED``
    and ``ASK`` are followed whatever this says.)
    """
    return Retry(ExponentialBackoff(cap=0.4, base=0.05), retries=3)


async def replica_counts(client: Client) -> dict[str, int]:
    """The replicas connected to each master, by the master's address."""
    if isinstance(client, RedisCluster):
        infos = await client.info("replication", target_nodes=RedisCluster.PRIMARIES)
        return {name: int(info["connected_slaves"]) for name, info in infos.items()}
    info = await client.info("replication")
    kwargs = client.connection_pool.connection_kwargs
    return {f"{kwargs.get('host')}:{kwargs.get('port')}": int(info["connected_slaves"])}


def hash_tag(key: str) -> str:
    """What Redis Cluster hashes of ``key``: the text in its first ``{...}``, else the whole key."""
    start = key.find("{")
    end = key.find("}", start + 1)
    return key[start + 1 : end] if start != -1 and end > start + 1 else key
