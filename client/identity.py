"""The player's identity (id and key from ``welcome``), kept on this machine.

Daily attempts, statistics and head-to-head records follow the player id,
so the terminal client keeps it between runs, like the web page keeps it in
the browser. The key is a secret: the file is readable by its owner only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

DEFAULT_PATH = (
    Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "devils-grip" / "identity.json"
)


def load(path: Path) -> tuple[str, str] | None:
    """(player, key) from ``path``, or None if there is none (or it is unreadable)."""
    try:
        data = json.loads(path.read_text())
        return str(data["player"]), str(data["key"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save(path: Path, player: str, key: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump({"player": player, "key": key}, out)
