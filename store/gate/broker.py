"""baton's own commands chained with sandboxed work: a broker outside the sandbox runs them.

A sandboxed command cannot write ``.baton/``, so ``echo A > a.txt && baton record a done`` could not
record. When the model's command names ``baton`` (:func:`store.gate.baton_calls.named`), the gate starts the sandbox
through this broker: ``python3 -I -S broker.py CONTEXT -- LAUNCH...`` listens on a unix socket in
``.baton/run/`` (read-only inside the sandbox, where ``BATON_BROKER`` names it; nothing there can
replace it), starts LAUNCH (bwrap, or baton's network proxy that starts it) and lives exactly as
long: when bwrap ends, calls still running are ended and the broker exits with bwrap's status
(bwrap's ``--die-with-parent`` ends the sandbox if the broker is killed).

``baton`` inside the sandbox (:mod:`store.cli.inside`) connects, sends its arguments and
directory and passes its stdin, stdout and stderr (``SCM_RIGHTS``), so the call's output goes where
it would go without the sandbox; it relays the signals it gets, and reads the exit code back. Each
call is judged by baton's own PreToolUse gate as the standalone Bash command ``baton ARGS``
(:mod:`store.gate.forwarded`), and runs only when that command would run without a prompt, by the
absolute paths a standalone call runs by; anything that would need a person is refused with one
line that says to run it as a command of its own. Anything in the sandbox can reach the socket, so
it gives nothing a standalone call doesn't.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":  # run as a program (-I: its folder is not on sys.path): store/ is three folders up
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    import subprocess
    from typing import Any, Dict, List, Mapping, Set

ENV = "BATON_BROKER"
# what the gate needs from the hook's environment to judge a call as the hook would (no tokens)
HOOK_ENV = ("HOME", "USER", "PATH", "CLAUDE_PROJECT_DIR", "CLAUDE_PID", "CLAUDE_CONFIG_DIR", "CLAUDE_PLUGIN_DATA",
            "CLAUDE_CODE_SESSION_ID")
HOOK_ENV_PREFIXES = ("BATON_", "XDG_")
PAYLOAD_KEYS = ("session_id", "permission_mode", "agent_id", "agent_type", "transcript_path")


def visible_calls(command: str, cwd: str, home: str) -> List[List[str]]:
    """The ``baton`` calls a person sees in ``command`` (its words after ``baton``): what they say yes to
    when they are asked about the whole command."""
    from store.shell import analyse

    return [list(argv[1:]) for argv in analyse(command, cwd, home).baton if argv and argv[0] == "baton"]


def write_context(files: Mapping[str, str], rid: str, payload: Mapping[str, Any], env: Mapping[str, str],
                  approved: List[List[str]]) -> None:
    """What the broker of run ``rid`` needs (``files``: :func:`store.gate.runs.paths`), in ``.broker``."""
    from store.base import jsonc as json
    from store.gate.rewrite import write_file

    kept = {k: v for k, v in env.items() if k in HOOK_ENV or k.startswith(HOOK_ENV_PREFIXES)}
    data = {"id": rid, "socket": files["socket"], "env": kept, "approved": approved,
            "payload": {k: payload[k] for k in PAYLOAD_KEYS if isinstance(payload.get(k), str)}}
    write_file(files["broker"], json.dumps(data, ensure_ascii=True).encode("ascii"))


def launch(context_file: str) -> List[str]:
    """The command line that starts the broker, before the ``LAUNCH`` it starts."""
    here = os.path.abspath(__file__)
    return [sys.executable or "/usr/bin/python3", "-I", "-S", here, context_file, "--"]


class Broker:
    """The listening socket, the calls running, and the launch (bwrap) they live with."""

    def __init__(self, context: Dict[str, Any], bash_env: Dict[str, str]) -> None:
        self.context, self.bash_env = context, bash_env  # bash_env: what a standalone call runs with
        self.calls: Set[subprocess.Popen[bytes]] = set()
        self.count = 0
        self.closing = False

    def serve(self) -> socket.socket:
        import socket
        import threading

        path = str(self.context["socket"])
        here = os.open(".", os.O_RDONLY)
        try:  # bound by its short name: a socket's path may not pass ~100 bytes
            os.chdir(os.path.dirname(path))
            if os.path.lexists(os.path.basename(path)):
                os.unlink(os.path.basename(path))
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(os.path.basename(path))
        finally:
            os.fchdir(here)
            os.close(here)
        server.listen(16)
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()
        return server

    def _accept(self, server: socket.socket) -> None:
        import threading

        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            self.count += 1
            threading.Thread(target=self._one, args=(conn, self.count), daemon=True).start()

    def _one(self, conn: socket.socket, number: int) -> None:
        from store.gate import forwarded

        with conn:
            forwarded.serve(conn, number, self)

    def end_calls(self) -> None:
        """bwrap has ended: no caller is left, so a call still running is ended as its caller was."""
        import signal

        self.closing = True
        for proc in list(self.calls):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except OSError:
                    pass


def main(argv: List[str]) -> int:
    """``CONTEXT -- LAUNCH...``: LAUNCH run with the broker serving; LAUNCH's exit status."""
    import signal
    import subprocess

    from store.base import jsonc as json

    split = argv.index("--")
    with open(argv[0], "rb") as handle:
        context = json.loads(handle.read().decode("ascii"))
    broker = Broker(context, dict(os.environ))
    os.environ.update(context.get("env") or {})  # the gate judges each call as the hook would
    server = broker.serve()
    try:
        keep = tuple(fd for fd in (4, 7) if _open(fd))  # the report pipe and bwrap's arguments
        proc = subprocess.Popen(argv[split + 1:], pass_fds=keep, env=broker.bash_env)
        for fd in keep:
            os.close(fd)  # bwrap has them; the report pipe must end when bwrap does
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda number, _frame: proc.send_signal(number))
        code = proc.wait()
    finally:
        server.close()
        broker.end_calls()
        try:
            os.unlink(str(context["socket"]))
        except OSError:
            pass
    return code if code >= 0 else 128 - code


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
