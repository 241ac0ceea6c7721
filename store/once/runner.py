"""The protocol of ``baton once``: under the key's lock, look the key up; replay a stored result,
refuse an unknown outcome (exit 3), or record an intent (durable), run the command, and record its
result. ``settle`` records what a person or the model found out about an unknown outcome.

Exit codes: the command's own when it ran or was replayed; 3 when the outcome is unknown (an
earlier run died between intent and result, or this run was interrupted or its command killed by
a signal); 1 when the job's ``external_ops`` limit is reached or a settlement is refused; 2 for
bad usage. A result is appended only after the command exited by itself. When baton's gate
started this ``baton once`` for the model, ``BATON_ONCE_PREFIX`` names the command line (written by
the gate in ``.baton/run/``) that starts the command inside baton's sandbox: it runs there, while
the records are written here, outside. It needs the file store: its index finds records by their
offset in ``steps.jsonl``, and its key lock is a file on this machine, so with a job kept in a
database it refuses to run (docs/postgresql.md).
"""

from __future__ import annotations

import os
import shutil

from store.base.errors import CHECK, BatonError
from store.base.text import one_line
from store.monitor import limits, outcomes
from store.once import binding, execute, ident, redact
from store.plan.plan import load_plan
from store.state import journal, keylock, once_keys
from store.state.brief import progress

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Mapping, Optional, Pattern, Sequence, Tuple

    from store.state.location import Layout
    from store.state.snapshot import Snapshot

    Say = Callable[[str], None]

UNKNOWN = 3
OUTCOMES = ("done", "failed", "retry")
MAX_KEY = 200


def check_key(key: str) -> str:
    if not key or len(key) > MAX_KEY or key != key.strip() or key.startswith("-"):
        raise BatonError(f"a once KEY is 1-{MAX_KEY} characters, without surrounding spaces, not starting with '-'")
    if any(ord(c) < 32 or ord(c) == 127 for c in key):
        raise BatonError("a once KEY must not contain control characters")
    return key


def current(layout: Layout, key: str) -> Tuple[Optional[Dict[str, Any]], Snapshot]:
    """The key's latest once record (``None``: it never ran) and the up-to-date snapshot."""
    snap = journal.read_state(layout).snapshot
    try:
        return once_keys.lookup(layout, snap, key), snap
    except once_keys.IndexMismatch:
        snap = once_keys.rebuild(layout)
    try:
        return once_keys.lookup(layout, snap, key), snap
    except once_keys.IndexMismatch as exc:
        raise BatonError(f"{layout.ledger}: {exc} even after a rebuild; run `baton verify`", CHECK) from None


def replayable(record: Optional[Dict[str, Any]]) -> bool:
    return record is not None and record.get("status") == "result" and record.get("outcome") != "retry"


def replay_message(key: str, record: Dict[str, Any]) -> str:
    how = "ran" if record.get("outcome") == "ran" else f"was settled {record.get('outcome')}"
    ident_text = f", id {record['id']}" if record.get("id") else ""
    evidence = f" ({one_line(str(record.get('note') or ''), 120)})" if record.get("outcome") != "ran" else ""
    return (f"baton: once {key} {how} at {record.get('ts')} (step {record.get('step')}, record #{record.get('seq')})"
            f"{evidence}: exit {record.get('exit')}{ident_text}. Not run again; the stored result is replayed.")


def unknown_message(key: str, intent: Dict[str, Any], snap: Snapshot) -> str:
    session = str(intent.get("session") or "")
    who = f", session {session[:8]}" if session else ""
    return (f"baton: once {key}: outcome unknown. A run started at {intent.get('ts')} (step {intent.get('step')}"
            f"{who}, record #{intent.get('seq')}) recorded its intent, `{one_line(str(intent.get('note')), 160)}`, "
            "but no result: it died or was stopped before it finished, so the side effect may or may not have "
            f"happened. It is not run again blindly. Check whether it happened (its BATON_IDEMPOTENCY_KEY was "
            f"{once_keys.idempotency_key(snap.first_hash, key)}), then settle it: {once_keys.settle_hint(key)}")


def file_store_only(layout: Layout) -> None:
    """Refuse before anything is looked up or run when the job is kept in a database."""
    if journal.shared() is not None:
        raise BatonError("baton once needs the job in .baton/steps.jsonl: its index finds records by their byte "
                         "offset there and its key lock is a file on this machine, so with the job in a database "
                         "(BATON_DATABASE_URL or BATON_STORE) nothing is run; run the command without baton once, "
                         f"or keep this job in files ({layout.plan})")


def _program(argv: Sequence[str], env: Mapping[str, str]) -> str:
    name = argv[0]
    found = shutil.which(name, path=env.get("PATH")) if "/" not in name else (
        name if os.path.isfile(name) and os.access(name, os.X_OK) else None)
    if found is None:
        raise BatonError(f"cannot run {name!r}: not found or not executable; nothing was recorded")
    return found


def _sandbox_prefix(env: Mapping[str, str]) -> Tuple[str, ...]:
    """The command line the gate gave to start the command in its sandbox (``()``: none given)."""
    path = env.get("BATON_ONCE_PREFIX", "")
    if not path:
        return ()
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise BatonError(f"cannot read the sandbox this command must run in ({path}: {exc.strerror}); nothing was "
                         "run or recorded") from None
    return tuple(part.decode("utf-8", "surrogateescape") for part in raw.split(b"\0")[:-1])


def _limit_guard(layout: Layout, cap: Optional[float]) -> Callable[[Snapshot], None]:
    def guard(snap: Snapshot) -> None:
        if not cap:
            return
        used = limits.external_ops(snap, outcomes.read_counters(layout)) + len(snap.once_open)
        if used >= cap:
            raise BatonError(f"the job reached its external_ops limit ({used} of {cap:g}, running ones included); "
                             "nothing was run. A person can raise limits.external_ops in .baton/plan.json.", CHECK)
    return guard


def run_once(layout: Layout, env: Mapping[str, str], key: str, argv: Sequence[str],
             id_from: Optional[Pattern[str]], id_json: Optional[str], say: Say, show: Say, reuse: bool = False) -> int:
    """``baton once KEY -- ARGV``; returns the exit code (see the module docstring). The key is
    bound to its first run (:mod:`store.once.binding`): another command, folder or step is refused,
    unless ``reuse`` (``--reuse-key``) says it is the same side effect, whose result is replayed."""
    file_store_only(layout)
    plan = load_plan(layout.plan)
    lock = keylock.KeyLock(layout, check_key(key))
    lock.acquire(on_wait=lambda: say(f"baton: once {key} is running in another process; waiting for its result"))
    finished = False
    try:
        record, snap = current(layout, key)
        step = progress(plan, snap).next
        step_id = step.id if step else "-"
        now = binding.of(argv, os.getcwd(), layout.project_dir, step_id)
        bound = binding.stored(record)
        differs = binding.differences(bound, now, step_id) if bound is not None else []
        if record is not None and record.get("status") == "intent":  # refused either way: settling comes first
            say(unknown_message(key, record, snap) + binding.open_differs(record, differs))
            return UNKNOWN
        if differs and not reuse:
            raise BatonError(binding.refusal(key, bound or {}, now, differs))
        if replayable(record):
            assert record is not None
            say(replay_message(key, record) + (" (--reuse-key: it stands for this command too)" if differs else ""))
            show(str(record.get("out_tail") or ""))
            return int(record.get("exit") or 0)
        _program(argv, env)
        prefix = _sandbox_prefix(env)  # before the intent: a sandbox that cannot be had runs nothing
        intent = journal.append(layout, step_id, "intent", redact.command(argv), sync=True,
                                guard=_limit_guard(layout, plan.limits.get("external_ops")), key=key,
                                bind=now["bind"], cwd=now["cwd"])
        first = snap.first_hash or str(intent["hash"])
        code, finished = _run_and_record(layout, env, key, (*prefix, *argv), {**intent, "cmd": now["cmd"]}, first,
                                         (id_from, id_json), say, lock.fd)
        return code
    finally:
        lock.release(remove=finished)


def _run_and_record(layout: Layout, env: Mapping[str, str], key: str, argv: Sequence[str], intent: Dict[str, Any],
                    first_hash: str, id_options: Tuple[Optional[Pattern[str]], Optional[str]],
                    say: Say, lock_fd: int) -> Tuple[int, bool]:
    run_env = {**{k: v for k, v in env.items() if k != "BATON_ONCE_PREFIX"},
               "BATON_IDEMPOTENCY_KEY": once_keys.idempotency_key(first_hash, key), "BATON_ONCE_KEY": key}
    step = str(intent["step"])
    bound = binding.carried(intent)
    try:
        outcome = execute.run(argv, run_env, os.getcwd(), keep_fd=lock_fd)
    except OSError as exc:  # it never started: the key may run again
        journal.append(layout, step, "result", f"could not start: {exc}"[:300], sync=True, key=key, outcome="retry",
                       **bound)
        raise BatonError(f"cannot run {argv[0]!r}: {exc}; recorded as not run, so the key may run again") from None
    if not outcome.finished:  # ended by a signal: it may be half done (an exit after a forwarded one counts)
        say(f"baton: once {key}: the command was ended by signal {outcome.signal}; its outcome is unknown and "
            f"no result was recorded. Check whether it happened, then settle it: {once_keys.settle_hint(key)}")
        return UNKNOWN, False
    found = _external_id(outcome.head, id_options, say)
    fields: Dict[str, Any] = {"key": key, "outcome": "ran", "exit": outcome.exit, "seconds": outcome.seconds,
                              "out_sha256": outcome.sha256, "out_tail": redact.text(outcome.tail),
                              "err_tail": redact.text(outcome.err_tail), **bound}
    if found:
        fields["id"] = found
    note = f"exit {outcome.exit}" + (f", id {found}" if found else "")
    record = journal.append(layout, step, "result", note, sync=True, **fields)
    say(f"baton: once {key} ran (record #{record['seq']}): exit {outcome.exit}"
        + (f", id {found}" if found else "") + f", {outcome.seconds:g}s")
    return int(outcome.exit or 0), True


def _external_id(head: bytes, options: Tuple[Optional[Pattern[str]], Optional[str]], say: Say) -> str:
    pattern, field = options
    if pattern is None and field is None:
        return ""
    found = ident.from_regex(pattern, head) if pattern is not None else ident.from_json(field or "", head)
    if not found:
        say(f"baton: warning: no external id found in the output ({'--id-from' if pattern else '--id-json'})")
    return found or ""


def settle(layout: Layout, key: str, outcome: str, evidence: str) -> str:
    """Record what was found out about an unknown outcome: ``done`` (it happened: replays exit 0),
    ``failed`` (it did not work: replays exit 1) or ``retry`` (it did not happen: the key may run
    again). ``retry`` also reopens a key whose command failed, to try it again on purpose."""
    file_store_only(layout)
    load_plan(layout.plan)
    journal.check_note(evidence)
    if outcome not in OUTCOMES:
        raise BatonError(f"settle: outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
    if not evidence.strip():
        raise BatonError("settle: say what you checked, e.g. baton once --settle KEY done \"PR #12 exists\"")
    lock = keylock.KeyLock(layout, check_key(key))
    if not lock.acquire(wait=False):
        raise BatonError(f"once {key} is running now; wait for its result instead of settling it", CHECK)
    try:
        record, _ = current(layout, key)
        if record is None or (record.get("status") == "result" and record.get("outcome") == "retry"):
            why = "never ran here" if record is None else "was settled retry and may run again"
            raise BatonError(f"once {key} {why}: there is nothing to settle", CHECK)
        if replayable(record) and not (outcome == "retry" and record.get("exit") not in (0, None)):
            raise BatonError(f"once {key} already has a result (exit {record.get('exit')} at {record.get('ts')}); "
                             "only an unknown outcome, or a failed one with retry, can be settled", CHECK)
        code = {"done": 0, "failed": 1}.get(outcome)
        done = journal.append(layout, str(record.get("step") or "-"), "result", evidence, sync=True, key=key,
                              outcome=outcome, exit=code, settles=record.get("seq"), **binding.carried(record))
    finally:
        lock.release(remove=True)
    after = "it may run again" if outcome == "retry" else f"`baton once {key}` now replays exit {code}"
    return f"settled once {key} {outcome} (record #{done['seq']}); {after}"
