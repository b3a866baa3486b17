"""A Harbor task's bash call cannot put more on the host than the workspace limit (issue 50, class 4).

One bash call put 1.5 GB on the host's disk with a limit of 256 MiB: the workspace was a host
folder, measured after each command, and RLIMIT_FSIZE bounds only each file. Run as root, the
episode's folder is now a tmpfs of the limit plus 16 MiB, so the writes fail inside the command.
"""

from __future__ import annotations

import os

import pytest
from rolloutgym_code.testing import require_sandbox

pytestmark = pytest.mark.sandbox


def _mounted(path: str) -> bool:
    with open("/proc/self/mounts", encoding="utf-8") as handle:
        return any(line.split()[1] == path for line in handle)


@pytest.mark.skipif(os.geteuid() != 0, reason="the episode tmpfs needs root (elsewhere the size is measured)")
def test_one_bash_call_cannot_fill_the_host_past_the_limit() -> None:
    from rolloutgym_code._harbor_sandbox import _SLACK, EpisodeSandbox

    require_sandbox("bwrap")
    sandbox = EpisodeSandbox(workspace_bytes=2 << 20)
    try:
        assert sandbox.mounted and _mounted(sandbox.root)
        sandbox.seed({"start.txt": b"hello"})
        script = "for i in $(seq 60); do head -c 1048576 /dev/zero > f$i 2>/dev/null; done; ls | wc -l; echo end"
        result = sandbox.shell(script)
        assert "end" in result.output
        assert sandbox.workspace_bytes() <= (2 << 20) + _SLACK  # 60 MiB were asked for
        statistics = os.statvfs(sandbox.root)
        assert statistics.f_blocks * statistics.f_frsize <= (2 << 20) + _SLACK + (1 << 20)
        assert sandbox.shell("cat start.txt").output.startswith("hello")  # files persist between calls
    finally:
        sandbox.close()
    assert not _mounted(sandbox.root) and not os.path.exists(sandbox.root)
