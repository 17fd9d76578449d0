"""Two library clients in one match: the start of most client tests."""

from __future__ import annotations

from client import Client, connect
from server import protocol as p


async def seated_pair(
    url: str, deal: int = 1, a_url: str | None = None, version: p.Version = 2
) -> tuple[Client, Client]:
    """Ann (through ``a_url`` if given) creates the match, Bob joins it; both speak ``version``."""
    a = await connect(a_url or url, name="Ann", version=version)
    b = await connect(url, name="Bob", version=version)
    seated = await a.create(deal=deal)
    assert seated.seat == 0 and a.token == seated.token
    joined = await b.join(seated.match)
    assert joined.seat == 1 and b.match == seated.match
    return a, b


async def racing(
    url: str, deal: int = 12345, a_url: str | None = None, version: p.Version = 2
) -> tuple[Client, Client]:
    """Ann and Bob, seated and past the start."""
    a, b = await seated_pair(url, deal, a_url, version)
    await a.ready()
    await b.ready()
    await a.next_event(p.Start)
    await b.next_event(p.Start)
    return a, b


async def finish_both(a: Client, b: Client) -> p.Result:
    """Both finish; the result, once Bob has it; both clients closed."""
    await a.finish()
    await b.finish()
    result = await b.next_event(p.Result)
    await a.close()
    await b.close()
    return result
