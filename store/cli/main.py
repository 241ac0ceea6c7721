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
    extra = [*(getattr(args, "artifacts", None) or []), *extra]  # --artifact before STEP, then after STATUS
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
    from store.cli.job_needed import need_plan

    need_plan(layout)


def cmd_store(args: argparse.Namespace, layout: location.Layout) -> int:
    from store.cli import transfer
    from store.cli.job_needed import need_job

    if args.action == "push":
        need_job(layout)  # pull may start a job's records here; push needs them
    copy = transfer.push if args.action == "push" else transfer.pull
    return copy(layout, args.url, args.job, args.json)


HANDLERS = {"init": cmd_init, "record": cmd_record, "brief": cmd_brief, "status": cmd_status, "verify": cmd_verify,
            "report": cmd_report, "export": cmd_export, "log": cmd_log, "repair": cmd_repair, "merge": cmd_merge,
            "once": cmd_once, "commands": cmd_commands, "claim": cmd_claim, "release": cmd_release,
            "store": cmd_store}


def build_parser() -> argparse.ArgumentParser:
    """The whole grammar (:mod:`store.cli.arguments`), each command bound to its function here."""
    from store.cli import arguments

    return arguments.build_parser(HANDLERS)


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
        from store.cli import arguments

        args = arguments.parse(build_parser(), words)
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
