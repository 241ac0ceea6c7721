"""The ``baton`` command line's grammar: every subcommand with a sentence saying what it does, every
argument described (positional ones too) and examples where one helps, as ``--help`` shows them.

Mistakes never print argparse's usage block: they become one :class:`BatonError` line that names
the nearest valid word (``baton stauts`` -> did you mean 'status'?; see :mod:`store.cli.typos`).
The handlers are passed in by name, so this module imports none of them.
"""

from __future__ import annotations

import argparse

from store import __version__
from store.base.errors import BatonError
from store.cli import typos
from store.state import journal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

    Handler = Callable[[Any, Any], int]

EXAMPLES = "examples:\n"


class Formatter(argparse.HelpFormatter):
    """Descriptions wrapped to the terminal, as argparse does; the examples kept line for line."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(EXAMPLES):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


JSON_COMMANDS = ("init", "record", "brief", "status", "verify", "report", "export", "log", "commands", "claim",
                 "release", "store")  # the commands that print JSON with --json (run has its own)


class Parser(argparse.ArgumentParser):
    """argparse whose errors are one line with the nearest valid word, never a usage block and exit."""

    def error(self, message: str) -> Any:  # argparse would print usage and exit 2 itself
        raise BatonError(f"{message.replace(', NOTE', '')} (see `{self.prog} --help`)")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(c) for c in choices]
        if isinstance(action, argparse._SubParsersAction):
            what = "command"
        elif action.option_strings:
            what = action.option_strings[-1]
        else:
            what = str(action.metavar or action.dest).lower()
        raise argparse.ArgumentError(None, typos.unknown(what, str(value), names))


class ArtifactOption(argparse.Action):
    """``--artifact PATH_OR_URI`` before STEP: kept in order with the ``--sha256`` that follows it."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option: Optional[str] = None) -> None:
        kept: List[Tuple[str, Optional[str]]] = list(getattr(namespace, self.dest, None) or [])
        if option == "--artifact":
            kept.append((str(values), None))
        else:
            import re

            if not kept or kept[-1][1] is not None or not re.fullmatch(r"[0-9a-fA-F]{64}", str(values)):
                raise argparse.ArgumentError(self, "takes 64 hex digits and follows the --artifact it is for")
            kept[-1] = (kept[-1][0], str(values))
        setattr(namespace, self.dest, kept)


def _command(sub: Any, name: str, summary: str, description: str, examples: Sequence[str] = (),
             **extra: Any) -> argparse.ArgumentParser:
    """A subcommand: ``summary`` for ``baton --help``, ``description`` (sentences) and examples for its own."""
    epilog = EXAMPLES + "\n".join(f"  {line}" for line in examples) if examples else None
    parser: argparse.ArgumentParser = sub.add_parser(name, help=summary, description=description, epilog=epilog,
                                                     formatter_class=Formatter, **extra)
    return parser


def _job_commands(sub: Any) -> None:
    p = _command(sub, "init", "create the job: .baton/plan.json from step names or a plan file",
                 "Create this project's job: .baton/plan.json at the git top level (else here), from step names "
                 "in order or from a plan file, which is validated first. A job that exists is replaced only "
                 "with --force, which archives it.",
                 ["baton init fetch-data clean-data train report", "baton init --plan plan.json",
                  "baton init --force --plan plan.json   # start over; the old job goes to .baton/archive/"])
    p.add_argument("steps", nargs="*", metavar="STEP", help="a step's name, in the order the work is done")
    p.add_argument("--plan", metavar="FILE", help="a plan file (seed or rich form) to validate and install")
    p.add_argument("--force", action="store_true", help="replace an existing plan (the old job is archived)")
    p.add_argument("--commands", action="store_true", help="also install the bare /brief and /record commands")
    p = _command(sub, "record", "append a record: a step running, done, failed or skipped",
                 "Append one record to the ledger: STEP is now STATUS, with an optional NOTE (the rest of the "
                 f"line, kept whole up to {journal.NOTE_MAX:,} characters). `done` is a checkpoint: the step's "
                 "artifacts must exist, and its validate command runs first (a failure is recorded as failed).",
                 ['baton record fetch-data running', 'baton record fetch-data done "data/raw.csv, 12,408 rows"',
                  "baton record train done --artifact model.pt trained 3 epochs",
                  'baton record train failed "out of memory at epoch 2"'],
                 usage="baton record [-h] [--json] STEP STATUS [--artifact PATH_OR_URI [--sha256 HEX]]... "
                       "[NOTE ...]")
    p.add_argument("step", metavar="STEP", help="the step's name, as in the plan")
    p.add_argument("status", metavar="STATUS", help=f"one of {', '.join(journal.STATUSES)} (any case)")
    p.add_argument("note", nargs=argparse.REMAINDER, metavar="NOTE",
                   help="what a reader needs to know: the words after STATUS (and its options), joined by spaces")
    p.add_argument("--artifact", dest="artifacts", action=ArtifactOption, default=[], metavar="PATH_OR_URI",
                   help="with done: a file or URI the step produced, whose checksum the record keeps; repeat "
                        "for more. Given right after STATUS (or before STEP); `--` ends the options")
    p.add_argument("--sha256", dest="artifacts", action=ArtifactOption, default=[], metavar="HEX",
                   help="the known checksum of the --artifact just before it (a URI baton cannot read)")
    _command(sub, "brief", "print the brief (PLAN / DONE / NEXT / LAST)",
             "Print the brief every session's model is handed first: the plan, what is done, NEXT, the last "
             "record, and a line for each piece of news (a step left running, an approval waited for, a limit).")
    p = _command(sub, "status", "the job's dashboard: progress, time, cost, tokens, tools, sessions, alerts",
                 "Show the job's dashboard: progress, active time, cost and tokens, tool outcomes, sessions, "
                 "alerts and the last records.", ["baton status", "baton status --all", "baton status --json"])
    p.add_argument("--json", action="store_true", help="the status document (schema baton.status, version 1)")
    p.add_argument("--all", action="store_true", help="list every step, however long the plan")
    p = _command(sub, "verify", "check the ledger's hash chain (and, with --artifacts, the checkpoints)",
                 "Walk the ledger's hash chain and name the first bad line; exit 1 when it is broken. A torn "
                 "last line left by a killed writer is told apart from corruption.",
                 ["baton verify", "baton verify --artifacts"])
    p.add_argument("--artifacts", action="store_true", help="also check every DONE step's artifacts and inputs")
    p = _command(sub, "report", "the job's whole summary as text, or as one self-contained HTML page",
                 "Print the job's whole summary: every step and session, the figures and the alerts; with "
                 "--html, write it as one self-contained HTML page instead.", ["baton report --html report.html"])
    p.add_argument("--html", metavar="FILE", help="write the report as an HTML page to FILE")
    p = _command(sub, "export", "send the job's figures to an OpenTelemetry collector (OTLP/HTTP JSON) now",
                 "Send the job's figures to the OpenTelemetry collector the OTEL_* settings name, now "
                 "(the hooks also export at the end of each session when BATON_TELEMETRY=1).",
                 ["baton export --print   # show what would be sent"])
    p.add_argument("--print", action="store_true", help="print the request bodies instead of sending them")
    p = _command(sub, "log", "the last ledger records",
                 "Print the ledger's last records, oldest first, one per line (with --json, one JSON object each).",
                 ["baton log -n 5", "baton log -n 100 --json"])
    p.add_argument("-n", type=int, default=20, metavar="N", help="how many records (default 20)")


def _upkeep_commands(sub: Any) -> None:
    _command(sub, "repair", "move bad lines off the ledger's end (kept in .baton/quarantine/)",
             "Move a torn or damaged end of the ledger aside (kept byte for byte in .baton/quarantine/) and "
             "record what was moved, so records can be appended again. `baton verify` says when it is needed.")
    p = _command(sub, "merge", "merge two branches' ledgers (git's merge driver); --register sets it up",
                 "Merge two branches' ledgers as git's merge driver: ours is kept and theirs is chained on after "
                 "it. `baton init` registers the driver; a new clone runs `baton merge --register` once.",
                 ["baton merge --register"])
    p.add_argument("files", nargs="*", metavar="FILE", help="BASE OURS THEIRS, the three files git passes")
    p.add_argument("--register", action="store_true", help="register the driver in this git repository")
    # listed for --help; main() hands `once` its words before argparse sees them
    p = _command(sub, "once", "run a side effect at most once (see `baton once --help`)",
                 "Run a command at most once for a key in this job; see `baton once --help`.",
                 prefix_chars="+", add_help=False)
    p.add_argument("args", nargs=argparse.REMAINDER, metavar="KEY -- CMD", help="see `baton once --help`")


def _setup_commands(sub: Any) -> None:
    p = _command(sub, "commands", "install or remove the bare /brief and /record command files",
                 "Write or remove the command files that give the bare /brief and /record in Claude Code "
                 "(the /baton: commands always work). A file you wrote yourself is never touched.",
                 ["baton commands install", "baton commands install --user", "baton commands remove"])
    p.add_argument("action", choices=("install", "remove"), metavar="ACTION", help="install or remove")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--project", action="store_true", help="in the project's .claude/commands (the default)")
    where.add_argument("--user", action="store_true", help="in ~/.claude/commands")
    p = _command(sub, "claim", "take a ready step of a parallel plan for this worker",
                 "Give this worker a ready step of a parallel plan (one whose steps say what they `needs`), "
                 "or say which it already holds; exit 1 when nothing is ready.",
                 ["baton claim --worker w1", "baton claim --wait 60"])
    p.add_argument("--worker", metavar="NAME", help="the worker (default: $BATON_WORKER, else the session)")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="poll until a step is ready")
    p = _command(sub, "release", "give back the step this worker holds",
                 "Give back the step this worker holds in a parallel plan, so another worker may claim it now.",
                 ['baton release --worker w1 "blocked on the API key"'])
    p.add_argument("--worker", metavar="NAME", help="the worker (default: $BATON_WORKER, else the session)")
    p.add_argument("note", nargs=argparse.REMAINDER, metavar="NOTE", help="why it is given back (the rest of the line)")
    p = _command(sub, "store", "copy a job between .baton/steps.jsonl and a PostgreSQL database",
                 "Copy the job between .baton/steps.jsonl and a PostgreSQL database, line for line, verifying "
                 "both chains before it reports success; a different history is refused, never merged.",
                 ["baton store push postgresql://baton@db.example.com/baton", "baton store pull --job port-api"])
    p.add_argument("action", choices=("push", "pull"), metavar="ACTION",
                   help="push: file to database; pull: database to file")
    p.add_argument("url", nargs="?", default="", metavar="URL", help="the database (default: $BATON_DATABASE_URL)")
    p.add_argument("--job", default="", metavar="NAME", help="the job's name (default: $BATON_JOB or the plan's)")


def build_parser(handlers: Mapping[str, Handler]) -> argparse.ArgumentParser:
    """The whole grammar; ``handlers`` maps each command's name to its function (``run`` and
    ``session`` bring their own)."""
    from store.cli.run import add_commands

    parser = Parser(prog="baton", formatter_class=Formatter,
                    description="Keep a long agent job's plan and ledger on disk; print its brief.",
                    epilog="`baton COMMAND --help` says what a command does, with its arguments and examples.")
    parser.add_argument("--version", action="version", version=f"baton {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=Parser, metavar="COMMAND")
    _job_commands(sub)  # in the order `baton --help` lists them
    _upkeep_commands(sub)
    add_commands(sub, Formatter, lambda *lines: EXAMPLES + "\n".join(f"  {line}" for line in lines))
    _setup_commands(sub)
    for name, command in sub.choices.items():
        if name in handlers:
            command.set_defaults(func=handlers[name])
        if name in JSON_COMMANDS and "--json" not in command._option_string_actions:
            command.add_argument("--json", action="store_true", help="print JSON for programs")
    parser.set_defaults(commands=dict(sub.choices))
    return parser


def parse(parser: argparse.ArgumentParser, words: List[str]) -> argparse.Namespace:
    """``parser.parse_args(words)``, but a word no command knows names the nearest option."""
    args, extra = parser.parse_known_args(words)
    if extra:
        command: Optional[argparse.ArgumentParser] = (args.commands or {}).get(getattr(args, "command", None) or "")
        known: Dict[str, Any] = dict((command or parser)._option_string_actions)
        raise BatonError(typos.unrecognized(extra, sorted(known), command.prog if command else "baton"))
    return args
