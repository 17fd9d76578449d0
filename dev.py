#!/usr/bin/env python3
"""Bootstrap for every command the README shows: ``python3 dev.py COMMAND [options]``.

Only the standard library runs here: it makes ``.venv`` with the project and
its test tools installed (again only when ``pyproject.toml`` changed), then
hands over to the program inside it, so nothing has to be activated first.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PYTHON = VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")

#: Each command and what it runs in ``.venv`` (the options typed after it are added).
COMMANDS: dict[str, tuple[str, list[str]]] = {
    "serve": (
        "the server on http://127.0.0.1:8765/, and the game opened in a browser",
        ["-m", "server", "--open"],
    ),
    "test": ("the test suite (pytest options)", ["-m", "pytest"]),
    "server": ("python -m server: the server alone", ["-m", "server"]),
    "client": ("python -m client: play, watch, bots and statistics from a terminal", ["-m", "client"]),
    "engine": ("python -m server.engine: the rules engine's deal, play and solve", ["-m", "server.engine"]),
}


def usage() -> str:
    lines = ["usage: python3 dev.py COMMAND [options]"]
    lines += [f"  {name:<7} {what}" for name, (what, _) in COMMANDS.items()]
    lines.append("python3 dev.py COMMAND --help: that command's options (README.md says more)")
    return "\n".join(lines)


def ensure_venv() -> None:
    stamp = VENV / ".installed"
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == want and PYTHON.exists():
        return
    if not PYTHON.exists():
        print("creating .venv ...", flush=True)
        venv.create(VENV, with_pip=True)
    print("installing the project and its test tools into .venv ...", flush=True)
    pip = [str(PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "-e", f"{ROOT}[test]"], check=True)
    stamp.write_text(want)


def run(args: list[str]) -> int:
    """Run ``args`` to its end; its exit status.

    Ctrl-C reaches the program too (the terminal signals the whole process
    group), so here it only means waiting for the program to stop by itself.
    """
    with subprocess.Popen(args) as child:
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:
                continue


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(usage())
        return 0
    if not argv or argv[0] not in COMMANDS:
        unknown = f"python3 dev.py: no command {argv[0]!r}\n" if argv else ""
        print(unknown + usage(), file=sys.stderr)
        return 2
    try:
        ensure_venv()
    except KeyboardInterrupt:
        return 130
    os.chdir(ROOT)
    if argv[0] == "client":  # the commands it prints to type next: as the README's reader types them
        os.environ["DEVILS_GRIP_CLIENT"] = "python3 dev.py client"
    return run([str(PYTHON), *COMMANDS[argv[0]][1], *argv[1:]])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
