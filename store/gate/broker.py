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

from store.base import descriptors  # noqa: E402 - after the path above

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from typing import List

    from store.gate.forwarded import Served


class Broker:
    """The listening socket, and the calls it serves (:class:`store.gate.forwarded.Served`)."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.count = 0

    def serve(self) -> socket.socket:
        import socket
        import threading

        path = str(self.served.context["socket"])
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

        from store.gate import forwarded

        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            self.count += 1
            threading.Thread(target=forwarded.serve, args=(conn, self.count, self.served), daemon=True).start()


def main(argv: List[str]) -> int:
    """``CONTEXT -- LAUNCH...``: LAUNCH run with the broker serving; LAUNCH's exit status."""
    import signal
    import subprocess

    from store.base import jsonc
    from store.gate.forwarded import Served

    split = argv.index("--")
    with open(argv[0], "rb") as handle:
        context = jsonc.loads(handle.read().decode("ascii"))
    served = Served(context, dict(os.environ))  # the environment a standalone call runs with
    os.environ.update(context.get("env") or {})  # the gate judges each call as the hook would
    server = Broker(served).serve()
    try:
        keep = tuple(fd for fd in (4, 7) if descriptors.is_open(fd))  # the report pipe and bwrap's arguments
        proc = subprocess.Popen(argv[split + 1:], pass_fds=keep, env=served.bash_env)
        for fd in keep:
            os.close(fd)  # bwrap has them; the report pipe must end when bwrap does
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda number, _frame: proc.send_signal(number))
        code = proc.wait()
    finally:
        server.close()
        served.end_calls()
        try:
            os.unlink(str(context["socket"]))
        except OSError:
            pass
    return descriptors.shell_status(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
