"""The ``baton`` command line: init, record, brief, status, report, export, verify, log, repair, merge,
once, run, session, commands, claim, release, store (verify to merge in ``ledger_commands``, claim
and release in ``parallel``; the parser and the one error handler here).

Usable by a person, by the model through Bash and by any other agent. Exit codes: 0 ok, 1 a check
failed (verify, validate, a refused record), 2 bad usage, bad input or an environment error (named
with its cause and path). Errors are one line on stderr; "internal error" is a bug.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from store import __version__
from store.base.errors import USAGE, BatonError, describe
from store.cli import actions, command_files, views
from store.cli.ledger_commands import cmd_log, cmd_merge, cmd_repair, cmd_verify
from store.cli.parallel import cmd_claim, cmd_release
from store.state import journal, location
from store.state.job import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any, Callable, List, Optional, Sequence, Tuple


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
        plan, old = actions.install(layout, text, args.plan, args.force)
    else:
        plan, old = actions.install(layout, actions.seed_plan_text(args.steps), "command line", args.force)
    other = location.job_nearby(layout)
    files = command_files.install(command_files.folder_for("project", layout.project, _home())) \
        if args.commands else []
    from store.cli import gitmerge

    registered = gitmerge.register(layout)
    if args.json:
        print(views.to_json({"plan": str(layout.plan), "project": str(layout.project), "steps": len(plan.steps),
                              "archived": old.as_json() if old else None, "other_job": str(other) if other else None,
                              "command_files": dict(files), "merge_driver": registered or None}))
        return 0
    print(f"created {layout.plan} with {len(plan.steps)} steps; run `baton brief`")
    note = actions.checkpoint_note(plan)
    if note:
        print(note)
    if old:
        print(f"started a new job with a clean ledger; {old.describe(_shown(old.folder))}")
    if other:
        print(f"note: {other} is another job's, outside this project ({layout.project}); it is not used here")
    for path, what in files:
        print(f"{path}: {what}")
    if registered:
        print(registered)
    return 0


def artifact_options(words: Sequence[str]) -> Tuple[List[Tuple[str, Optional[str]]], List[str]]:
    """``--artifact PATH_OR_URI [--sha256 HEX]`` repeated at the start of a record's note, then the
    note; ``--`` ends the options (a note may then start with ``--artifact``)."""
    extra: List[Tuple[str, Optional[str]]] = []
    rest = list(words)
    while rest and rest[0] in ("--artifact", "--sha256"):
        if len(rest) < 2 or not rest[1]:
            raise BatonError(f"{rest[0]} needs a value (see `baton record --help`)")
        if rest[0] == "--artifact":
            extra.append((rest[1], None))
        elif not extra or extra[-1][1] is not None or not re.fullmatch(r"[0-9a-fA-F]{64}", rest[1]):
            raise BatonError("--sha256 takes 64 hex digits and follows the --artifact it is for")
        else:
            extra[-1] = (extra[-1][0], rest[1])
        rest = rest[2:]
    return extra, rest[1:] if rest[:1] == ["--"] else rest


def cmd_record(args: argparse.Namespace, layout: location.Layout) -> int:
    _need_plan(layout)
    extra, note = artifact_options(args.note)
    done = actions.record(layout, os.environ, args.step, args.status, " ".join(note), extra=extra)
    if args.json:
        print(views.to_json(done.as_json()))
        return done.code
    first, *rest = done.message.split("\n")
    print(first)
    for line in rest:
        print(f"baton: {line}", file=sys.stderr)
    return done.code


def cmd_brief(args: argparse.Namespace, layout: location.Layout) -> int:
    from store.checkpoint import brief_news
    from store.monitor.limits import job_news

    _need_plan(layout)
    job = Job(layout, os.environ)
    journal.warn_torn(job.torn)
    session = os.environ.get("CLAUDE_CODE_SESSION_ID", "")
    if args.json:
        print(views.to_json(views.brief_data(job, session)))
        return 0
    gates = views.gates_news(job, os.environ)
    print(job.brief(session, [*job_news(job), *([gates] if gates else []), *brief_news(job)]))
    return 0


def cmd_status(args: argparse.Namespace, layout: location.Layout) -> int:
    _need_plan(layout)
    job = Job(layout, os.environ)
    journal.warn_torn(job.torn)
    last, _ = journal.last_records(layout, 5)
    data = views.status_data(job, last)
    if args.json:
        import json

        print(json.dumps(data, indent=2))
    else:
        from store.cli.dashboard import use_colour

        print(views.status_text(data, use_colour(sys.stdout, os.environ), args.all))
    return 0


def cmd_report(args: argparse.Namespace, layout: location.Layout) -> int:
    from store.cli import report

    return report.cmd_report(args, layout)


def cmd_export(args: argparse.Namespace, layout: location.Layout) -> int:
    from store.cli import report

    return report.cmd_export(args, layout)


def cmd_once(args: argparse.Namespace, layout: location.Layout) -> int:
    from store.cli import once

    return once.run(args.args, layout)


def cmd_commands(args: argparse.Namespace, layout: location.Layout) -> int:
    scope = "user" if args.user else "project"
    folder = command_files.folder_for(scope, layout.project, _home())
    done = command_files.install(folder) if args.action == "install" else command_files.remove(folder)
    if args.json:
        print(views.to_json({"folder": str(folder), "files": dict(done)}))
    else:
        for path, what in done:
            print(f"{path}: {what}")
    return 0


def _home() -> Path:
    return Path(os.path.expanduser("~"))


def _shown(path: Path) -> str:
    """A path as a person in this folder would type it."""
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)


def _need_plan(layout: location.Layout) -> None:
    if layout.has_plan():
        return
    other = location.job_nearby(layout)
    near = f"; {other} is another job's, outside this project" if other else ""
    raise BatonError(f"{layout.plan}: no plan here{near}; create one with `baton init STEP...` "
                     "or `baton init --plan FILE`")


def cmd_store(args: argparse.Namespace, layout: location.Layout) -> int:
    from store.cli import transfer

    copy = transfer.push if args.action == "push" else transfer.pull
    return copy(layout, args.url, args.job, args.json)


def build_parser() -> argparse.ArgumentParser:
    import argparse

    parser: argparse.ArgumentParser = _parser_class()(
        prog="baton", description="Keep a long agent job's plan and ledger on disk; print its brief.")
    parser.add_argument("--version", action="version", version=f"baton {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=type(parser), metavar="COMMAND")
    p = sub.add_parser("init", help="create the job: .baton/plan.json from step names or a plan file")
    p.add_argument("steps", nargs="*", metavar="STEP")
    p.add_argument("--plan", metavar="FILE", help="a plan file (seed or rich form) to validate and install")
    p.add_argument("--force", action="store_true", help="replace an existing plan (the old job is archived)")
    p.add_argument("--commands", action="store_true", help="also install the bare /brief and /record commands")
    p.set_defaults(func=cmd_init)
    p = sub.add_parser("record", help="append STEP STATUS [--artifact PATH_OR_URI [--sha256 HEX]]... [NOTE...]")
    p.add_argument("step", metavar="STEP")
    p.add_argument("status", metavar="STATUS", help=f"one of {', '.join(journal.STATUSES)}")
    p.add_argument("note", nargs=argparse.REMAINDER, metavar="NOTE")
    p.set_defaults(func=cmd_record)
    sub.add_parser("brief", help="print the brief (PLAN / DONE / NEXT / LAST)").set_defaults(func=cmd_brief)
    p = sub.add_parser("status", help="the job's dashboard: progress, time, cost, tokens, tools, sessions, alerts")
    p.add_argument("--json", action="store_true", help="the status document (schema baton.status, version 1)")
    p.add_argument("--all", action="store_true", help="list every step, however long the plan")
    p.set_defaults(func=cmd_status)
    p = sub.add_parser("verify", help="check the ledger's hash chain (and, with --artifacts, the checkpoints)")
    p.add_argument("--artifacts", action="store_true", help="also check every DONE step's artifacts and inputs")
    p.set_defaults(func=cmd_verify)
    p = sub.add_parser("report", help="the job's whole summary as text, or as one self-contained HTML page")
    p.add_argument("--html", metavar="FILE", help="write the report as an HTML page to FILE")
    p.set_defaults(func=cmd_report)
    p = sub.add_parser("export", help="send the job's figures to an OpenTelemetry collector (OTLP/HTTP JSON) now")
    p.add_argument("--print", action="store_true", help="print the request bodies instead of sending them")
    p.set_defaults(func=cmd_export)
    p = sub.add_parser("log", help="the last ledger records")
    p.add_argument("-n", type=int, default=20, help="how many (default 20)")
    p.set_defaults(func=cmd_log)
    p = sub.add_parser("repair", help="move bad lines off the ledger's end (kept in .baton/quarantine/)")
    p.set_defaults(func=cmd_repair)
    p = sub.add_parser("merge", help="merge two branches' ledgers (git's merge driver); --register sets it up")
    p.add_argument("files", nargs="*", metavar="FILE", help="BASE OURS THEIRS, as git passes them")
    p.add_argument("--register", action="store_true", help="register the driver in this git repository")
    p.set_defaults(func=cmd_merge)
    # listed for --help; main() hands `once` its words before argparse sees them
    p = sub.add_parser("once", help="run a side effect at most once (see `baton once --help`)", prefix_chars="+",
                       add_help=False)
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_once)
    from store.cli.run import add_commands

    add_commands(sub)
    p = sub.add_parser("commands", help="install or remove the bare /brief and /record command files")
    p.add_argument("action", choices=("install", "remove"))
    where = p.add_mutually_exclusive_group()
    where.add_argument("--project", action="store_true", help="in the project's .claude/commands (the default)")
    where.add_argument("--user", action="store_true", help="in ~/.claude/commands")
    p.set_defaults(func=cmd_commands)
    p = sub.add_parser("claim", help="take a ready step of a parallel plan for this worker")
    p.add_argument("--worker", metavar="NAME", help="the worker (default: $BATON_WORKER, else the session)")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="poll until a step is ready")
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
    for name, command in sub.choices.items():
        if name != "once" and "--json" not in command._option_string_actions:  # once reads its own words
            command.add_argument("--json", action="store_true", help="print JSON for programs")
    return parser


def _plain(argv: Sequence[str]) -> Optional[Tuple[Callable[[Any, location.Layout], int], Plain]]:
    """``baton brief`` and ``baton record STEP STATUS [NOTE...]`` with no option anywhere, parsed as
    argparse would parse them, without importing it (argparse, gettext and locale cost every such
    call a few milliseconds); anything else goes through argparse."""
    if list(argv) == ["brief"]:
        return cmd_brief, Plain(json=False, argv=list(argv))
    if len(argv) >= 3 and argv[0] == "record" and not any(a.startswith("-") for a in argv[1:]):
        return cmd_record, Plain(step=argv[1], status=argv[2], note=list(argv[3:]), json=False, argv=list(argv))
    return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command; every failure becomes one line on stderr and an exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    if os.environ.get("BATON_SANDBOX") == "1":  # inside baton's sandbox: the job is reached through its broker
        from store.cli import inside

        carried = inside.run(words)
        if carried is not None:
            return carried
    try:
        if words[:1] == ["once"]:  # its words go to the command it runs untouched, whatever argparse does with "--"
            from store.cli import once

            return once.run(words[1:], location.resolve())
        plain = _plain(words)
        if plain is not None:
            return int(plain[0](plain[1], location.resolve()))
        args = build_parser().parse_args(words)
        args.argv = words  # `baton run` tells the person how to start it again
        if not getattr(args, "func", None):
            raise BatonError("missing command; one of init, record, brief, status, report, export, verify, log, "
                             "repair, merge, once, run, session, commands, claim, release, store (see `baton --help`)")
        if args.func is cmd_record and args.note[:1] == ["--json"]:  # `record STEP STATUS --json NOTE...`
            args.json, args.note = True, args.note[1:]
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
