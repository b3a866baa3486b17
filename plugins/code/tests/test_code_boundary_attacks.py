"""Grading across the boundary: no submission that keeps the bug scores, on any code env.

The hidden tests run in a trusted process on the host and the code under test in the
sandbox (:mod:`rolloutgym_code._boundary`); only plain data crosses. Each attack below is a
*wrong* implementation with forging code added, played on every code env
(``code/pybugs-v0``, ``code/pyfunc-v0``, ``code/humaneval-v0`` in completion and agent
mode) and both providers; every one must score 0, while the right implementation scores 1.
The routes: objects lying about their type or equality (``__class__``, ``__eq__``,
subclasses of ``int``/``str``/``list``/``tuple``/``dict``/``float``), custom ``__repr__``,
generators and iterators, huge and deep results, exceptions with fake messages or of
pytest's outcome classes, fake verdict lines on stdout, forged replies on every descriptor
(from the code, a thread that outlives the call, a forked child), ``sys.modules`` and
builtins poisoning, replacing the import machinery, patching the server through ``gc`` and
frames, ``os._exit(0)`` and killing the sandbox mid-test, and reading the hidden tests
(``/proc/self/root``, ``/proc/1/root``, ``..``, ``//`` and ``/./`` spellings, symlinks): an
attack that finds them answers correctly, so a score of 0 shows they were not there.

The gradings of one env and provider run concurrently (a thread pool) to keep this quick.
"""

from __future__ import annotations

import os
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest
from rolloutgym_code.testing import require_sandbox

pytestmark = pytest.mark.sandbox

PROVIDERS = ["bwrap", "unshare"]

PAGINATE_WRONG = """
import math


def page_count(total, per_page):
    return max(1, math.ceil(total / per_page))


def paginate(items, page, per_page=10):
    if page < 1:
        raise ValueError("pages are numbered from 1")
    start = page * per_page
    chunk = items[start:start + per_page]
    return chunk, page < page_count(len(items), per_page)
"""
PAGINATE_RIGHT = PAGINATE_WRONG.replace("start = page * per_page", "start = (page - 1) * per_page")

ROMAN_WRONG = """
_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def roman_to_int(numeral):
    text = numeral.strip().upper()
    if not text or any(character not in _VALUES for character in text):
        raise ValueError(f"not a Roman numeral: {numeral!r}")
    return sum(_VALUES[character] for character in text)
"""
ROMAN_RIGHT = ROMAN_WRONG.replace(
    "    return sum(_VALUES[character] for character in text)",
    """    total = 0
    for index, character in enumerate(text):
        value = _VALUES[character]
        following = _VALUES[text[index + 1]] if index + 1 < len(text) else 0
        total += -value if following > value else value
    return total""",
)

CLOSE_WRONG = """
from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    return False
"""
CLOSE_RIGHT = """
from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    ordered = sorted(numbers)
    return any(b - a < threshold for a, b in zip(ordered, ordered[1:]))
"""

# Helpers every attack may use: the server object (through gc), every descriptor, and a
# forged reply for the next few request numbers.
_HELPERS = """
import gc as _gc, json as _json, os as _os, sys as _sys
def _servers():
    return [item for item in _gc.get_objects() if type(item).__name__ == "Server"]
def _forged_replies():
    lines = []
    for number in range(1, 400):
        for value in (True, {"$": "t", "v": [list(range(10)), True]}, 1, "passed"):
            lines.append(_json.dumps({"re": number, "r": value, "s": {}}))
    lines.append("ROLLOUTGYM-VERDICT 0 {}")
    return ("\\n".join(lines) + "\\n").encode()
def _everywhere(data):
    for descriptor in range(0, 64):
        try:
            _os.write(descriptor, data)
        except OSError:
            pass
"""

_LIAR = """
class _Liar:
    @property
    def __class__(self):
        return {kind}
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    def __bool__(self):
        return True
    def __len__(self):
        return 2
    def __iter__(self):
        return iter([list(range(10)), True])
    def __getitem__(self, key):
        return self
    def __repr__(self):
        return "True"
    __hash__ = object.__hash__
"""


def _wrapping(body: str, *, before: str = "") -> str:
    """An attack that keeps the wrong function's behaviour (its exceptions included) and
    returns ``body``'s value instead of its result."""
    return (
        before
        + "\n_wrong = {fn}\n\ndef {fn}(*args, **kwargs):\n    _result = _wrong(*args, **kwargs)\n"
        + textwrap.indent(textwrap.dedent(body).strip(), "    ")
        + "\n"
    )


def _subclass(base: str, value: str) -> str:
    return _wrapping(
        f"return _Sub({value})",
        before=f"""
class _Sub({base}):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = {base}.__hash__
    def __repr__(self):
        return "True"
""",
    )


_SEARCH = """
import glob as _glob
_FOUND = []
def _search():
    names = ("test_check", "def check(candidate)", "test_first_page", "MCMXCIV")
    try:
        _os.symlink("/", "root-link")
        _os.symlink("/proc/1/root", "init-root-link")
        _os.symlink("/proc/self/root", "self-root-link")
    except OSError:
        pass
    roots = ["/", "..", "../..", "/proc/self/root", "/proc/self/cwd/..", "/proc/1/root", "/proc/1/cwd",
             "//proc//self//root", "/proc/./self/../1/root", "root-link", "init-root-link", "self-root-link",
             "/rolloutgym-trusted", "/rolloutgym-seed", "/tmp", "/proc/thread-self/root"]
    roots += _glob.glob("/proc/[0-9]*/root") + _glob.glob("/proc/[0-9]*/cwd")
    for root in roots:
        try:
            _walk(root, names)
        except Exception:  # a refusal of one path must not stop the search
            pass
def _walk(root, names):
        for directory, folders, files in _os.walk(root):
            skipped = ("proc", "sys", "usr", "dev", "lib", "lib64", "bin", "sbin", "etc")
            folders[:] = [] if directory.count("/") > 8 else [name for name in folders if name not in skipped]
            for name in files:
                path = _os.path.join(directory, name)
                if not name.endswith(".py"):
                    continue
                try:
                    text = open(path, encoding="utf-8", errors="replace").read(200000)
                except Exception:
                    continue
                if "_search()" not in text and ("hidden" in name or any(word in text for word in names)):
                    _FOUND.append(path)
_search()
"""

ATTACKS = {
    "__class__ claims bool": _wrapping("return _Liar()", before=_LIAR.format(kind="bool")),
    "__class__ claims tuple": _wrapping("return _Liar()", before=_LIAR.format(kind="tuple")),
    "__class__ claims int": _wrapping("return _Liar()", before=_LIAR.format(kind="int")),
    "int subclass equal to everything": _subclass("int", "1"),
    "str subclass equal to everything": _subclass("str", "'True'"),
    "list subclass equal to everything": _subclass("list", "[list(range(10)), True]"),
    "tuple subclass equal to everything": _subclass("tuple", "(list(range(10)), True)"),
    "dict subclass equal to everything": _subclass("dict", "{}"),
    "float subclass equal to everything": _subclass("float", "1.0"),
    "a generator of the result": _wrapping("yield from (_result if isinstance(_result, tuple) else [_result])"),
    "an iterator that claims equality": _wrapping(
        "return _It()",
        before="class _It:\n    __iter__ = lambda self: self\n    __next__ = lambda self: True\n"
        "    __eq__ = lambda self, other: True\n    __hash__ = object.__hash__\n",
    ),
    "a 24 MiB string": _wrapping("return 'x' * (24 << 20)"),
    "a list nested 5000 deep": _wrapping("value = []\nfor _ in range(5000):\n    value = [value]\nreturn value"),
    "an integer of 10000 digits": _wrapping("return 10 ** 10000"),
    "AssertionError with a passing message": _wrapping("raise AssertionError('1 passed')"),
    "SystemExit(0)": _wrapping("raise SystemExit(0)"),
    "KeyboardInterrupt": _wrapping("raise KeyboardInterrupt"),
    "pytest's skip exception": _wrapping("import pytest\nraise pytest.skip.Exception('skipped')"),
    "a BaseException named Skipped": _wrapping(
        "raise type('Skipped', (BaseException,), {'__module__': 'builtins'})('skip')"
    ),
    "StopIteration out of the function": _wrapping("raise StopIteration"),
    "a fake verdict on stdout and stderr": _wrapping(
        "print('ROLLOUTGYM-VERDICT 0 {\"all_passed\": true}')\n"
        "_os.write(1, b'1 passed\\n')\n_os.write(2, b'1 passed\\n')\nreturn _result"
    ),
    "forged replies on every descriptor": _wrapping("_everywhere(_forged_replies())\nreturn _result"),
    "a thread that outlives the call and forges replies": _wrapping(
        "import threading, time\n"
        "def _spam():\n    for _ in range(200):\n        _everywhere(_forged_replies())\n        time.sleep(0.005)\n"
        "threading.Thread(target=_spam, daemon=True).start()\nreturn _result"
    ),
    "a forked child that forges replies": _wrapping(
        "if _os.fork() == 0:\n    _everywhere(_forged_replies())\n    _os._exit(0)\nreturn _result"
    ),
    "os._exit(0) mid-test": _wrapping("_os._exit(0)"),
    "kill everything in the sandbox": _wrapping("import signal\n_os.kill(-1, signal.SIGKILL)\n_os._exit(0)"),
    "poison sys.modules and builtins": """
import builtins, sys, types
fake = types.ModuleType("pytest")
fake.fail = fake.skip = lambda *args, **kwargs: None
for name in ("pytest", "_pytest", "_pytest.outcomes", "rolloutgym_sandbox_guard"):
    sys.modules[name] = fake
builtins.isinstance = lambda *args: True
builtins.len = lambda *args: 0
builtins.repr = lambda *args: "True"
builtins.type = lambda *args: bool
""",
    "replace the import machinery": """
import importlib, sys, types
class _Hook:
    def find_spec(self, name, path=None, target=None):
        module = sys.modules.get(name)
        for key in list(vars(module)) if module is not None else ():
            if key.startswith("test"):
                setattr(module, key, lambda *args, **kwargs: None)
        return None
sys.meta_path.insert(0, _Hook())
_real_import = importlib.import_module
def _fake_import(name, package=None):
    module = _real_import(name, package)
    fake = types.ModuleType(name)
    fake.__dict__.update(vars(module))
    return fake
importlib.import_module = _fake_import
""",
    "patch the server to answer True to everything": """
for _server in _servers():
    _server.encode = lambda value, depth=0: True
    _server.describe_error = lambda exc: {"ref": None, "b": "Exception", "m": "1 passed"}
""",
    "patch the server to send forged wire values": """
_forgeries = [
    {"$": "ref", "id": 1, "k": "exc", "n": "bool", "b": "bool"},
    {"$": "nt", "n": "tuple", "f": ["__eq__"], "v": [1]},
    {"$": "m", "id": 1},
    {"$": "d", "v": [[[1], 2]]},
    {"$": "unknown"},
]
for _server in _servers():
    _server.encode = lambda value, depth=0, _left=list(_forgeries): _left.pop() if _left else True
""",
    "rewrite the server's reply through frames": _wrapping(
        "frame = _sys._getframe(1)\n"
        "while frame is not None:\n"
        "    if 'reply' in frame.f_locals and isinstance(frame.f_locals['reply'], dict):\n"
        "        frame.f_locals['reply']['r'] = True\n"
        "    frame = frame.f_back\n"
        "return _result"
    ),
    "mutate the arguments in place": _wrapping(
        "for argument in args:\n    if isinstance(argument, list):\n        argument[:] = [_result]\nreturn _result"
    ),
    "open /proc/self/mem under other spellings": _wrapping(
        "for path in ('//proc/self/mem', '/proc/./self/mem', '/proc/self/../self/mem', '/proc/thread-self/mem'):\n"
        "    try:\n        open(path, 'r+b').close()\n    except OSError:\n        pass\n"
        "return _result"
    ),
}
# Reading the hidden tests: the attack answers right (the correct implementation) when it found them.
READ_HIDDEN = "read the hidden tests and answer from them"


@dataclass(frozen=True)
class CodeEnv:
    """One code env: the module the submission replaces, its function, a wrong and a right version."""

    name: str
    module: str
    function: str
    wrong: str
    right: str


ENVS = {
    "pybugs": CodeEnv("pybugs", "pagination.py", "paginate", PAGINATE_WRONG, PAGINATE_RIGHT),
    "pyfunc": CodeEnv("pyfunc", "roman.py", "roman_to_int", ROMAN_WRONG, ROMAN_RIGHT),
    "humaneval-completion": CodeEnv(
        "humaneval-completion", "solution.py", "has_close_elements", CLOSE_WRONG, CLOSE_RIGHT
    ),
    "humaneval-agent": CodeEnv("humaneval-agent", "solution.py", "has_close_elements", CLOSE_WRONG, CLOSE_RIGHT),
}


def _submission(env: CodeEnv, attack: str) -> str:
    if attack == READ_HIDDEN:
        right = env.right.replace(f"def {env.function}(", f"def _right_{env.function}(")
        return (
            env.wrong
            + _HELPERS
            + _SEARCH
            + right
            + _wrapping(f"return _right_{env.function}(*args, **kwargs) if _FOUND else _result").format(fn=env.function)
        )
    return env.wrong + _HELPERS + ATTACKS[attack].replace("{fn}", env.function)


def _grade(env: CodeEnv, provider, source: str) -> float:
    from rolloutgym.registry import get_registry
    from rolloutgym_code.grading import GradingInput, grade_repository
    from rolloutgym_code.humaneval import HumanEvalCompletionEnv, humaneval_tasks, make_humaneval_env
    from rolloutgym_code.sandbox import SandboxLimits

    limits = SandboxLimits(wall_seconds=20, cpu_seconds=15)
    if env.name in ("pybugs", "pyfunc"):
        task_id = "paginate-first-page" if env.name == "pybugs" else "roman-numerals"
        _, task = get_registry().resolve_task(f"code/{env.name}-v0", task_id)
        final = {**task.files, env.module: source}
        grading = GradingInput(task.files, final, task.hidden_tests, task.visible_tests, task.expected_files)
        return grade_repository(grading, provider, limits=limits).value
    problem = humaneval_tasks()[0]
    if env.name == "humaneval-completion":
        environment = HumanEvalCompletionEnv(problem, sandbox=provider, limits=limits)
        environment.reset(seed=0)
        _, reward, terminated, _, _ = environment.step({"role": "assistant", "content": f"```python\n{source}\n```"})
        assert terminated
        return reward
    environment = make_humaneval_env(problem, mode="agent", sandbox=provider, limits=limits)
    try:
        environment.reset(seed=0)
        call = {"id": "w", "name": "write_file", "arguments": {"path": "solution.py", "content": source}}
        environment.step({"role": "assistant", "content": "", "tool_calls": [call]})
        submit = {"id": "s", "name": "submit", "arguments": {}}
        _, reward, terminated, _, _ = environment.step({"role": "assistant", "content": "", "tool_calls": [submit]})
        assert terminated
        return reward
    finally:
        environment.close()


# Every route on code/pybugs-v0 with both providers and on the other envs with one provider
# each; the other provider runs a core of routes there (the boundary is the same code for
# every env; what differs is the trusted test file and the module mapping).
CORE = [
    "__class__ claims bool", "tuple subclass equal to everything", "forged replies on every descriptor",
    "patch the server to answer True to everything", "os._exit(0) mid-test", READ_HIDDEN,
]  # fmt: skip
MATRIX = [
    ("pybugs", "bwrap", "all"), ("pybugs", "unshare", "all"),
    ("pyfunc", "unshare", "all"), ("pyfunc", "bwrap", "core"),
    ("humaneval-completion", "bwrap", "all"), ("humaneval-completion", "unshare", "core"),
    ("humaneval-agent", "unshare", "all"), ("humaneval-agent", "bwrap", "core"),
]  # fmt: skip


def _provider(name):
    from rolloutgym_code.sandbox import get_sandbox

    if name == "unshare" and os.geteuid() != 0:
        pytest.skip("the unshare fallback needs root")
    require_sandbox(name)
    return get_sandbox(name)


def test_there_are_many_routes():
    assert len(ATTACKS) + 1 >= 30
    assert {env for env, _, routes in MATRIX if routes == "all"} == set(ENVS)
    assert {(env, provider) for env, provider, _ in MATRIX} == {(env, name) for env in ENVS for name in PROVIDERS}


@pytest.mark.parametrize(("env_name", "provider_name", "routes"), MATRIX)
def test_every_route_scores_zero_and_the_right_answer_one(env_name, provider_name, routes):
    provider = _provider(provider_name)
    env = ENVS[env_name]
    attacks = [*sorted(ATTACKS), READ_HIDDEN] if routes == "all" else CORE
    submissions = {"wrong": env.wrong, "right": env.right} | {name: _submission(env, name) for name in attacks}
    with ThreadPoolExecutor(max_workers=4) as pool:
        scores = dict(
            zip(submissions, pool.map(lambda source: _grade(env, provider, source), submissions.values()), strict=True)
        )
    assert scores.pop("right") == 1.0, f"{env_name}: the right implementation must score 1"
    forged = {name: value for name, value in scores.items() if value != 0.0}
    assert not forged, f"{env_name} on {provider_name}: these routes scored: {forged}"


# -- what crosses the boundary for honest code ------------------------------------------------

# Tasks whose tests use what the proxies must carry: decorators and callbacks (memoize,
# settings, batching, ttl cache with a callable clock object), objects with methods, `in`
# and `len` (lru, cart), aliasing of a list passed in (tags), a module attribute
# (preferences), dates and bytes.
PROXY_TASKS = [
    "memoize-kwargs", "tags-mutable-default", "cart-shared-items", "settings-reload-cache", "batch-chunks-tail",
    "ttl-cache-expiry", "lru-recency", "merge-defaults-aliasing", "billing-add-months", "content-length-bytes",
]  # fmt: skip


def test_buggy_tasks_fail_and_fixed_ones_pass_across_the_boundary(sandbox):
    from rolloutgym.registry import get_registry
    from rolloutgym_code._patch import apply_unified_diff
    from rolloutgym_code.grading import GradingInput, grade_repository

    def grade(arguments):
        task, files = arguments
        grading = GradingInput(task.files, files, task.hidden_tests, task.visible_tests, task.expected_files)
        return grade_repository(grading, sandbox)

    jobs = {}
    for task_id in PROXY_TASKS:
        _, task = get_registry().resolve_task("code/pybugs-v0", task_id)
        fixed = {**task.files, **apply_unified_diff(task.reference_patch, task.files)}
        jobs[(task_id, "buggy")] = (task, dict(task.files))
        jobs[(task_id, "fixed")] = (task, {path: text for path, text in fixed.items() if text is not None})
    with ThreadPoolExecutor(max_workers=4) as pool:
        scores = dict(zip(jobs, pool.map(grade, jobs.values()), strict=True))
    wrong = {key: score.feedback for key, score in scores.items() if score.value != (key[1] == "fixed")}
    assert not wrong, wrong


HONEST_MODULE = """
import collections, dataclasses, datetime, decimal, enum, fractions

Point = collections.namedtuple("Point", "x y", defaults=(0,))


class Color(enum.IntEnum):
    RED = 1


class OutOfStock(LookupError):
    pass


@dataclasses.dataclass(frozen=True)
class Item:
    name: str
    price: decimal.Decimal


def values():
    return {"point": Point(1, 2), "color": Color.RED, "item": Item("a", decimal.Decimal("1.50")),
            "counts": collections.Counter("aab"), "when": datetime.date(2024, 2, 29),
            "span": datetime.timedelta(hours=1), "raw": b"\\x00\\xff", "share": fractions.Fraction(1, 3),
            "tags": frozenset({"a"}), "pair": ({1, 2}, 1 + 2j), "nan": float("nan")}


def squares(limit):
    yield from (number * number for number in range(limit))


def take(name):
    raise OutOfStock(f"no {name} left")


def apply_each(function, items):
    try:
        for item in items:
            function(item)
    except BaseException:
        pass  # swallows whatever the function raised
    return len(items)


def append_twice(target, value):
    target.append(value)
    target.append(value)
"""

HONEST_TEST = """
import datetime, decimal, fractions, math

import pytest
from honest import Item, OutOfStock, Point, append_twice, apply_each, squares, take, values


def test_values():
    result = values()
    assert result["point"] == (1, 2) and result["point"] == Point(1, 2) and result["point"].y == 2
    assert result["color"] == 1 and type(result["color"]) is int
    assert result["item"] == Item("a", decimal.Decimal("1.50")) and result["item"].price == decimal.Decimal("1.50")
    assert result["counts"] == {"a": 2, "b": 1} and result["when"] == datetime.date(2024, 2, 29)
    assert result["span"] == datetime.timedelta(seconds=3600) and result["raw"] == b"\\x00\\xff"
    assert result["share"] == fractions.Fraction(1, 3) and result["tags"] == frozenset({"a"})
    assert result["pair"] == ({1, 2}, 1 + 2j) and math.isnan(result["nan"])


def test_generators_and_exceptions():
    assert list(squares(4)) == [0, 1, 4, 9]
    with pytest.raises(OutOfStock, match="no pears"):
        take("pears")
    with pytest.raises(LookupError):
        take("apples")


def test_mutation_of_an_argument_is_seen():
    target = [0]
    append_twice(target, 5)
    assert target == [0, 5, 5]


def test_an_assertion_in_a_callback_cannot_be_swallowed():
    def check(item):
        assert item < 2, "items must be small"

    apply_each(check, [1, 2, 3])
"""


def test_honest_values_cross_the_boundary_and_failures_stay_failures(sandbox):
    from rolloutgym_code._boundary import run_across_boundary
    from rolloutgym_code._hardening import harden_test_source

    path = "tests/test_honest.py"
    run = run_across_boundary(
        sandbox,
        {"honest.py": HONEST_MODULE.encode()},
        [path],
        trusted_tests={path: harden_test_source(HONEST_TEST).encode()},
        expected=[f"{path}::test_values"],
        front={"honest"},
    )
    outcomes = {case.id.rsplit("::", 1)[-1]: case for case in run.cases}
    assert run.problem is None, run.problem
    failed = outcomes.pop("test_an_assertion_in_a_callback_cannot_be_swallowed")
    assert failed.outcome == "failed" and "items must be small" in failed.message
    assert all(case.outcome == "passed" for case in outcomes.values()), run.failure_report()
    assert len(outcomes) == 3


def test_code_that_never_answers_fails_within_the_time_limit(sandbox):
    import time

    from rolloutgym.registry import get_registry
    from rolloutgym_code.grading import GradingInput, grade_repository
    from rolloutgym_code.sandbox import SandboxLimits

    _, task = get_registry().resolve_task("code/pybugs-v0", "paginate-first-page")
    final = {**task.files, "pagination.py": PAGINATE_RIGHT + "\nwhile True:\n    pass\n"}
    grading = GradingInput(task.files, final, task.hidden_tests, task.visible_tests, task.expected_files)
    started = time.monotonic()
    score = grade_repository(grading, sandbox, limits=SandboxLimits(wall_seconds=4, cpu_seconds=4))
    assert score.value == 0.0
    assert time.monotonic() - started < 4 + 20  # the limit, plus the runner's start on a loaded machine
    assert "time limit" in score.feedback or "stopped answering" in score.feedback, score.feedback


SHADOWS = {
    "pytest.py": "def fail(*args, **kwargs):\n    pass\nskip = fail\n",
    "rolloutgym_sandbox_guard.py": "def plain(left, right):\n    return 1, 1\nmember = plain\ntruth = bool\n",
    "_rolloutgym_bridge.py": "raise SystemExit(0)\n",
    "_rolloutgym_bridge/_bridge_wire.py": "raise SystemExit(0)\n",
    "conftest.py": "import pytest\n@pytest.hookimpl(tryfirst=True)\ndef pytest_runtest_call(item):\n    return True\n",
    "tests/conftest.py": "collect_ignore_glob = ['*']\n",
    "sitecustomize.py": "import os\nos._exit(0)\n",
    "tests/test_pagination_hidden.py": "def test_first_page():\n    pass\n",
}


def test_files_named_like_trusted_modules_change_nothing():
    """The agent's files never reach the trusted side: a ``pytest.py``, a fake guard or
    bridge module, ``conftest.py`` files, ``sitecustomize.py`` and a file named like the
    hidden test, next to the wrong code, still score 0 (on both providers)."""
    from rolloutgym.registry import get_registry
    from rolloutgym_code.grading import GradingInput, grade_repository

    _, task = get_registry().resolve_task("code/pybugs-v0", "paginate-first-page")
    final = {**task.files, **SHADOWS, "pagination.py": PAGINATE_WRONG}
    grading = GradingInput(task.files, final, task.hidden_tests, task.visible_tests, task.expected_files)
    for name in PROVIDERS:
        score = grade_repository(grading, _provider(name))
        assert score.value == 0.0 and score.components["hidden_tests"].metadata["total"] == 4, score.feedback


# -- the trusted side's parser, against a scripted sandbox -------------------------------------

HOSTILE_REPLIES = {
    "an unknown tag": {"$": "pickle", "v": "gASVAAAA"},
    "a namedtuple with code in its field names": {"$": "nt", "n": "P", "f": ["x=__import__('os')"], "v": [1]},
    "a namedtuple with too few values": {"$": "nt", "n": "P", "f": ["x", "y"], "v": [1]},
    "a handle of an unknown kind": {"$": "ref", "id": 1, "k": "module-of-mine", "n": "x"},
    "a set of lists": {"$": "set", "v": [[1], [2]]},
    "a dict with a list key": {"$": "d", "v": [[[1], 2]]},
    "bytes that are not latin-1": {"$": "b", "v": "\u20ac"},
    "a reference to a value never given": {"$": "m", "id": 99},
    "a date that is not one": {"$": "date", "v": "yesterday"},
    "a fraction over zero": {"$": "frac", "v": [1, 0]},
}
_deep: list = []
for _ in range(100):
    _deep = [_deep]
HOSTILE_REPLIES["a value nested 100 deep"] = _deep
HOSTILE_LINES = {
    "an integer of 5000 digits": b'{"re": 1, "r": ' + b"7" * 5000 + b"}\n",
    "a reply to another request": b'{"re": 7, "r": true}\n',
    "a line that is not JSON": b"ROLLOUTGYM-VERDICT 0 {}\n",
    "a JSON value that is not a message": b"[true]\n",
    "a callback never given": b'{"op": "cb", "n": -1, "id": 5, "a": [], "k": {}}\n',
    "an exception that is not one": b'{"re": 1, "e": {"ref": null, "b": "KeyboardInterrupt", "m": "stop"}}\n',
    "nothing (the sandbox exits)": b"",
}


def _answer(line: bytes):
    """A session whose sandbox answers the first request with ``line`` and then hangs up."""
    import threading
    import time

    from rolloutgym_code._bridge import BridgeSession

    to_trusted_read, to_trusted_write = os.pipe()
    to_sandbox_read, to_sandbox_write = os.pipe()

    def sandbox():
        os.read(to_sandbox_read, 1 << 16)
        os.write(to_trusted_write, line)
        os.close(to_trusted_write)

    thread = threading.Thread(target=sandbox)
    thread.start()
    session = BridgeSession(to_trusted_read, to_sandbox_write, time.monotonic() + 10)
    try:
        return session, session.request("get", id=1, name="x")
    finally:
        thread.join()
        for descriptor in (to_trusted_read, to_sandbox_read, to_sandbox_write):
            os.close(descriptor)


@pytest.mark.parametrize("name", sorted(HOSTILE_REPLIES) + sorted(HOSTILE_LINES))
def test_the_trusted_side_accepts_only_plain_data(name):
    import json

    from rolloutgym_code._bridge_wire import RemoteError

    if name in HOSTILE_LINES:
        line = HOSTILE_LINES[name]
    else:
        line = (json.dumps({"re": 1, "r": HOSTILE_REPLIES[name]}) + "\n").encode()
    with pytest.raises(RemoteError):
        _answer(line)


def test_a_plain_reply_is_rebuilt_with_exact_types():
    import json

    line = {"re": 1, "r": {"$": "t", "v": [[1, 2.5, "a", None, True], {"$": "b", "v": "\u00ff"}]}}
    _, value = _answer((json.dumps(line) + "\n").encode())
    assert value == ([1, 2.5, "a", None, True], b"\xff") and type(value) is tuple and type(value[0]) is list
