"""The cross-check's recorded games, made once per test session and shared by both client engines' tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from crosscheck import records

from server.engine import VARIANTS

POSITIONS = 10_000  # per variant: the floor the issue sets for the cross-check


@pytest.fixture(scope="session")
def crosscheck_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of ``records-<variant>.json``, each holding at least POSITIONS positions, and
    ``variants.json`` naming them."""
    folder = tmp_path_factory.mktemp("crosscheck")
    (folder / "variants.json").write_text(json.dumps(list(VARIANTS)))
    for variant in VARIANTS:
        (folder / f"records-{variant}.json").write_text(json.dumps(list(records(variant, POSITIONS))))
    return folder
