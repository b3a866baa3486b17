"""The registry: lookups, suggestions, allow/deny lists, broken plugins, Gymnasium interop."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import pytest
import rolloutgym as rg
from rolloutgym.errors import ConfigError, EnvNotFound, PolicyNotFound, SpecError, TaskNotFound
from rolloutgym.registry import Registry
from rolloutgym_protocol import EnvSpec, hookimpl


def test_make_by_index_id_and_default() -> None:
    first = rg.make("toy/guess-v0")
    by_index = rg.make("toy/guess-v0", task=3)
    by_id = rg.make("toy/guess-v0", task="guess-03")
    assert first.task.id == "guess-00"
    assert by_index.task == by_id.task
    assert by_id.rolloutgym_task_id == "guess-03"


def test_unversioned_id_resolves_to_newest() -> None:
    registry = Registry()

    class Extra:
        @staticmethod
        @hookimpl
        def rolloutgym_envs():
            return [
                EnvSpec(
                    id="toy/guess-v3",
                    entry_point="rolloutgym.builtin.toy:GuessNumberEnv",
                    tasks="rolloutgym.builtin.toy:guess_tasks",
                )
            ]

    registry.register(Extra, name="extra")
    assert registry.resolve_env("toy/guess").spec.id == "toy/guess-v3"
    assert registry.resolve_env("toy/guess-v0").spec.id == "toy/guess-v0"


def test_unknown_ids_get_suggestions() -> None:
    with pytest.raises(EnvNotFound, match=r"Did you mean .*'toy/guess-v0'") as raised:
        rg.make("toy/gues-v0")
    assert "Installed namespaces:" in str(raised.value)
    with pytest.raises(EnvNotFound, match=r"pip install \S*plugins/sql"):
        Registry(load_entry_points=False).resolve_env("sql/shop-v0")
    with pytest.raises(TaskNotFound, match="no task .guess-1.. Did you mean"):
        rg.make("toy/guess-v0", task="guess-1")
    with pytest.raises(TaskNotFound, match="30 tasks"):
        rg.make("toy/guess-v0", task=99)
    with pytest.raises(PolicyNotFound, match="Did you mean 'oracle'"):
        rg.make_policy("oracel")
    with pytest.raises(ConfigError, match="replay:RUN_FILE|replay:runs"):
        rg.make_policy("replay")


def test_load_returns_an_rl_dataset_of_a_split() -> None:
    dataset = rg.load("toy/arith-v0", split="test")
    assert len(dataset) == 8
    assert dataset.item_id(0) == dataset[0].id
    environment = dataset.make_env(dataset[0])
    observation, _ = environment.reset()
    assert dataset[0].question in observation[0]["content"]
    with pytest.raises(ConfigError, match="its splits are"):
        rg.load("toy/arith-v0", split="holdout")


def test_spec_validation() -> None:
    with pytest.raises(SpecError, match="namespace/name-v0"):
        EnvSpec(id="noslash", entry_point="a:b")
    with pytest.raises(SpecError, match="version suffix"):
        EnvSpec(id="toy/thing", entry_point="a:b")
    with pytest.raises(SpecError, match="package.module:attribute"):
        EnvSpec(id="toy/thing-v0", entry_point="not an entry point")


def test_a_hook_returning_garbage_is_reported_not_fatal() -> None:
    registry = Registry()

    class Bad:
        @staticmethod
        @hookimpl
        def rolloutgym_envs():
            return ["not a spec"]

    registry.register(Bad, name="bad-plugin")
    assert "toy/guess-v0" in registry.env_specs()
    failed = registry.failed_plugins()
    assert [info.name for info in failed] == ["bad-plugin"] and "expected EnvSpec" in failed[0].error


def test_gymnasium_make_after_one_call() -> None:
    ids = rg.register_gymnasium()
    assert "toy/guess-v0" in ids
    env = gym.make("toy/guess-v0", task=2, disable_env_checker=True)
    observation, _ = env.reset(seed=0)
    assert "guess tool" in observation[1]["content"]
    env.close()
    vector = gym.vector.SyncVectorEnv([lambda i=i: gym.make("toy/arith-v0", task=i) for i in range(2)])
    vector.close()


def _fake_distribution(root: Path, name: str, module_source: str, entry_name: str) -> None:
    module = name.replace("-", "_")
    (root / f"{module}.py").write_text(textwrap.dedent(module_source))
    dist = root / f"{module}-0.3.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.3.1\n")
    (dist / "entry_points.txt").write_text(f"[rolloutgym]\n{entry_name} = {module}\n")


def _run_cli(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, PYTHONPATH=str(root), **env)
    return subprocess.run(
        [sys.executable, "-m", "rolloutgym", *args], capture_output=True, text=True, env=environment, timeout=60
    )


def test_broken_plugin_is_reported_and_others_keep_working(tmp_path: Path) -> None:
    _fake_distribution(tmp_path, "rolloutgym-broken", "raise ImportError('needs libfoo >= 2')\n", "broken")
    listing = _run_cli(tmp_path, "list")
    assert listing.returncode == 0, listing.stderr
    assert "toy/guess-v0" in listing.stdout and "failed to load" in listing.stdout
    plugins = _run_cli(tmp_path, "plugins")
    assert "rolloutgym-broken" in plugins.stdout and "0.3.1" in plugins.stdout
    assert "ImportError: needs libfoo >= 2" in plugins.stdout
    run = _run_cli(tmp_path, "run", "toy/arith-v0", "--limit", "2", "-q", "-o", str(tmp_path / "run.jsonl"))
    assert run.returncode == 0, run.stderr


def test_allow_and_deny_lists(tmp_path: Path) -> None:
    _fake_distribution(
        tmp_path,
        "rolloutgym-extra",
        """
        from rolloutgym_protocol import EnvSpec, hookimpl

        @hookimpl
        def rolloutgym_envs():
            return [EnvSpec(id="extra/echo-v0", entry_point="rolloutgym.builtin.toy:ArithmeticEnv", description="x")]
        """,
        "extra",
    )
    assert "extra/echo-v0" in _run_cli(tmp_path, "list").stdout
    assert "extra/echo-v0" not in _run_cli(tmp_path, "list", ROLLOUTGYM_DISABLE_PLUGINS="extra").stdout
    allowed = _run_cli(tmp_path, "list", ROLLOUTGYM_PLUGINS="rolloutgym-extra")
    assert "extra/echo-v0" in allowed.stdout and "toy/guess-v0" in allowed.stdout  # the built-in plugin always loads
    assert "extra/echo-v0" not in _run_cli(tmp_path, "list", ROLLOUTGYM_PLUGINS="something-else").stdout


def test_listing_imports_nothing_heavy() -> None:
    heavy = [
        "playwright",
        "torch",
        "ray",
        "datasets",
        "openai",
        "duckdb",
        "transformers",
        "vllm",
        "tinker",
        "matplotlib",
    ]
    code = textwrap.dedent(
        f"""
        import sys, io, contextlib
        from rolloutgym.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["list"]) == 0
        print(sorted(name for name in {heavy!r} if name in sys.modules))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", f"listing imported heavy modules: {result.stdout}"


def test_pluggy_dispatches_and_a_misspelled_hook_is_named_not_fatal() -> None:
    registry = Registry(load_entry_points=False)

    class Misspelled:
        @staticmethod
        @hookimpl
        def rolloutgym_env():  # should be rolloutgym_envs
            return [EnvSpec(id="typo/never-v0", entry_point="rolloutgym.builtin.toy:ArithmeticEnv")]

        @staticmethod
        def rolloutgym_envs():  # not marked @hookimpl: pluggy does not call it
            return [EnvSpec(id="typo/unmarked-v0", entry_point="rolloutgym.builtin.toy:ArithmeticEnv")]

    registry.register(Misspelled, name="typo-plugin")
    assert registry.env_specs() == {}
    warnings = registry.unknown_hooks()["typo-plugin"]
    assert len(warnings) == 1 and "unknown hook 'rolloutgym_env'" in warnings[0] and "rolloutgym_envs" in warnings[0]
    assert registry.plugins[0].status == "loaded"


def test_a_module_function_named_like_a_hook_but_unmarked_is_named() -> None:
    """A plugin module's ``rolloutgym_envs`` without ``@hookimpl`` is never called: say so, as for a misspelling."""
    import types

    module = types.ModuleType("unmarked_plugin")
    exec(  # a real module namespace: functions defined in it carry its __module__
        "from rolloutgym_protocol import EnvSpec, hookimpl\n"
        "def rolloutgym_envs():\n"
        "    return [EnvSpec(id='typo/unmarked-v0', entry_point='rolloutgym.builtin.toy:ArithmeticEnv')]\n"
        "def rolloutgym_polices():\n"
        "    return []\n"
        "@hookimpl\n"
        "def rolloutgym_templates():\n"
        "    return []\n"
        "def rolloutgym_helper_not_a_hook_value():\n"
        "    return None\n",
        module.__dict__,
    )
    registry = Registry(load_entry_points=False)
    registry.register(module, name="unmarked")
    assert registry.env_specs() == {}
    warnings = registry.unknown_hooks()["unmarked"]
    assert any("'rolloutgym_envs' is named like a hook but not marked @hookimpl" in w for w in warnings), warnings
    assert any("'rolloutgym_polices'" in w and "rolloutgym_policies" in w for w in warnings), warnings
    assert not any("'rolloutgym_templates' is named" in w for w in warnings)  # marked: a real hook


def test_core_plugins_cannot_be_switched_off_by_an_allow_list(tmp_path: Path) -> None:
    """ROLLOUTGYM_PLUGINS=sql,workflow keeps the core's verifier primitives: workflow/refund-v0 still runs."""
    pytest.importorskip("rolloutgym_workflow")
    out = tmp_path / "refund.jsonl"
    completed = _run_cli(
        tmp_path,
        "run",
        "workflow/refund-v0",
        "--limit",
        "1",
        "-q",
        "-o",
        str(out),
        ROLLOUTGYM_PLUGINS="sql,workflow",
        ROLLOUTGYM_DISABLE_PLUGINS="builtin,verifiers,export,sandboxes",
    )
    assert completed.returncode == 0, completed.stderr
    assert "unknown primitive" not in completed.stderr
    plugins = _run_cli(tmp_path, "plugins", ROLLOUTGYM_PLUGINS="sql,workflow")
    for name in ("builtin", "verifiers", "export", "sandboxes"):
        assert name in plugins.stdout
    registry = Registry()
    assert {info.name for info in registry.plugins if info.core} == {"builtin", "verifiers", "export", "sandboxes"}
    assert "docker" in registry.sandbox_specs()


def test_run_with_a_custom_registry_uses_only_that_registry() -> None:
    custom = Registry(load_entry_points=False)
    with pytest.raises(EnvNotFound):
        rg.run("toy/arith-v0", policy="oracle", limit=1, registry=custom)
    custom.register(__import__("rolloutgym.builtin.plugin", fromlist=["plugin"]), name="toys")
    result = rg.run("toy/arith-v0", policy="oracle", limit=2, registry=custom)
    assert result.summary.pass_rate == 1.0


def test_a_plugin_adds_a_cli_command_through_rolloutgym_commands(tmp_path: Path) -> None:
    _fake_distribution(
        tmp_path,
        "rolloutgym-hello",
        """
        import typer
        from rolloutgym_protocol import hookimpl

        @hookimpl
        def rolloutgym_commands(cli):
            hello = typer.Typer(help="Say hello.")

            @hello.command("world")
            def world(name: str = "you") -> None:
                print(f"hello {name}")

            cli.add_typer(hello, name="hello")
        """,
        "hello",
    )
    completed = _run_cli(tmp_path, "hello", "world", "--name", "there")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "hello there"
    assert "hello" in _run_cli(tmp_path, "--help").stdout


def test_rolloutgym_plugins_names_a_misspelled_hook(tmp_path: Path) -> None:
    _fake_distribution(
        tmp_path,
        "rolloutgym-typo",
        """
        from rolloutgym_protocol import EnvSpec, hookimpl

        @hookimpl
        def rolloutgym_env():
            return [EnvSpec(id="typo/x-v0", entry_point="rolloutgym.builtin.toy:ArithmeticEnv")]
        """,
        "typo",
    )
    completed = _run_cli(tmp_path, "plugins")
    assert completed.returncode == 0, completed.stderr
    assert "unknown hook 'rolloutgym_env'" in completed.stdout and "rolloutgym_envs" in completed.stdout
    assert _run_cli(tmp_path, "list").returncode == 0
