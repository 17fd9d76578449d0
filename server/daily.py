"""The daily challenge's deal: secret until its day is over, checkable after.

seed(day) = HMAC-SHA256(secret, "daily/v1/YYYY-MM-DD") in hex, by UTC date.
The server publishes commitment(seed) = SHA-256(seed) while the day runs and
the seed itself once it is over, so anyone can check that the deal they
played was fixed before the day began (``python -m server.daily verify``).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import sys
from datetime import UTC, date, datetime, timedelta
from typing import overload

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


@overload
def public_result(result: Result, now: int) -> Result: ...
@overload
def public_result(result: None, now: int) -> None: ...


def public_result(result: Result | None, now: int) -> Result | None:
    """A result as it may be shown at ``now``: a daily deal's seed stays secret until its day is over."""
    if result is None or result.daily is None or is_over(result.daily, now):
        return result
    return result.model_copy(update={"seed": None})


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] != "verify":
        print("usage: python -m server.daily verify SEED COMMITMENT", file=sys.stderr)
        return 2
    ok = verify(argv[1], argv[2])
    print("ok: the seed matches its commitment" if ok else "MISMATCH: this seed was not the one committed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
