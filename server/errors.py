"""Every exception of the server, under one root, and the error codes a client can get.

A command the server will not carry out raises ``Refused`` with one of the
codes of docs/protocol.md ("Errors"): the dispatcher sends it back as an
``error`` (or a ``rejected`` for a move), wherever it was raised, the match,
the hub, the daily rules or a handler. A store that does not answer is a
``Refused`` too (``unavailable``): a handler lets it pass, and the client is
told to try again.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Every error a client can get; the message beside it is for people."""

    BAD_JSON = "bad_json"
    BAD_MESSAGE = "bad_message"
    UNKNOWN_TYPE = "unknown_type"
    NOT_FOUND = "not_found"
    FULL = "full"
    BAD_TOKEN = "bad_token"
    WRONG_PHASE = "wrong_phase"
    NOT_ALLOWED = "not_allowed"
    ILLEGAL = "illegal"
    OUT_OF_ORDER = "out_of_order"
    RATE_LIMITED = "rate_limited"
    TOO_LARGE = "too_large"
    UNAVAILABLE = "unavailable"
    TAKEN_OVER = "taken_over"
    BAD_KEY = "bad_key"
    ALREADY_PLAYED = "already_played"
    NOT_YET = "not_yet"
    CORRUPT = "corrupt"


class GripError(Exception):
    """The root of the server's own exceptions."""


class Refused(GripError):
    """A command the server refuses: ``code`` says which kind of no, ``message`` says it to a person."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class StoreUnavailable(Refused):
    """The store cannot be reached now; nothing was written. ``detail`` is the backend's own words."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(ErrorCode.UNAVAILABLE, "the store is unavailable; try again")
        self.detail = detail


class Conflict(GripError):
    """The log already has an event at the ``ev`` we tried: catch up and decide again.

    ``behind``: the log ends *before* that ``ev`` instead. The store lost events
    the writer has applied (Redis restarted from an older snapshot, its keys
    removed): no catching up mends that, the writer must reload
    (``server/recovery.py``).
    """

    def __init__(self, match_id: str, *, behind: bool = False) -> None:
        super().__init__(match_id)
        self.behind = behind
