#!/usr/bin/env python3
"""Bootstrap for the README's two commands: ``python3 dev.py serve`` and ``python3 dev.py test``.

Only the standard library runs here: it makes ``.venv`` with the project and
its test tools installed (again only when ``pyproject.toml`` changed), then
hands over to the server or to pytest inside it.
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


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("serve", "test"):
        print("usage: python3 dev.py serve [server options] | test [pytest options]", file=sys.stderr)
        return 2
    ensure_venv()
    command, rest = argv[0], argv[1:]
    if command == "serve":
        args = [str(PYTHON), "-m", "server", "--open", *rest]
    else:
        args = [str(PYTHON), "-m", "pytest", *rest]
    os.chdir(ROOT)
    return subprocess.call(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
