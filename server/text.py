"""Text a player chooses that others are shown: display names, and the seed text of a chosen deal.

What is removed, and why: markup characters (a name is shown in many
places; the page uses ``textContent``, other clients may not); Unicode's
"other" categories (controls, formats, unassigned): bidi overrides would let
a name read backwards across a leaderboard line, zero-width and soft-hyphen
characters make a name that shows as nothing or as someone else's (emoji
joined by a zero-width joiner fall apart: a small price); the letters and
marks that render as nothing (Hangul fillers, the Braille blank, variation
selectors with nothing to vary, the Khmer inherent vowels...), which are not
"other" and so passed; and marks stacked beyond ``MARKS_PER_LETTER`` on one
letter (text that spills over the lines around it). What is left must show
something: a letter, a digit, a punctuation mark or a symbol.
"""

from __future__ import annotations

import unicodedata

from .errors import ErrorCode, Refused

NAME_LENGTH = 24
MARKUP = frozenset("<>&\"'`")
# Default-ignorable code points outside the "other" categories, and blanks that are not spaces:
# they draw nothing, so a name of them alone shows as nothing.
INVISIBLE = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0"
    + "".join(map(chr, range(0xFE00, 0xFE10)))
    + "".join(map(chr, range(0xE0100, 0xE01F0)))
)
MARKS_PER_LETTER = 3  # enough for Vietnamese or Thai tone and vowel marks; "Zalgo" text stacks dozens


def _kept(text: str) -> str:
    """``text`` without markup, invisible characters, or marks stacked too high (NFC first)."""
    kept: list[str] = []
    marks = MARKS_PER_LETTER  # none may come before a letter
    for ch in unicodedata.normalize("NFC", text):
        category = unicodedata.category(ch)
        if ch in MARKUP or ch in INVISIBLE or category[0] == "C":
            continue
        if category[0] == "M":
            if marks >= MARKS_PER_LETTER:
                continue
            marks += 1
        else:
            marks = 0 if category[0] != "Z" else MARKS_PER_LETTER
        kept.append(ch)
    return " ".join("".join(kept).split())


def _shows_something(text: str) -> bool:
    return any(unicodedata.category(ch)[0] in "LNPS" for ch in text)


def clean_name(raw: str | None, fallback: str = "Player") -> str:
    """A display name that shows as something, at most ``NAME_LENGTH`` characters; else ``fallback``."""
    text = _kept(raw or "")[:NAME_LENGTH].rstrip()
    return text if _shows_something(text) else fallback


def clean_seed(raw: str) -> str:
    """The seed text of a chosen deal, cleaned like a name (others see it with the result).

    Refused (``bad_message``) when nothing visible is left: a deal chosen as
    "nothing" would be shown as nothing.
    """
    text = _kept(raw)
    if not _shows_something(text):
        raise Refused(ErrorCode.BAD_MESSAGE, "a seed must show something: letters, digits or symbols")
    return text
