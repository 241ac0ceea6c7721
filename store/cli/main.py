"""The ``baton`` command line: init, record, brief, status, verify, log, repair, merge.

Usable by a person, by the model through Bash and by any other agent. Exit codes: 0 ok, 1 a check
failed (verify, validate, a refused record), 2 bad usage, bad input or an environment error (named
with its cause and path). Errors are one line on stderr; "internal error" is a bug.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from store import __version__
from store.base.errors import CHECK, USAGE, BatonError, describe
from store.cli import actions
from store.cli import views as report
from store.state import journal, location
from store.state.job import Job
from store.state.ledger import last_lines, read_last

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any, Callable, Optional, Sequence, Tuple


def _parser_class() -> Any:
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> Any:  # argparse would print usage and exit 2 itself
            raise BatonError(f"{message.replace(', NOTE', '')} (see `{self.prog} --help`)")

    return Parser


class Plain:
    """Arguments read without argparse, for the commands run most often (see :func:`_plain`)."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


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
    from store.cli import gitmerge

    registered = gitmerge.register(layout)
    if registered:
        print(registered)
    return 0


def cmd_record(args: argparse.Namespace, layout: location.Layout) -> int:
    message, code = actions.record_step(layout, os.environ, args.step, args.status, " ".join(args.note))
    first, *rest = message.split("\n")
    print(first)
    for line in rest:
        print(f"baton: {line}", file=sys.stderr)
    return code


def cmd_brief(args: argparse.Namespace, layout: location.Layout) -> int:
    job = Job(layout, os.environ)
    journal.warn_torn(job.torn)
    print(job.brief(os.environ.get("CLAUDE_CODE_SESSION_ID", "")))
    return 0


def cmd_status(args: argparse.Namespace, layout: location.Layout) -> int:
    job = Job(layout, os.environ)
    journal.warn_torn(job.torn)
    last, _ = read_last(layout.ledger, 5)
    data = report.status_data(job, last)
    if args.json:
        import json

        print(json.dumps(data, indent=2))
    else:
        print(report.status_text(data))
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
    start, end, torn = last_lines(layout.ledger, args.n)
    journal.warn_torn(len(torn))
    report.write_log(layout.ledger, start, end, args.json, sys.stdout)
    return 0


def cmd_repair(args: argparse.Namespace, layout: location.Layout) -> int:
    from store.state import repair

    if not layout.ledger.exists():
        raise BatonError(f"{layout.ledger}: no ledger here; nothing to repair")
    steps = Job(layout, os.environ, save=False).plan.ids if layout.plan.exists() else None
    done = repair.repair(layout, steps)
    for warning in done.warnings:
        print(f"baton: warning: {warning}", file=sys.stderr)
    if done.lines:
        print(f"moved {done.lines} bad line(s) ({done.size} bytes, from byte {done.offset}) to {done.kept_in}; "
              f"recorded as #{done.record['seq'] if done.record else '?'}; run `baton verify`")
    elif done.torn:
        print(f"removed a torn last line ({done.torn} bytes, kept in {layout.torn} when it could be written)")
    else:
        print("nothing to repair: the ledger ends on a valid record")
    return 0


def cmd_merge(args: argparse.Namespace, layout: location.Layout) -> int:
    from store.cli import gitmerge

    if args.register:
        if args.files:
            raise BatonError("give either --register or BASE OURS THEIRS")
        print(gitmerge.register(layout, required=True))
        return 0
    if len(args.files) != 3:
        raise BatonError("usage: baton merge BASE OURS THEIRS (as git's merge driver) or baton merge --register")
    merged = gitmerge.merge_files(Path(args.files[1]), Path(args.files[2]))
    print(f"baton: merged ledgers: {merged.added} record(s) of theirs appended after ours' {merged.ours}, "
          f"{merged.skipped} already present", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    import argparse

    parser: argparse.ArgumentParser = _parser_class()(
        prog="baton", description="Keep a long agent job's plan and ledger on disk; print its brief.")
    parser.add_argument("--version", action="version", version=f"baton {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=type(parser), metavar="COMMAND")
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
    p = sub.add_parser("repair", help="move bad lines off the ledger's end (kept in .baton/quarantine/)")
    p.set_defaults(func=cmd_repair)
    p = sub.add_parser("merge", help="merge two branches' ledgers (git's merge driver); --register sets it up")
    p.add_argument("files", nargs="*", metavar="FILE", help="BASE OURS THEIRS, as git passes them")
    p.add_argument("--register", action="store_true", help="register the driver in this git repository")
    p.set_defaults(func=cmd_merge)
    return parser


def _plain(argv: Sequence[str]) -> Optional[Tuple[Callable[[Any, location.Layout], int], Plain]]:
    """``baton brief`` and ``baton record STEP STATUS [NOTE...]`` with no option anywhere, parsed as
    argparse would parse them, without importing it (argparse, gettext and locale cost every such
    call a few milliseconds); anything else goes through argparse."""
    if list(argv) == ["brief"]:
        return cmd_brief, Plain()
    if len(argv) >= 3 and argv[0] == "record" and not any(a.startswith("-") for a in argv[1:]):
        return cmd_record, Plain(step=argv[1], status=argv[2], note=list(argv[3:]))
    return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command; every failure becomes one line on stderr and an exit code."""
    try:
        plain = _plain(sys.argv[1:] if argv is None else argv)
        if plain is not None:
            return int(plain[0](plain[1], location.resolve()))
        args = build_parser().parse_args(argv)
        if not getattr(args, "func", None):
            raise BatonError("missing command; one of init, record, brief, status, verify, log, repair, merge "
                             "(see `baton --help`)")
        return int(args.func(args, location.resolve()))
    except BatonError as exc:
        print(f"baton: {exc.message}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the environment, not baton: say what and where
        print(f"baton: {describe(exc)}", file=sys.stderr)
        return USAGE
    except Exception as exc:  # noqa: BLE001 - the one boundary: a bug is still one line, never a traceback
        print(f"baton: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return USAGE
