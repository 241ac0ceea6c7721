"""``baton run`` (the supervisor, see ``store.run``) and ``baton session`` (the record a script that
drives Claude Code itself, such as an Agent SDK program, writes after each session).

Every ``baton`` command builds this parser, so the supervisor's machinery is imported only when one
of these two commands runs.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from store.base.errors import BatonError
from store.run.command_line import PROMPT
from store.run.stream import ENDINGS
from store.state.location import Layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, List

PLUGIN_ROOT = str(Path(__file__).resolve().parents[2])


def _number(kind: Callable[[str], Any], low: float, above: bool = False) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value < low or (above and value == low):
            raise argparse.ArgumentTypeError(f"{text!r} must be {'above' if above else 'at least'} {low:g}")
        return value

    return parse


def add_commands(sub: Any, formatter: Any = argparse.HelpFormatter,
                 examples: Callable[..., str] = lambda *lines: "") -> None:
    """``run`` and ``session``; ``formatter`` and ``examples`` lay their help out as the others' is."""
    p = sub.add_parser("run", help="drive Claude Code headless, session after session, until the job is done",
                       description="Start `claude -p` in the project, session after session, until every step is "
                                   "complete or the run must stop (see the exit codes in docs/run.md). Arguments after "
                                   "-- go to Claude Code (e.g. -- --permission-mode acceptEdits).",
                       epilog=examples("baton run -- --permission-mode acceptEdits",
                                       "baton run --max-idle-sessions 2 --notify 'notify-send done' -- --model opus"),
                       formatter_class=formatter)
    p.add_argument("--claude", default="claude", metavar="PATH", help="the Claude Code executable (default: claude)")
    p.add_argument("--plugin-dir", nargs="?", const=PLUGIN_ROOT, default="", metavar="DIR",
                   help="load baton from DIR for each session instead of the installed plugin (no DIR: this baton)")
    p.add_argument("--prompt", default=PROMPT, help="the prompt each session starts with")
    p.add_argument("--resume-policy", choices=("fresh", "resume"), default="fresh",
                   help="after an API error, start fresh (default) or resume the failed session")
    p.add_argument("--max-idle-sessions", type=_number(int, 1), default=3, metavar="N",
                   help="stop after N sessions in a row that record nothing (default 3)")
    p.add_argument("--max-retries", type=_number(int, 0), default=50, metavar="N",
                   help="retries after API errors in a row before giving up (default 50)")
    p.add_argument("--first-wait", type=_number(float, 0), default=15.0, metavar="SECONDS",
                   help="the wait after a first failure, doubled after each one in a row (default 15)")
    p.add_argument("--max-wait", type=_number(float, 0), default=600.0, metavar="SECONDS",
                   help="the longest wait between sessions, a retry-after included (default 600)")
    p.add_argument("--notify", default="", metavar="CMD", help="a shell command to run when the run ends on its own")
    p.add_argument("--json", action="store_true", help="one JSON event per line instead of text")
    p.add_argument("claude_args", nargs=argparse.REMAINDER, metavar="-- CLAUDE_ARGS",
                   help="after --: arguments for every `claude -p` session (permission mode, model, settings)")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("session", help="record how a Claude Code session ended (for scripts driving Claude Code)",
                       description="Record how one Claude Code session ended, with its cost and turns, as `baton run` "
                                   "does for its own sessions: for a script that drives Claude Code itself (an Agent "
                                   "SDK program, see examples/agent_sdk.py). The figures and the report count it.",
                       epilog=examples("baton session 5c1f09aa-0000-4000-8000-000000000000 completed --cost-usd 0.42 "
                                       "--turns 17"),
                       formatter_class=formatter)
    p.add_argument("session_id", metavar="SESSION_ID", help="the session's id, as Claude Code gives it (session_id)")
    p.add_argument("ended", metavar="ENDED", help=f"how it ended: one of {', '.join(ENDINGS)}")
    p.add_argument("--cost-usd", type=_number(float, 0), metavar="USD",
                   help="total_cost_usd as Claude Code reports it (cumulative over resumes; baton keeps the new part)")
    p.add_argument("--turns", type=_number(int, 0), metavar="N", help="num_turns as Claude Code reports it")
    p.add_argument("--step", metavar="STEP", help="the step the session was started on (default: NEXT)")
    p.add_argument("--note", default="", metavar="TEXT", help="one line: what happened (the error, the signal)")
    p.set_defaults(func=cmd_session)


def claude_args(raw: List[str]) -> List[str]:
    return raw[1:] if raw[:1] == ["--"] else raw


def cmd_run(args: argparse.Namespace, layout: Layout) -> int:
    import shlex

    from store.cli.job_needed import need_plan
    from store.cli.progress import Reporter
    from store.run import command_line
    from store.run.supervisor import Config, Supervisor

    need_plan(layout)  # before looking for Claude Code: outside a job there is nothing to run
    user_args, caps = command_line.split_user_args(claude_args(args.claude_args))
    again = "baton " + shlex.join(getattr(args, "argv", None) or ["run"])
    config = Config(args.claude, os.path.abspath(args.plugin_dir) if args.plugin_dir else "", args.prompt,
                    user_args, caps, args.first_wait, args.max_wait, args.max_retries, args.max_idle_sessions,
                    args.resume_policy == "resume", args.notify, again)
    return Supervisor(layout, config, Reporter(sys.stdout, args.json), os.environ).run()


def cmd_session(args: argparse.Namespace, layout: Layout) -> int:
    from store.run import records
    from store.state import journal
    from store.state.job import Job

    journal.check_note(args.note)
    job = Job(layout, os.environ)
    if args.step is not None and job.plan.step(args.step) is None:
        raise BatonError(f"unknown step {args.step!r}")
    step = args.step or (job.next.id if job.next else job.plan.ids[-1])
    record = records.record_session(layout, step, args.session_id, args.ended, args.note, args.cost_usd, args.turns)
    cost = f", ${record['cost_usd']:.4f}" if "cost_usd" in record else ""
    print(f"recorded session {args.session_id[:8] or '(no id)'} {args.ended} on {step} (#{record['seq']}{cost})")
    return 0
