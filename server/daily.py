"""The daily challenge: its deal, and every rule of it, in one place.

The deal: seed(day) = HMAC-SHA256(secret, "daily/v1/YYYY-MM-DD") in hex, by
UTC date. The server publishes commitment(seed) = SHA-256(seed) while the
day runs and the seed itself once it is over, so anyone can check that the
deal they played was fixed before the day began (``python -m server.daily
verify``).

The rules (docs/daily.md): one ranked attempt a day, claimed when its game
is created or joined; practice on the day's deal only after it; no watching
while the day runs; a ranked game ends with its day; its seed and replays
stay hidden until then.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import sys
from datetime import UTC, date, datetime, timedelta
from enum import Enum
from typing import overload

from .errors import ErrorCode, Refused
from .protocol import Result

DAY_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
DAY_MS = 86_400_000


def day_of(ms: int) -> str:
    """The UTC day (YYYY-MM-DD) of a server time in ms."""
    return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat()


def parse_day(text: str) -> date:
    """The date written YYYY-MM-DD; ValueError for anything else."""
    if not re.fullmatch(DAY_PATTERN, text):
        raise ValueError(f"{text!r} is not a day (YYYY-MM-DD)")
    return date.fromisoformat(text)


def is_over(day: str, now_ms: int) -> bool:
    """Whether the UTC day has ended, so its seed may be published."""
    return parse_day(day) < parse_day(day_of(now_ms))


def end_ms(day: str) -> int:
    """When the UTC day ends (ms): its seed is published then."""
    midnight = datetime.combine(parse_day(day) + timedelta(days=1), datetime.min.time(), UTC)
    return int(midnight.timestamp() * 1000)


def previous_day(day: str) -> str:
    return (parse_day(day) - timedelta(days=1)).isoformat()


def seed(secret: str, day: str) -> str:
    return hmac.new(secret.encode(), f"daily/v1/{day}".encode(), hashlib.sha256).hexdigest()


def commitment(day_seed: str) -> str:
    return hashlib.sha256(day_seed.encode()).hexdigest()


def verify(day_seed: str, published_commitment: str) -> bool:
    """Anyone's check of a past day: does the revealed seed match what was committed?"""
    return hmac.compare_digest(commitment(day_seed), published_commitment)


# ------------------------------------------------------------------ the rules
#
# Plain functions of the facts, each returning a decision or raising the
# refusal; ``server/handlers/daily.py`` reads the facts (the store, the hub)
# and carries the decisions out. docs/daily.md tells the story. The
# ``create`` message's own field checks (no seed with a daily, ``ranked``
# only for a daily) are in ``protocol.Create``.

#: The daily challenge's variant: everyone plays the same deal by the same rules.
VARIANT = "classic"


class Entry(Enum):
    """What taking a seat in a daily game asks of the player."""

    FREE = "free"  # nothing: not a daily game, or an unranked one of a day that is over
    RANKED = "ranked"  # it takes the player's one ranked attempt of the day
    AFTER_ATTEMPT = "after_attempt"  # unranked: only once the player's ranked attempt is over
    NAMED = "named"  # an identity only: a ranked race with no seat left to claim (the match refuses)


def player_of(player: str | None) -> str:
    """The player a daily game is played by: an identity is needed (``hello``)."""
    if player is None:
        raise Refused(ErrorCode.BAD_KEY, "say hello first: the daily challenge needs your player id")
    return player


def check_game(variant: str, bot: str | None) -> None:
    if variant != VARIANT or bot is not None:
        raise Refused(ErrorCode.NOT_ALLOWED, f"the daily challenge is {VARIANT}, against a person or alone")


def create_entry(day: str, attempt: str | None, ranked: bool | None) -> Entry:
    """A new daily game: ranked while the day's attempt is unused (unless asked not to); practice after.

    ``attempt``: the match holding the player's ranked attempt of ``day``, if any;
    ``ranked``: what the player asked (None: ranked if they can).
    """
    if attempt is None and ranked is not False:
        return Entry.RANKED
    if attempt is not None and ranked:
        raise _played(day)
    return Entry.AFTER_ATTEMPT


def join_entry(day: str | None, ranked: bool, open_lobby: bool, now: int) -> Entry:
    """A seat in someone's daily race: ranked, it takes the joiner's attempt; unranked, it comes after it.

    Otherwise an unranked race would show the day's deal to someone whose
    ranked attempt is still to come. ``open_lobby``: the race has not started
    and has a free seat (else the join is refused by the match itself).
    """
    if day is None or (not ranked and is_over(day, now)):
        return Entry.FREE
    if not ranked:
        return Entry.AFTER_ATTEMPT
    return Entry.RANKED if open_lobby else Entry.NAMED


def check_claim(day: str, holder: str, match: str) -> None:
    """After claiming the day's attempt for ``match``: ``holder`` is the match that holds it."""
    if holder != match:
        raise _played(day)


def check_after_attempt(attempt: str | None, over: bool) -> None:
    """Refuse unranked play of the day's deal until the player's ranked attempt is over.

    Claiming the attempt is not enough: its lobby may wait half an hour
    and its game run for the time limit, and a practice game (hints,
    undo) beside it would rehearse the very deal it is played on.
    ``over``: nothing in the attempt's match can change the player's score
    (or it has expired).
    """
    if attempt is None:
        raise Refused(ErrorCode.NOT_ALLOWED, "play your ranked attempt first; practice comes after")
    if not over:
        raise Refused(
            ErrorCode.NOT_ALLOWED,
            f"finish your ranked attempt (match {attempt}) first; practice comes after",
        )


def check_watch(day: str | None, now: int) -> None:
    """A daily game is not watched while its day runs: the watcher could be next to play that deal."""
    if day and not is_over(day, now):
        raise Refused(
            ErrorCode.NOT_ALLOWED,
            "daily games cannot be watched while their day runs; replays open when it is over",
        )


def check_hint(day: str | None, now: int) -> None:
    """No solver hints on a daily deal while its day runs: whoever asked could pass its play on."""
    if day is not None and not is_over(day, now):
        raise Refused(ErrorCode.NOT_YET, f"hints on the {day} daily's deal open when that day is over")


def check_replay(day: str | None, now: int) -> None:
    if day is not None and not is_over(day, now):
        raise Refused(ErrorCode.NOT_YET, f"replays of the {day} daily open when that day is over")


def check_leaderboard(day: str, now: int) -> None:
    try:
        parse_day(day)
    except ValueError:
        raise Refused(ErrorCode.BAD_MESSAGE, f"{day!r} is not a calendar day") from None
    if day > day_of(now):
        raise Refused(ErrorCode.NOT_YET, f"the {day} daily has not begun")


def game_end(day: str | None, ranked: bool) -> int | None:
    """When a ranked daily game must be over: its seed is published as its day ends."""
    return end_ms(day) if ranked and day is not None else None


def check_ready(day: str | None, ranked: bool, now: int) -> None:
    """A ranked daily game starts only on its day."""
    end = game_end(day, ranked)
    if end is not None and now >= end:
        raise Refused(ErrorCode.WRONG_PHASE, "this daily challenge's day is over: its seed is public now")


@overload
def public_result(result: Result, now: int) -> Result: ...
@overload
def public_result(result: None, now: int) -> None: ...


def public_result(result: Result | None, now: int) -> Result | None:
    """A result as it may be shown at ``now``: a daily deal's seed stays secret until its day is over."""
    if result is None or result.daily is None or is_over(result.daily, now):
        return result
    return result.model_copy(update={"seed": None})


def _played(day: str) -> Refused:
    return Refused(ErrorCode.ALREADY_PLAYED, f"you have played the {day} daily; replays open tomorrow")


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] != "verify":
        print("usage: python -m server.daily verify SEED COMMITMENT", file=sys.stderr)
        return 2
    published = argv[2]
    if not re.fullmatch(r"[0-9a-fA-F]{64}", published):
        print(f"{published!r} is not a commitment: one is 64 hex digits (a SHA-256)", file=sys.stderr)
        return 2
    ok = verify(argv[1], published.lower())
    print("ok: the seed matches its commitment" if ok else "MISMATCH: this seed was not the one committed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
