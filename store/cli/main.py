"""The ``baton`` command line: init, record, brief, status, verify, log.

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
from store.state import journal, location
from store.state.job import Job
from store.state.ledger import read_last

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn, Optional, Sequence


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
    news = report.gates_news(job, os.environ)
    print(job.brief(os.environ.get("CLAUDE_CODE_SESSION_ID", ""), [news] if news else []))
    return 0


def cmd_status(args: argparse.Namespace, layout: location.Layout) -> int:
    job = Job(layout, os.environ)
    journal.warn_torn(job.torn)
    last, _ = read_last(layout.ledger, 5)
    data = {**report.status_data(job, last), "sandbox": report.sandbox_data(job, os.environ)}
    print(json.dumps(data, indent=2) if args.json else report.status_text(data))
    return 0


def cmd_verify(args: argparse.Namespace, layout: location.Layout) -> int:
    verdict = journal.verify(layout)
    if verdict.problem:
        print(f"baton: verify failed: {layout.ledger}: {verdict.problem}", file=sys.stderr)
        return CHECK
    print(f"ok: {verdict.records} records, chain intact (last hash {verdict.last_hash[:12]})")
    if verdict.torn:
        print(f"torn tail: {verdict.torn} bytes after record {verdict.records} (line {verdict.records + 1}) "
              "from a writer killed mid-append; not corruption, the next record repairs it")
    return 0


def cmd_log(args: argparse.Namespace, layout: location.Layout) -> int:
    if args.n < 0:
        raise BatonError("-n must be 0 or more")
    records, torn = read_last(layout.ledger, args.n)
    journal.warn_torn(len(torn))
    for record in records:
        print(json.dumps(record, separators=(",", ":")) if args.json else report.log_line(record))
    return 0


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
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command; every failure becomes one line on stderr and an exit code."""
    try:
        args = build_parser().parse_args(argv)
        if not getattr(args, "func", None):
            raise BatonError("missing command; one of init, record, brief, status, verify, log (see `baton --help`)")
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
