"""Guarded paths are checked after resolving them, and a run cannot fill the host's disk.

Issue 26: process memory could be opened through spellings of ``/proc/...`` that the worker's
audit hook did not recognise, and one run wrote over 2 GiB to the host's disk. Each spelling
below is opened by a test in a real sandboxed pytest run; the test passes only when the open
is refused. The disk test writes many files, each under RLIMIT_FSIZE, whose total is far over
the workspace's size, and checks that the writes stop at the workspace's bound.
"""

from __future__ import annotations

import os
import textwrap

import pytest
from rolloutgym_code.testing import require_sandbox

pytestmark = pytest.mark.sandbox

PROVIDERS = ["bwrap", "unshare"]

SPELLINGS = [
    "/proc/self/mem",
    "//proc/self/mem",
    "/proc//self/mem",
    "/proc/./self/mem",
    "/proc/self/../self/mem",
    "/proc/thread-self/../self/mem",
    "/./proc/self/mem",
    "/usr/../proc/self/mem",
    "../proc/self/mem",
    "../../../../proc/self/mem",
    "link-to-mem",
    "link-to-proc/self/mem",
    "link-to-self/mem",
    "/proc/self/fd/1",
    "//dev/fd/1",
    "/proc/self",
    "/proc",
    "//proc",
    "/",
]


@pytest.fixture(params=PROVIDERS)
def provider(request):
    from rolloutgym_code.sandbox import get_sandbox

    name = request.param
    if name == "unshare" and os.geteuid() != 0:
        pytest.skip("the unshare fallback needs root")
    require_sandbox(name)
    return get_sandbox(name)


def test_every_spelling_of_process_memory_is_refused(provider):
    from rolloutgym_code.sandbox import SandboxLimits
    from rolloutgym_code.testrun import run_pytest

    test = textwrap.dedent(
        f"""
        import os
        import pytest

        SPELLINGS = {SPELLINGS!r}
        os.symlink("/proc/self/mem", "link-to-mem")
        os.symlink("/proc", "link-to-proc")
        os.symlink("/proc/self", "link-to-self")

        @pytest.mark.parametrize("path", SPELLINGS)
        def test_refused(path):
            with pytest.raises(RuntimeError, match="not allowed in the test sandbox"):
                os.close(os.open(path, os.O_RDONLY))
        """
    )
    run = run_pytest(
        provider, {"test_spellings.py": test.encode()}, ["test_spellings.py"], limits=SandboxLimits(wall_seconds=30)
    )
    assert run.problem is None, run.summary()
    assert run.total == len(SPELLINGS), run.summary()
    assert run.all_passed, run.failure_report()


def test_the_workspace_is_bounded(provider):
    from rolloutgym_code.sandbox import SandboxLimits

    script = textwrap.dedent(
        """
        import os
        written = 0
        try:
            for number in range(400):  # 400 MiB in files of 1 MiB each, all under RLIMIT_FSIZE
                with open(f"fill-{number}.bin", "wb") as handle:
                    handle.write(b"x" * (1 << 20))
                written += 1
        except OSError as exc:
            print("workspace full after", written, "MiB:", type(exc).__name__)
        print("seed", open("seed.txt").read())
        """
    )
    limits = SandboxLimits(wall_seconds=30, workspace_bytes=16 << 20, file_size_bytes=4 << 20)
    result = provider.run(
        [provider.python, "attack.py"], files={"attack.py": script, "seed.txt": b"here"}, limits=limits
    )
    assert "seed here" in result.output, result.output
    assert "workspace full after" in result.output, result.output
    full_after = int(result.output.split("workspace full after", 1)[1].split()[0])
    assert 0 < full_after <= 16, result.output


def test_collected_files_come_back(provider):
    from rolloutgym_code.sandbox import SandboxLimits

    script = "open('out.txt', 'w').write('made inside'); import os; os.symlink('/etc/hostname', 'link')"
    result = provider.run(
        [provider.python, "-c", script],
        files={"in.txt": b"x"},
        limits=SandboxLimits(wall_seconds=20),
        collect=["out.txt", "link", "in.txt", "missing"],
    )
    assert result.files == {"out.txt": b"made inside", "in.txt": b"x"}, (result.files, result.output)
