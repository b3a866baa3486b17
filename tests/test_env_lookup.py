"""A lookup imports only the plugin that owns its namespace; listing imports no env module (issue 46).

Plugins declare their env namespaces as entry points (group ``rolloutgym.envs``), read from
metadata before any plugin code runs. Each check runs in a fresh interpreter and reads
``sys.modules``. The third-party cases install real distributions the way pip lays them out:
a ``*.dist-info`` folder with ``entry_points.txt`` on ``sys.path`` (``PYTHONPATH``), one that
declares its namespace and one registered the old way (only a ``rolloutgym_envs`` hook).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ENV_MODULES = (
    "rolloutgym_benchmarks.rg",
    "rolloutgym_benchmarks.benchmarks",
    "rolloutgym_benchmarks.envs",
    "rolloutgym_benchmarks.mmath_envs",
    "rolloutgym_benchmarks.agentdojo_envs",
    "rolloutgym_benchmarks.ifeval_envs",
    "rolloutgym_benchmarks.scienceworld_envs",
    "rolloutgym_benchmarks.tau2_envs",
    "rolloutgym_benchmarks._extract",
)


def _modules_after(code: str, *, path: Path | None = None) -> dict[str, object]:
    """Run ``code`` (which sets ``result``) in a fresh interpreter; returns ``result`` and the imported modules."""
    env = dict(os.environ)
    env.pop("ROLLOUTGYM_PLUGINS", None)
    env.pop("ROLLOUTGYM_DISABLE_PLUGINS", None)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(path), env.get("PYTHONPATH")]))
    program = (
        "import json, sys\nresult = None\n"
        + textwrap.dedent(code)
        + "\nprint(json.dumps({'result': result, 'modules': sorted(sys.modules)}))\n"
    )
    completed = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _ours(modules: object) -> set[str]:
    return {name for name in modules if name.startswith("rolloutgym_benchmarks")}  # type: ignore[union-attr]


def test_a_toy_lookup_and_make_import_nothing_of_the_benchmarks_plugin_but_its_hook_module() -> None:
    found = _modules_after(
        """
        import rolloutgym
        from rolloutgym.registry import get_registry
        result = get_registry().resolve_env("toy/guess-v0").spec.id
        rolloutgym.make("toy/guess-v0")
        """
    )
    assert found["result"] == "toy/guess-v0"
    assert _ours(found["modules"]) <= {"rolloutgym_benchmarks", "rolloutgym_benchmarks.plugin"}, _ours(found["modules"])


def test_a_lookup_imports_only_its_namespace_and_listing_imports_no_env_module() -> None:
    found = _modules_after(
        """
        from rolloutgym.registry import get_registry
        registry = get_registry()
        result = [registry.resolve_env("rg/arithmetic").spec.id, len(registry.envs("tau2"))]
        """
    )
    assert found["result"] == ["rg/arithmetic-v0", 4]
    loaded = _ours(found["modules"])
    assert {"rolloutgym_benchmarks.specs", "rolloutgym_benchmarks._rg_catalogue"} <= loaded
    assert not {"rolloutgym_benchmarks._mmath_catalogue", "rolloutgym_benchmarks._scienceworld_catalogue"} & loaded
    assert not set(ENV_MODULES) & loaded
    listed = _modules_after(
        """
        from rolloutgym.registry import get_registry
        result = sorted({spec.namespace for spec in get_registry().envs()})
        """
    )
    assert {"bench", "rg", "agentdojo", "ifeval", "scienceworld", "tau2", "toy"} <= set(listed["result"])  # type: ignore[arg-type]
    assert not set(ENV_MODULES) & _ours(listed["modules"]), set(ENV_MODULES) & _ours(listed["modules"])


def _distribution(root: Path, name: str, entry_points: str, module: str, source: str) -> None:
    """A distribution laid out as pip installs it: the module and a dist-info folder with its entry points."""
    (root / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = root / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")


SPECS = """
    from rolloutgym_protocol import EnvSpec, hookimpl

    @hookimpl
    def rolloutgym_envs():
        return [EnvSpec(id="{namespace}/guess-v0", entry_point="rolloutgym.builtin.toy:GuessNumberEnv",
                        tasks="rolloutgym.builtin.toy:guess_tasks")]
    """


def test_third_party_plugins_declared_and_old_style_both_resolve(tmp_path: Path) -> None:
    _distribution(
        tmp_path,
        "declared-envs",
        "[rolloutgym.envs]\ndeclared = declared_specs:rolloutgym_envs\n",
        "declared_specs",
        SPECS.format(namespace="declared"),
    )
    old_style = SPECS.format(namespace="oldstyle")
    _distribution(tmp_path, "oldstyle-envs", "[rolloutgym]\noldstyle = oldstyle_plugin\n", "oldstyle_plugin", old_style)
    found = _modules_after(
        """
        from rolloutgym.registry import get_registry
        registry = get_registry()
        result = [registry.resolve_env("oldstyle/guess").spec.id, "declared_specs" in sys.modules]
        result.append(registry.resolve_env("declared/guess-v0").plugin.distribution)
        result.append(type(registry.make("declared/guess-v0", task=0)).__name__)
        """,
        path=tmp_path,
    )
    assert found["result"] == ["oldstyle/guess-v0", False, "declared-envs", "GuessNumberEnv"]


def test_a_namespace_registered_but_not_declared_still_resolves_and_is_named(tmp_path: Path) -> None:
    _distribution(
        tmp_path,
        "sloppy-envs",
        "[rolloutgym.envs]\nsloppy = sloppy_specs:rolloutgym_envs\n",
        "sloppy_specs",
        SPECS.format(namespace="other"),
    )
    found = _modules_after(
        """
        from rolloutgym.registry import get_registry
        registry = get_registry()
        entry = registry.resolve_env("other/guess-v0")
        result = [entry.spec.id, entry.plugin.warnings]
        """,
        path=tmp_path,
    )
    env_id, warnings = found["result"]  # type: ignore[misc]
    assert env_id == "other/guess-v0"
    assert any("other" in warning and "rolloutgym.envs" in warning for warning in warnings), warnings


def test_a_disabled_plugin_declares_nothing(tmp_path: Path) -> None:
    found = _modules_after(
        """
        import os
        os.environ["ROLLOUTGYM_DISABLE_PLUGINS"] = "benchmarks"
        from rolloutgym.registry import get_registry
        from rolloutgym_protocol.errors import EnvNotFound
        try:
            get_registry().resolve_env("rg/arithmetic-v0")
        except EnvNotFound as error:
            result = str(error)
        """
    )
    assert "disabled by ROLLOUTGYM_DISABLE_PLUGINS" in str(found["result"]), found["result"]
    assert "rolloutgym_benchmarks.specs" not in found["modules"]  # type: ignore[operator]
