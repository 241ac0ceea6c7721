"""One ``baton`` call forwarded from inside the sandbox to the broker: judged, run, answered.

The request (from :mod:`store.cli.inside`) is one JSON line, ``{"argv": [...], "cwd": "..."}``,
sent with three descriptors (the caller's stdin, stdout and stderr); then, while the call runs, the
caller may send ``signal N`` lines (SIGINT, SIGTERM, SIGHUP are passed on); the broker answers
``exit N``. The call is judged by baton's own PreToolUse gate (the code the hook runs for Bash,
:func:`gate`, in this process) as the standalone Bash command ``baton ARGS`` in the caller's directory, with the payload
fields of the sandboxed call it came from: it runs only on ``allow`` (or on ``ask`` for a call the
person was shown in that command and said yes to), exactly as the launcher line the gate answers
with, outside the sandbox, by absolute paths, on the caller's descriptors. A ``baton once`` run
also gets its sandbox's after-check here, as PostToolUse gives a standalone one. A caller that goes
away (its connection closes) ends its call, as killing a standalone ``baton`` would.
"""

from __future__ import annotations

import os

from store.base import jsonc
from store.gate import baton_calls
from store.sandbox import rewrite

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    import subprocess
    from typing import Any, Dict, List, Optional, Set, Tuple


MAX_REQUEST = 1 << 20  # a baton call's arguments: far over a note
PASSED_SIGNALS = (1, 2, 15)  # SIGHUP, SIGINT, SIGTERM


class Served:
    """What the broker's calls share: its context, the environment a standalone call runs with, the
    calls running, and whether the sandbox has ended."""

    def __init__(self, context: Dict[str, Any], bash_env: Dict[str, str]) -> None:
        import threading

        self.context, self.bash_env = context, bash_env
        self.calls: Set[subprocess.Popen[bytes]] = set()
        self.closing = False
        self.lock = threading.Lock()  # a call starts before the end (and is ended with the rest) or not at all

    def end_calls(self) -> None:
        """bwrap has ended: no caller is left, so a call still running is ended as its caller was."""
        import signal

        with self.lock:
            self.closing = True
            running = list(self.calls)
        for proc in running:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except OSError:
                    pass


class Decision:
    """The argv and environment to run, or the one line that refuses the call."""

    def __init__(self, argv: List[str], env: Dict[str, str], refusal: str = "") -> None:
        self.argv, self.env, self.refusal = argv, env, refusal


def command_of(args: List[str]) -> str:
    return " ".join(["baton", *(rewrite.quote(a) if _needs_quotes(a) else a for a in args)])


def _needs_quotes(word: str) -> bool:
    return not word or any(not (c.isalnum() or c in "-_./=:,+@%") for c in word)


def gate(payload: Dict[str, Any], env: Dict[str, str]) -> Optional[Dict[str, Any]]:
    """The PreToolUse answer for the Bash call in ``payload``: what ``hooks/pre_tool_use.py`` does for
    Bash while a job is active (``None`` where there is no job)."""
    from store.gate import enforce, policy
    from store.gate.call import Call
    from store.state import leases, location
    from store.state.job import Job

    cwd = str(payload["cwd"])
    layout = location.resolve(env, cwd)
    if not layout.has_plan():
        return None
    home = env.get("HOME") or os.path.expanduser("~")
    call = Call("Bash", payload["tool_input"], cwd, layout.project_dir, layout.state_dir, home, env)
    session = payload.get("session_id")
    job = Job(layout, {**env, "CLAUDE_CODE_SESSION_ID": session if isinstance(session, str) else env.get(
        "CLAUDE_CODE_SESSION_ID", "")}, fresh=False)
    leases.renew(layout, job.snap, job.worker)
    return enforce.bash(call, job, policy.read_only_reason(job, call), payload)


def decide(context: Dict[str, Any], args: List[str], cwd: str, tool_use_id: str) -> Decision:
    """What the gate says of ``baton ARGS`` run alone from ``cwd``: a :class:`Decision`."""
    command = command_of(args)
    payload = {**context.get("payload", {}), "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_use_id": tool_use_id,
               "tool_input": {"command": command, "description": "baton, called from a sandboxed command"}}
    try:
        answer = gate(payload, dict(os.environ))
    except Exception as exc:  # noqa: BLE001 - the gate fails closed here as in the hook
        return Decision([], {}, f"baton: the gate could not judge `{command[:200]}` ({type(exc).__name__}: "
                                f"{exc}); nothing was run")
    specific = (answer or {}).get("hookSpecificOutput") or {}
    decision = specific.get("permissionDecision")
    reason = " ".join(str(specific.get("permissionDecisionReason") or "").split())
    if decision == "ask" and args in (context.get("approved") or []):
        decision = "allow"  # the person was asked about the whole command, which showed this call
    alone = f"run `{command[:200]}` as a command of its own"
    if decision == "deny":
        return Decision([], {}, reason)
    if decision != "allow":
        why = reason or "baton's gate had nothing to say about it, so Claude Code would decide"
        return Decision([], {}, f"baton: {why} A `baton` call run with other commands cannot ask a person: "
                                f"{alone}.")
    parts = baton_calls.parts_of(str((specific.get("updatedInput") or {}).get("command") or ""))
    if parts is None:
        return Decision([], {}, f"baton: this `baton` call cannot be carried out of the sandbox: {alone}.")
    return Decision(parts[1], parts[0])


def serve(conn: socket.socket, number: int, broker: Served) -> None:
    """Answer one connection: receive the call, run it (or refuse it), send ``exit N``."""
    fds: List[int] = []
    code = 1
    try:
        request, fds = _receive(conn)
        code = _run(request, fds, number, broker, conn)
    except (OSError, ValueError) as exc:
        if len(fds) == 3:
            _say(fds[2], f"baton: the call could not be carried out of the sandbox ({exc}); nothing was run")
    finally:
        for fd in fds:
            _close(fd)
    try:
        conn.sendall(f"exit {code}\n".encode("ascii"))
    except OSError:
        pass


def _receive(conn: socket.socket) -> Tuple[Dict[str, Any], List[int]]:
    import socket

    data, fds, _, _ = socket.recv_fds(conn, 65536, 3)
    while b"\n" not in data:
        chunk = conn.recv(65536)
        if not chunk or len(data) > MAX_REQUEST:
            raise ValueError("the request was cut short")
        data += chunk
    request = jsonc.loads(data.partition(b"\n")[0].decode("utf-8", "surrogateescape"))
    argv, cwd = request.get("argv") if isinstance(request, dict) else None, request.get("cwd")
    if len(fds) != 3 or not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) or \
            not isinstance(cwd, str):
        raise ValueError("a request must hold argv, cwd and three descriptors")
    return request, list(fds)


def _run(request: Dict[str, Any], fds: List[int], number: int, broker: Served, conn: socket.socket) -> int:
    import subprocess
    import threading

    context = broker.context
    project = str(context["project"])
    cwd = str(request["cwd"])
    cwd = cwd if os.path.isabs(cwd) and os.path.isdir(cwd) else project
    tool_use_id = f"{context.get('id')}-b{number}"
    decision = decide(context, list(request["argv"]), cwd, tool_use_id)
    if decision.refusal:
        _say(fds[2], decision.refusal)
        return 1
    env = {**broker.bash_env, "CLAUDE_PROJECT_DIR": project, **decision.env}
    env.pop("BATON_SANDBOX", None)
    with broker.lock:
        if broker.closing:
            _say(fds[2], "baton: the sandboxed command has ended; nothing was run")
            return 1
        proc = subprocess.Popen(decision.argv, cwd=cwd, env=env, stdin=fds[0], stdout=fds[1], stderr=fds[2],
                                start_new_session=True)
        broker.calls.add(proc)
    threading.Thread(target=_watch, args=(conn, proc), daemon=True).start()
    code = proc.wait()
    broker.calls.discard(proc)
    if "BATON_ONCE_PREFIX" in decision.env:
        _after_once(context, tool_use_id, fds[2])
    return code if code >= 0 else 128 - code


def _after_once(context: Dict[str, Any], tool_use_id: str, err: int) -> None:
    """The once command's sandbox is gone: undo what its mounts could not stop, as PostToolUse would."""
    from store.sandbox.afterrun import after_call

    _, undone = after_call(str(context["state_dir"]), {"tool_use_id": tool_use_id})
    if undone:
        _say(err, undone)


def _watch(conn: socket.socket, proc: subprocess.Popen[bytes]) -> None:
    """Pass the caller's signals on; a caller gone (the connection closed) ends the call."""
    buffered = b""
    while True:
        try:
            chunk = conn.recv(256)
        except OSError:
            chunk = b""
        if not chunk:
            if proc.poll() is None:
                proc.terminate()
            return
        buffered += chunk
        while b"\n" in buffered:
            line, _, buffered = buffered.partition(b"\n")
            word = line[7:] if line.startswith(b"signal ") else b""
            if word.isdigit() and int(word) in PASSED_SIGNALS and proc.poll() is None:
                proc.send_signal(int(word))


def _say(fd: int, text: str) -> None:
    try:
        os.write(fd, (text.rstrip("\n") + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
