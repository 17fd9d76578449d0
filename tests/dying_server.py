"""``python -m server`` that kills itself (SIGKILL) between two steps of a decision's writes.

The Redis store writes a decision in steps: the match's own script (the
``decided`` event and the result), then its follow-ups in other slots (each
player's results and totals, the leaderboard, the results index), and last
takes the match off ``grip:running``. ``GRIP_DIE_AT`` says where to die:

- ``decided``: after the match's script, before any follow-up;
- ``first_player``: after the first player's totals;
- ``listed``: after every follow-up, with the match still listed.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from server.__main__ import main
from server.store.redis import RedisStore


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def die_at(step: str) -> None:
    if step == "decided":

        async def follow_up(self: RedisStore, result: Any) -> None:
            die()

        RedisStore._follow_up = follow_up  # type: ignore[method-assign]
    elif step == "first_player":
        fold_in = RedisStore._fold_in

        async def first_fold(self: RedisStore, player: str, result: Any) -> None:
            await fold_in(self, player, result)
            die()

        RedisStore._fold_in = first_fold  # type: ignore[method-assign]
    elif step == "listed":

        async def off_the_list(self: RedisStore, match_id: str) -> None:
            die()

        RedisStore._off_the_list = off_the_list  # type: ignore[method-assign]
    else:
        raise SystemExit(f"GRIP_DIE_AT: no step {step!r}")


if __name__ == "__main__":
    die_at(os.environ["GRIP_DIE_AT"])
    main()
