"""The server's bot seat ("race a bot") acts on what it is sent, however late it comes back."""

from __future__ import annotations

from race import MakeAppT, client

from server import protocol as p
from server.bots import BotPeer


async def test_a_bot_that_resumes_after_the_human_readied_readies_too(make_app: MakeAppT) -> None:
    """As in a rematch, where the human may resume and ready before the bot has resumed."""
    app = await make_app()
    ann = await client(app)
    created = await ann.request({"type": "create", "seed": "5", "bot": "greedy"}, "created")
    lm = app.hub.live[created["match"]]
    bot = lm.seats[1]
    assert isinstance(bot, BotPeer)
    app.hub.detach(lm, bot)  # away: it misses the lobby that says Ann is ready
    await ann.send({"type": "ready"})
    while not lm.match.seat(0).ready:
        await ann.expect("lobby")
    assert not lm.match.seat(1).ready
    await bot._command(p.Resume(match=lm.match.id, token=bot._token))
    await ann.expect("countdown", timeout=10)
