"""The ``baton`` command line: init, record, brief, status, verify, log, claim, release, store.

Usable by a person, by the model through Bash and by any other agent. Exit codes: 0 ok, 1 a check
failed (verify, validate, a refused record), 2 bad usage or bad input. Errors are one line on
stderr; a traceback is a bug.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from store import __version__
from store.base.errors import CHECK, USAGE, BatonError
from store.cli import actions
from store.cli import views as report
from store.state import journal, location, workers
from store.state.job import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, NoReturn, Optional, Sequence


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would print usage and exit 2 itself
        raise BatonError(f"{message.replace(', NOTE', '')} (see `{self.prog} --help`)")


def cmd_init(args: argparse.Namespace, layout: location.Layout) -> int:
    if bool(args.steps) == bool(args.plan):
        raise BatonError("give either step names or --plan FILE (e.g. `baton init a b c`)")
    if args.plan:
        try:
            text = Path(args.plan).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise BatonError(f"{args.plan}: cannot read: {exc}") from None
        plan = actions.install_plan(layout, text, args.plan, args.force)
    else:
        plan = actions.install_plan(layout, actions.seed_plan_text(args.steps), "command line", args.force)
    print(f"created {layout.plan} with {len(plan.steps)} steps; run `baton brief`")
    return 0


def cmd_record(args: argparse.Namespace, layout: location.Layout) -> int:
    message, code = actions.record_step(layout, os.environ, args.step, args.status, " ".join(args.note))
    first, _, rest = message.partition("\n")
    print(first)
    if rest:
        print(f"baton: {rest}", file=sys.stderr)
    return code


def cmd_brief(args: argparse.Namespace, layout: location.Layout) -> int:
    job = Job(layout, os.environ)
    journal.warn_torn(job.torn)
    print(job.brief(os.environ.get("CLAUDE_CODE_SESSION_ID", "")))
    return 0


def cmd_status(args: argparse.Namespace, layout: location.Layout) -> int:
    job = Job(layout, os.environ)
    journal.warn_torn(job.torn)
    last, _ = journal.last_records(layout, 5)
    data = report.status_data(job, last)
    print(json.dumps(data, indent=2) if args.json else report.status_text(data))
    return 0


def cmd_verify(args: argparse.Namespace, layout: location.Layout) -> int:
    verdict = journal.verify(layout)
    where = layout.ledger if journal.shared() is None else "the job's records in the database"
    if verdict.problem:
        print(f"baton: verify failed: {where}: {verdict.problem}", file=sys.stderr)
        return CHECK
    print(f"ok: {verdict.records} records, chain intact (last hash {verdict.last_hash[:12]})")
    if verdict.torn:
        print(f"torn tail: {verdict.torn} bytes after record {verdict.records} (line {verdict.records + 1}) "
              "from a writer killed mid-append; not corruption, the next record repairs it")
    return 0


def cmd_log(args: argparse.Namespace, layout: location.Layout) -> int:
    if args.n < 0:
        raise BatonError("-n must be 0 or more")
    records, torn = journal.last_records(layout, args.n)
    journal.warn_torn(len(torn))
    for record in records:
        print(json.dumps(record, separators=(",", ":")) if args.json else report.log_line(record))
    return 0


def _worker_env(args: argparse.Namespace) -> Dict[str, str]:
    env = dict(os.environ)
    if args.worker:
        env["BATON_WORKER"] = args.worker
    return env


def cmd_claim(args: argparse.Namespace, layout: location.Layout) -> int:
    """Give this worker a ready step (or say why there is none); ``--wait`` polls until one is ready."""
    import time

    from store.cli.actions import next_text

    env = _worker_env(args)
    deadline = time.monotonic() + max(0.0, args.wait)
    while True:
        job = Job(layout, env)
        if not job.plan.parallel:
            print(f"this plan has no `needs`: its steps run in order, and NEXT is {next_text(job)} for everyone")
            return 0 if job.next is not None else CHECK
        got = (workers.Claimed(job.next.id, False) if job.next
               else workers.claim(layout, job.plan, job.worker, job.waits))
        if got.step is not None or job.complete() or time.monotonic() >= deadline:
            break
        time.sleep(min(2.0, max(0.2, deadline - time.monotonic())))
    if got.step is not None:
        job = Job(layout, env)
    text = next_text(job)
    data = {"worker": job.worker, "step": got.step, "new": got.new, "complete": job.complete(), "next": text}
    if args.json:
        print(json.dumps(data))
    elif got.step is not None:
        verb = "claimed" if got.new else "already holds"
        title = f" - {job.next.title}" if job.next is not None and job.next.title else ""
        print(f"worker {job.worker} {verb} {got.step}{title}")
    else:
        print(f"nothing claimed for worker {job.worker}: {text}")
    return 0 if got.step is not None else CHECK


def cmd_release(args: argparse.Namespace, layout: location.Layout) -> int:
    job = Job(layout, _worker_env(args))
    record = workers.release(layout, job.snap, job.worker, " ".join(args.note) or "given back")
    if record is None:
        print(f"worker {job.worker} holds no step; nothing released")
        return CHECK
    print(f"worker {job.worker} gave back {record['step']}: another worker may claim it now")
    return 0


def cmd_store(args: argparse.Namespace, layout: location.Layout) -> int:
    from store.cli import transfer

    return transfer.push(layout, args.url, args.job) if args.action == "push" else transfer.pull(layout, args.url,
                                                                                                 args.job)


def build_parser() -> Parser:
    parser = Parser(prog="baton", description="Keep a long agent job's plan and ledger on disk; print its brief.")
    parser.add_argument("--version", action="version", version=f"baton {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=Parser, metavar="COMMAND")
    p = sub.add_parser("init", help="create .baton/plan.json from step names or a plan file")
    p.add_argument("steps", nargs="*", metavar="STEP")
    p.add_argument("--plan", metavar="FILE", help="a plan file (seed or rich form) to validate and install")
    p.add_argument("--force", action="store_true", help="replace an existing plan")
    p.set_defaults(func=cmd_init)
    p = sub.add_parser("record", help="append STEP STATUS [NOTE...] to the ledger")
    p.add_argument("step", metavar="STEP")
    p.add_argument("status", metavar="STATUS", help=f"one of {', '.join(journal.STATUSES)}")
    p.add_argument("note", nargs=argparse.REMAINDER, metavar="NOTE")
    p.set_defaults(func=cmd_record)
    sub.add_parser("brief", help="print the brief (PLAN / DONE / NEXT / LAST)").set_defaults(func=cmd_brief)
    p = sub.add_parser("status", help="progress, attempts, last entries, sessions")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_status)
    sub.add_parser("verify", help="check the ledger's hash chain").set_defaults(func=cmd_verify)
    p = sub.add_parser("log", help="the last ledger records")
    p.add_argument("-n", type=int, default=20, help="how many (default 20)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_log)
    p = sub.add_parser("claim", help="take a ready step of a parallel plan for this worker")
    p.add_argument("--worker", metavar="NAME", help="the worker (default: $BATON_WORKER, else the session)")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="poll until a step is ready")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_claim)
    p = sub.add_parser("release", help="give back the step this worker holds")
    p.add_argument("--worker", metavar="NAME", help="the worker (default: $BATON_WORKER, else the session)")
    p.add_argument("note", nargs=argparse.REMAINDER, metavar="NOTE")
    p.set_defaults(func=cmd_release)
    p = sub.add_parser("store", help="copy a job between .baton/steps.jsonl and a PostgreSQL database")
    p.add_argument("action", choices=("push", "pull"), help="push: file to database; pull: database to file")
    p.add_argument("url", nargs="?", default="", metavar="URL", help="the database (default: $BATON_DATABASE_URL)")
    p.add_argument("--job", default="", metavar="NAME", help="the job's name (default: $BATON_JOB or the plan's)")
    p.set_defaults(func=cmd_store)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command; every failure becomes one line on stderr and an exit code."""
    try:
        args = build_parser().parse_args(argv)
        if not getattr(args, "func", None):
            raise BatonError("missing command; one of init, record, brief, status, verify, log, claim, release, store "
                             "(see `baton --help`)")
        return int(args.func(args, location.resolve()))
    except BatonError as exc:
        print(f"baton: {exc.message}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the one boundary: a bug is still one line, never a traceback
        print(f"baton: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return USAGE
