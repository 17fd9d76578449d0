"""The committed protocol schema and reference are current."""

from __future__ import annotations

import json
import subprocess
import sys
import typing
from pathlib import Path

from server import protocol as p

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_committed_schema_is_current() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "server.protocol", "schema"], capture_output=True, text=True, check=True
    ).stdout
    committed = (DOCS / "protocol.schema.json").read_text()
    assert json.loads(committed) == json.loads(out), (
        "docs/protocol.schema.json is stale: python -m server.protocol schema > docs/protocol.schema.json"
    )


def test_reference_names_every_message_and_error_code() -> None:
    text = (DOCS / "protocol.md").read_text()
    for kind in sorted(p.CLIENT_TYPES):
        assert f"`{kind}`" in text, kind
    for model in typing.get_args(typing.get_args(p.ServerMessage)[0]):
        for kind in typing.get_args(model.model_fields["type"].annotation):
            assert f"`{kind}`" in text, kind
    for code in p.ErrorCode:
        assert f"`{code.value}`" in text, code
