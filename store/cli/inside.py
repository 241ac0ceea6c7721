"""``baton`` run inside baton's sandbox: the call goes to the job's broker, or says why it cannot.

Inside the sandbox (``BATON_SANDBOX=1``) ``.baton/`` is read-only, so a call chained with the work
(``echo A > a.txt && baton record a done``) is carried out of it by the broker the gate started for
that command (:mod:`store.gate.broker`, its socket named by ``BATON_BROKER``): this sends the
arguments and the directory, passes stdin, stdout and stderr, relays SIGINT, SIGTERM and SIGHUP,
and exits with the call's exit code. Where no broker was started (a script the gate could not read,
a ``baton once`` command's own sandbox), it says so in one line and exits 1: never a false success.
"""

from __future__ import annotations

import os
import sys

from store.base import descriptors

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from typing import List, Optional

ENV = "BATON_BROKER"
LOCAL = ("--help", "-h", "--version")


def shown(words: List[str]) -> str:
    return " ".join(["baton", *words])[:120]


def run(words: List[str]) -> Optional[int]:
    """The exit code of ``baton WORDS`` carried to the broker (``None``: run it here, it only shows help)."""
    path = os.environ.get(ENV, "")
    if not path:
        if not words or words[0] in LOCAL or words[-1] in LOCAL[:2]:
            return None
        print(f"baton: `{shown(words)}` runs inside baton's sandbox, where it cannot reach the job (it was started "
              f"by a program or script baton's gate could not read); run `{shown(words)}` as a command of its own.",
              file=sys.stderr)
        return 1
    try:
        conn = _connect(path)
    except OSError as exc:
        print(f"baton: cannot reach the job from inside baton's sandbox ({exc.strerror or exc}); run "
              f"`{shown(words)}` as a command of its own.", file=sys.stderr)
        return 1
    with conn:
        return _call(conn, words)


def _connect(path: str) -> socket.socket:
    import socket

    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    here = os.open(".", os.O_RDONLY) if _readable_cwd() else -1
    try:  # by its short name: a socket's path may not pass ~100 bytes
        os.chdir(os.path.dirname(path) or "/")
        conn.connect(os.path.basename(path))
    except OSError:
        conn.close()
        raise
    finally:
        if here >= 0:
            os.fchdir(here)
            os.close(here)
    return conn


def _readable_cwd() -> bool:
    try:
        os.getcwd()
        return True
    except OSError:
        return False


def _call(conn: socket.socket, words: List[str]) -> int:
    import json
    import signal
    import socket

    try:
        cwd = os.getcwd()
    except OSError:
        cwd = os.environ.get("PWD", "/")
    fds = [fd if descriptors.is_open(fd) else os.open(os.devnull, os.O_RDWR) for fd in (0, 1, 2)]
    request = json.dumps({"argv": words, "cwd": cwd}).encode("utf-8", "surrogateescape") + b"\n"
    socket.send_fds(conn, [request], fds)

    def relay(number: int, _frame: object) -> None:
        try:
            conn.sendall(f"signal {number}\n".encode("ascii"))
        except OSError:
            pass

    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, relay)
    answer = b""
    while b"\n" not in answer:
        chunk = conn.recv(64)
        if not chunk:
            print(f"baton: the job's broker ended before `{shown(words)}` finished; whether it ran is unknown (check "
                  "`baton log` in a command of its own).", file=sys.stderr)
            return 1
        answer += chunk
    word = answer.partition(b"\n")[0][5:]
    return int(word) if answer.startswith(b"exit ") and word.isdigit() else 1
