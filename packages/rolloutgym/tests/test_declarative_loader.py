"""Env files: loading .py/.json/.jsonl, picking by slug, compiling through a template plugin."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from rolloutgym.declarative import EnvFileError, load_env_file, resolve_env_file
from rolloutgym.registry import Registry
from rolloutgym_protocol import TemplateSpec, hookimpl
from rolloutgym_protocol.errors import TemplateNotFound

# A template plugin written the way a third party would: a module with a compile function.
ECHO_TEMPLATE = """
from rolloutgym_protocol import SingleTurnEnv, Score, spaces

class EchoEnv(SingleTurnEnv):
    def __init__(self, task, greeting="hello"):
        self.task, self.greeting = task, greeting
        self.observation_space = spaces.text.text()
        self.action_space = spaces.text.text()

    def initial_observation(self, *, options):
        return f"{self.greeting}: {self.task.instruction}", {}

    def evaluate(self, action):
        return Score(float(action == self.task.reference_answer))

    def oracle_action(self):
        return self.task.reference_answer

def compile_echo(environment):
    def factory(task, **kwargs):
        return EchoEnv(task, **kwargs)
    factory.environment = environment
    return factory
"""


class EchoPlugin:
    @hookimpl
    def rolloutgym_templates(self):
        return [TemplateSpec("echo", "echo_template_for_tests:compile_echo")]


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "echo_template_for_tests.py").write_text(ECHO_TEMPLATE)
    monkeypatch.syspath_prepend(str(tmp_path / "plugin"))
    registry = Registry()
    registry.register(EchoPlugin(), name="echo-test")
    return registry


PY_ENV = """
from rolloutgym.declarative import Environment, Task

first = Environment(slug="first", name="First", template="echo", config={"anything": 1},
                    tasks=[Task(instruction="say hi", reference_answer="hi", split="train"),
                           Task(instruction="say yo", reference_answer="yo", id="yo")])
second = Environment(slug="second", name="Second", template="echo", config={}, tasks=[Task(instruction="x")])
"""


def test_python_env_file_resolves_to_a_runnable_env(tmp_path: Path, registry: Registry):
    path = tmp_path / "envs.py"
    path.write_text(PY_ENV)
    with pytest.raises(
        EnvFileError, match=r"defines 2 environments \(first, second\); pick one with --env-arg slug=SLUG"
    ):
        resolve_env_file(path, registry=registry)
    with pytest.raises(EnvFileError, match="no environment with slug 'frist'. Did you mean 'first'"):
        resolve_env_file(path, registry=registry, slug="frist")
    resolved = resolve_env_file(path, registry=registry, slug="first", greeting="hey")
    assert resolved.env_id == "file/first-v0"
    assert resolved.source == f"file:{path}"
    assert [task.id for task in resolved.tasks] == ["0", "yo"]
    environment = resolved.make(resolved.tasks[0])
    observation, _ = environment.reset()
    assert observation == "hey: say hi"
    assert environment.step("hi")[1] == 1.0


def test_json_and_jsonl_env_files(tmp_path: Path, registry: Registry):
    payload = {
        "slug": "j",
        "name": "J",
        "template": "echo",
        "config": {},
        "tasks": [{"instruction": "a", "referenceAnswer": "a"}],
    }
    (tmp_path / "env.json").write_text(json.dumps(payload))
    assert resolve_env_file(tmp_path / "env.json", registry=registry).env_id == "file/j-v0"
    (tmp_path / "many.jsonl").write_text(
        json.dumps(payload) + "\n" + json.dumps({**payload, "slug": "k", "version": 2}) + "\n"
    )
    assert resolve_env_file(tmp_path / "many.jsonl", registry=registry, slug="k").env_id == "file/k-v2"
    # A tasks file runs against the env file with the same stem.
    (tmp_path / "env.jsonl").write_text(
        '{"instruction": "b", "reference_answer": "b", "split": "test"}\n{"instruction": "c"}\n'
    )
    resolved = resolve_env_file(tmp_path / "env.jsonl", registry=registry)
    assert [task.instruction for task in resolved.tasks] == ["b", "c"]
    (tmp_path / "lonely.jsonl").write_text('{"instruction": "b"}\n')
    with pytest.raises(EnvFileError, match="is a tasks file"):
        resolve_env_file(tmp_path / "lonely.jsonl", registry=registry)
    assert (
        len(resolve_env_file(tmp_path / "lonely.jsonl", registry=registry, env=str(tmp_path / "env.json")).tasks) == 1
    )


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "broken.py",
            "from rolloutgym.declarative import Environment\nenv = Environment(\n",
            r"broken.py:\d+: syntax error",
        ),
        (
            "raises.py",
            "x = 1\nraise RuntimeError('boom')\n",
            r"raises.py:2: importing the env file raised RuntimeError: boom",
        ),
        ("empty.py", "x = 1\n", "defines no Environment"),
        (
            "badsplit.py",
            "from rolloutgym.declarative import Environment, Task\nenv = Environment(slug='s', name='S', "
            "template='echo', config={}, tasks=[Task(instruction='x', split='holdout')])\n",
            r"badsplit.py:2: .*unknown split 'holdout'",
        ),
        (
            "bad.json",
            '{"slug": "s", "name": "S", "template": "echo", "config": {}, "tasks": [',
            r"bad.json:1: not valid JSON",
        ),
        ("deep.json", "[" * 100_000 + "]" * 100_000, "nests too deeply|not valid JSON"),
        (
            "typo.json",
            '{"slug": "s", "name": "S", "templat": "echo", "config": {}}',
            "unknown field.*'templat'.*Did you mean 'template'",
        ),
        (
            "tasks.json",
            '{"slug": "s", "name": "S", "template": "echo", "config": {}, "tasks": [{"instrucion": "x"}]}',
            r"tasks\[0\]: unknown task field",
        ),
        ("env.yaml", "slug: s", "unknown extension '.yaml'"),
    ],
)
def test_malformed_env_files_give_clear_errors(
    tmp_path: Path, registry: Registry, name: str, content: str, message: str
):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(EnvFileError, match=message):
        resolve_env_file(path, registry=registry)


def test_missing_file_unknown_template_and_no_tasks(tmp_path: Path, registry: Registry):
    with pytest.raises(EnvFileError, match="does not exist"):
        load_env_file(tmp_path / "nope.py")
    path = tmp_path / "sql_env.json"
    path.write_text(
        json.dumps(
            {
                "slug": "s",
                "name": "S",
                "template": "sql",
                "schema": "CREATE TABLE t(x INT)",
                "tasks": [{"instruction": "x"}],
            }
        )
    )
    bare = Registry(load_entry_points=False)
    with pytest.raises(TemplateNotFound, match=r"template 'sql'.*pip install \S*plugins/sql"):
        resolve_env_file(path, registry=bare)
    path.write_text(json.dumps({"slug": "s", "name": "S", "template": "echo", "config": {}}))
    with pytest.raises(EnvFileError, match="has no tasks"):
        resolve_env_file(path, registry=registry)


def test_verifier_errors_surface_when_loading(tmp_path: Path, registry: Registry):
    path = tmp_path / "verified.py"
    path.write_text(
        textwrap.dedent("""
        from rolloutgym.declarative import Environment, Task, primitive, verifier_config
        env = Environment(slug="v", name="V", template="echo", config={}, tasks=[Task(instruction="x")])
        env.verifier = verifier_config(primitive("check", "stat_match", expected={"a": 1}))
    """)
    )
    with pytest.raises(EnvFileError, match=r"verifier.primitives\[0\].type: unknown primitive type 'stat_match'"):
        resolve_env_file(path, registry=registry)
