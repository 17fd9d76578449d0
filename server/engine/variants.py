"""The rule sets of RULES.md, "Variants": each a few switches on classic."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    columns: int = 8
    decks: int = 2
    redeals: int = 0
    free_swap: bool = False
    open_stock: bool = False
    wastes: int = 1
    suitless: bool = False

    @property
    def spots(self) -> int:
        return 3 * self.columns

    @property
    def cards(self) -> int:
        return 48 * self.decks


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("classic"),
        Variant("relaxed", redeals=1),
        Variant("free-swap", free_swap=True),
        Variant("single-deck", columns=4, decks=1),
        Variant("open", open_stock=True),
        Variant("three-waste", wastes=3),
        Variant("suitless", suitless=True),
    )
}


def describe() -> list[dict[str, Any]]:
    """Every rule set as data, with its card count: the web page's variant list (``GET /api/variants``)."""
    return [asdict(v) | {"cards": v.cards, "spots": v.spots} for v in VARIANTS.values()]


class UnknownVariant(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(f"unknown variant {name!r}; one of {', '.join(VARIANTS)}")
        self.name = name


def get_variant(name: str | Variant) -> Variant:
    if isinstance(name, Variant):
        return name
    try:
        return VARIANTS[name]
    except KeyError:
        raise UnknownVariant(name) from None
