"""The launchers' file-descriptor checks and exit statuses, against what the kernel and a shell say."""

from __future__ import annotations

import os
import subprocess

from store.base import descriptors


def test_an_fd_is_open_until_it_is_closed() -> None:
    read, write = os.pipe()
    assert descriptors.is_open(read) and descriptors.is_open(write)
    os.close(read)
    os.close(write)
    assert not descriptors.is_open(read) and not descriptors.is_open(write)


def test_a_child_killed_by_a_signal_reports_as_a_shell_does() -> None:
    child = subprocess.Popen(["sleep", "30"])
    child.kill()
    code = child.wait()
    by_shell = subprocess.run(["bash", "-c", "sleep 30 & kill -9 $!; wait $!"], check=False).returncode
    assert descriptors.shell_status(code) == by_shell == 137
    assert descriptors.shell_status(subprocess.run(["sh", "-c", "exit 3"], check=False).returncode) == 3
