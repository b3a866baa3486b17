"""Values that lie do not cross the grading boundary: a sample of the full sweep.

Every submission here is a correct solution with one function made to lie
(``rolloutgym_code._lying_values``: objects overriding ``__eq__``/``__hash__``/``__contains__``/
``__len__``/``__iter__``/``__bool__``/arithmetic, subclasses of ``int``/``float``/``str``/
``list``/``dict``, a proxy, emptying the caller's lists); each must score 0. The sample covers
HumanEval/4 (whose check computes ``abs(result - expected) < 1e-6``: an object answering
arithmetic with itself, or with 0.0, scored 1.0 before), other HumanEval problems in both
grading modes, and the pybugs tasks whose tests met the reported routes (``bisect-insert-end``:
a fix that empties the caller's list; ``lru-recency``: a ``__contains__`` scripted to agree).
The full sweep (all 164 problems, every pybugs/pyfunc task) is ``benchmarks/code_lying_values.py``.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from rolloutgym_code.testing import require_sandbox

pytestmark = pytest.mark.sandbox


class _WithoutStart:
    """The bwrap provider without ``start()``: grading falls back to the in-sandbox harness."""

    def __init__(self, sandbox):
        self._sandbox = sandbox
        self.name, self.python = "bwrap-in-sandbox", sandbox.python
        self.workdir, self.trusted_dir = sandbox.workdir, sandbox.trusted_dir

    def run(self, *arguments, **keywords):
        return self._sandbox.run(*arguments, **keywords)


def _bwrap():
    from rolloutgym_code.sandbox import get_sandbox

    require_sandbox("bwrap")
    return get_sandbox("bwrap")


def _scores(jobs):
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(jobs, pool.map(lambda job: jobs[job]().value, jobs), strict=True))


@pytest.mark.parametrize("number", [4, 0, 32, 88])
def test_lying_humaneval_results_score_zero_in_both_modes(number):
    from rolloutgym_code._lying_values import VARIANTS, humaneval_submissions
    from rolloutgym_code.humaneval import grade_program, humaneval_tasks

    sandbox = _bwrap()
    providers = {"boundary": sandbox, "in-sandbox": _WithoutStart(sandbox)}
    problem = humaneval_tasks()[number]
    right = problem.prompt + problem.canonical_solution
    submissions = [("canonical", right), *humaneval_submissions(problem)]
    assert len(submissions) == len(VARIANTS) + 1 >= 10
    jobs = {
        (variant, mode): (lambda program=program, mode=mode: grade_program(problem, program, providers[mode]))
        for variant, program in submissions
        for mode in (providers if number == 4 else ["boundary"])
    }
    scores = _scores(jobs)
    assert all(value == 1.0 for (variant, _), value in scores.items() if variant == "canonical"), scores
    holes = {key: value for key, value in scores.items() if key[0] != "canonical" and value != 0.0}
    assert not holes, f"{problem.id}: lying results scored {holes}"


def _task(task_id):
    from rolloutgym.registry import get_registry

    return get_registry().resolve_task("code/pybugs-v0", task_id)[1]


def _grade_files(task, files, sandbox):
    from rolloutgym_code.grading import GradingInput, grade_repository

    return grade_repository(
        GradingInput(task.files, files, task.hidden_tests, task.visible_tests, task.expected_files), sandbox
    )


@pytest.mark.parametrize("task_id", ["bisect-insert-end", "lru-recency", "tags-mutable-default"])
def test_lying_pybugs_functions_score_zero(task_id):
    from rolloutgym_code._lying_values import task_submissions

    sandbox = _bwrap()
    task = _task(task_id)
    fixed, submissions = task_submissions(task)
    assert len(submissions) >= 9
    jobs = {name: (lambda files=files: _grade_files(task, files, sandbox)) for name, files in submissions}
    jobs["canonical"] = lambda: _grade_files(task, fixed, sandbox)
    scores = _scores(jobs)
    assert scores.pop("canonical") == 1.0
    holes = {name: value for name, value in scores.items() if value != 0.0}
    assert not holes, f"{task_id}: these lying submissions scored {holes}"


SCRIPTED_CONTAINS = """

    def __contains__(self, key):
        return key != "b"  # agrees with what the instruction says is evicted
"""

EMPTYING_BISECT = '''"""A list kept sorted on insert."""


def insertion_index(items, value):
    items.clear()  # the caller's list: an expected value computed from it afterwards agrees
    return 0


def insert_sorted(items, value):
    low, high = 0, len(items)
    while low < high:
        middle = (low + high) // 2
        if items[middle] < value:
            low = middle + 1
        else:
            high = middle
    items.insert(low, value)
    return items
'''


def test_the_reported_pybugs_routes_score_zero():
    sandbox = _bwrap()
    lru = _task("lru-recency")
    buggy = lru.files["cache/lru.py"]
    scripted = buggy.replace("\n    def __contains__(self, key):\n        return key in self._data\n", "")
    scripted = scripted.rstrip("\n") + "\n" + SCRIPTED_CONTAINS
    assert scripted != buggy and "key != " in scripted
    bisect = _task("bisect-insert-end")
    jobs = {
        "scripted __contains__": lambda: _grade_files(lru, {**lru.files, "cache/lru.py": scripted}, sandbox),
        "emptied caller's list": lambda: _grade_files(
            bisect, {**bisect.files, "sorted_list.py": EMPTYING_BISECT}, sandbox
        ),
    }
    scores = _scores(jobs)
    assert scores == {name: 0.0 for name in jobs}, scores


# -- the trusted side's handles take no part in arithmetic with plain values -------------------


def _session_answering(reply):
    """A session whose sandbox answers every request with ``reply`` (a JSON-able result)."""
    import json

    from rolloutgym_code._bridge import BridgeSession

    to_trusted_read, to_trusted_write = os.pipe()
    to_sandbox_read, to_sandbox_write = os.pipe()
    asked = []

    def sandbox():
        buffer = b""
        while True:
            chunk = os.read(to_sandbox_read, 1 << 16)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, _, buffer = buffer.partition(b"\n")
                message = json.loads(line)
                asked.append(message.get("name") or message["op"])
                os.write(to_trusted_write, (json.dumps({"re": message["n"], "r": reply}) + "\n").encode())
        os.close(to_trusted_write)

    thread = threading.Thread(target=sandbox, daemon=True)
    thread.start()
    session = BridgeSession(to_trusted_read, to_sandbox_write, time.monotonic() + 10)

    def close():
        os.close(to_sandbox_write)
        thread.join()
        os.close(to_trusted_read)
        os.close(to_sandbox_read)

    return session, asked, close


def test_arithmetic_with_a_handle_never_reaches_the_sandbox():
    from rolloutgym_code._bridge_proxies import RemoteObject
    from rolloutgym_code._bridge_wire import RemoteError

    session, asked, close = _session_answering(0.0)
    try:
        handle, other = RemoteObject(session, 1, "obj", "Liar"), RemoteObject(session, 2, "obj", "Liar")
        attempts = [
            lambda: handle - 2.0 / 3.0, lambda: 2.0 / 3.0 - handle, lambda: handle + 1, lambda: 1 * handle,
            lambda: handle / 3, lambda: handle // 3, lambda: handle % 3, lambda: handle**2, lambda: abs(handle),
            lambda: -handle, lambda: +handle, lambda: round(handle), lambda: handle < 1e-6, lambda: 1e-6 > handle,
        ]  # fmt: skip
        for attempt in attempts:
            with pytest.raises((RemoteError, TypeError)):
                attempt()
        assert (handle == 0.0) is False and (handle != 0.0) is True
        assert asked == [], asked
        with pytest.raises(RemoteError, match="not plain data"):
            handle - other  # between handles it is asked, and the answer must be a handle: 0.0 is refused
        assert asked == ["sub"]
    finally:
        close()


def _agent_score(problem, program, sandbox):
    from rolloutgym_code.humaneval import make_humaneval_env

    env = make_humaneval_env(problem, mode="agent", sandbox=sandbox)
    try:
        env.reset(seed=0)
        write = {"id": "w", "name": "write_file", "arguments": {"path": "solution.py", "content": program}}
        env.step({"role": "assistant", "content": "", "tool_calls": [write]})
        submit = {"id": "s", "name": "submit", "arguments": {"message": "done"}}
        _, reward, terminated, _, _ = env.step({"role": "assistant", "content": "", "tool_calls": [submit]})
        assert terminated
        return reward
    finally:
        env.close()


def test_humaneval_4_in_agent_mode_and_on_unshare():
    """The reported route (HumanEval/4, an object answering arithmetic) in the other mode and provider."""
    from rolloutgym_code._lying_values import lying_program
    from rolloutgym_code.humaneval import grade_program, humaneval_tasks
    from rolloutgym_code.sandbox import get_sandbox

    problem = humaneval_tasks()[4]
    right = problem.prompt + problem.canonical_solution
    bwrap = _bwrap()
    unshare = get_sandbox("unshare") if os.geteuid() == 0 else None
    jobs = {("agent", "right"): lambda: _agent_score(problem, right, bwrap)}
    for variant in ("zero-arithmetic", "everything", "float-subclass"):
        program = lying_program(right, variant, problem.entry_point)
        jobs[("agent", variant)] = lambda program=program: _agent_score(problem, program, bwrap)
        if unshare is not None:
            jobs[("unshare", variant)] = lambda program=program: grade_program(problem, program, unshare)
    scores = {key: (job() if key[0] == "agent" else job().value) for key, job in jobs.items()}
    assert scores.pop(("agent", "right")) == 1.0
    assert not {key: value for key, value in scores.items() if value != 0.0}, scores
