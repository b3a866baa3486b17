"""Check the platform's building on a fresh virtual environment (issue 46): the core installs without any
database package, ``rolloutgym platform serve`` then says in one line what to install, and after
``pip install ./packages/rolloutgym-platform`` the platform serves and its migrations run with the stock
``alembic`` CLI.

Run: ``python scripts/check_platform_install.py [--keep DIR]``. It needs the package index (or pip's cache) for
the third-party dependencies and takes a minute or more (two pip installs), so it is a script, not a test.
Prints each step and exits 1 at the first that does not hold.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def step(name: str, ok: bool, detail: object = "") -> None:
    print(f"{'ok  ' if ok else 'FAIL'} {name}" + (f": {detail}" if detail else ""), flush=True)
    if not ok:
        raise SystemExit(1)


def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_answers(bin_dir: Path, work: Path) -> None:
    """``rolloutgym platform serve`` starts on a fresh data folder and answers ``/api/health``."""
    port = free_port()
    command = [str(bin_dir / "rolloutgym"), "platform", "serve", "--data", str(work / "data"), "--port", str(port)]
    process = subprocess.Popen([*command, "--workers", "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2) as answer:
                    step("platform serve answers /api/health", answer.status == 200, json.loads(answer.read()))
                    return
            except OSError:
                time.sleep(0.5)
        step("platform serve answers /api/health", False, (process.stdout.read() if process.stdout else "")[-2000:])
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="build the venv in this folder and keep it (default: a temp one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="platform-install-") as temporary:
        work = (args.keep or Path(temporary)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        venv = work / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        bin_dir = venv / "bin"
        python = str(bin_dir / "python")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        core = run([*pip, "-e", str(ROOT / "protocol"), "-e", str(ROOT / "packages" / "rolloutgym")], env=env)
        step(
            "pip install ./protocol ./packages/rolloutgym",
            core.returncode == 0,
            core.returncode and core.stderr[-1000:],
        )
        for module in ("sqlalchemy", "alembic", "psycopg", "starlette", "uvicorn", "rolloutgym_platform"):
            found = run([python, "-c", f"import {module}"], env=env).returncode == 0
            step(f"the core alone has no {module}", not found)
        hint = run([str(bin_dir / "rolloutgym"), "platform", "serve", "--data", str(work / "data")], env=env, cwd=work)
        lines = hint.stderr.strip().splitlines()
        step(
            "platform serve without the distribution: one line naming the install",
            hint.returncode == 2
            and len(lines) == 1
            and "rolloutgym-platform" in lines[0]
            and "pip install" in lines[0],
            hint.stderr.strip(),
        )
        step("  and it made no data folder", not (work / "data").exists())
        platform = run([*pip, "-e", str(ROOT / "packages" / "rolloutgym-platform")], env=env)
        step(
            "pip install ./packages/rolloutgym-platform",
            platform.returncode == 0,
            platform.returncode and platform.stderr[-1000:],
        )
        ini = run([python, "-c", "import rolloutgym_platform.migrations as m; print(m.ALEMBIC_INI)"], env=env)
        migrate = run(
            [str(bin_dir / "alembic"), "-c", ini.stdout.strip(), "-x", f"data={work / 'data'}", "upgrade", "head"]
        )
        step(
            "alembic -c ALEMBIC_INI -x data=DIR upgrade head (stock CLI)",
            migrate.returncode == 0,
            migrate.stderr[-500:],
        )
        check = run([str(bin_dir / "alembic"), "-c", ini.stdout.strip(), "-x", f"data={work / 'data'}", "check"])
        step("alembic check: no drift between models and migrations", check.returncode == 0, check.stdout.strip())
        serve_answers(bin_dir, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
