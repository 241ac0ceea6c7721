"""Run a baton job from the Claude Agent SDK: sessions one after another until the job is done.

Each session loads the baton plugin, so it is handed the brief and its tool calls are gated. After
each one the script writes a `session` record into the job's ledger (`baton session`), reads the
job's status as JSON (`baton status --json`), and after an API error resumes the same session.

    pip install claude-agent-sdk                  # Python 3.10 or newer
    python3 examples/agent_sdk.py --project ~/my-project

Exit codes as `baton run`'s: 0 done, 3 waiting for a person's approval, 5 no progress.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from pathlib import Path

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKError, ResultMessage, query

PROMPT = ("Go on with this job. baton's brief, in your context, says what is NEXT: do that step, record it "
          "with baton record, and keep going until NEXT says all steps are complete or a line says WAITING.")
ENDINGS = {"error_max_turns": "turn_cap", "error_max_budget_usd": "budget"}


def baton(plugin: Path, project: Path, *args: str) -> str:
    """Run baton's own CLI (from the plugin folder, so it need not be on PATH) in the project."""
    done = subprocess.run([sys.executable, str(plugin / "bin" / "baton"), *args], cwd=project,
                          capture_output=True, text=True, check=True)
    return done.stdout


async def one_session(options: ClaudeAgentOptions) -> ResultMessage | None:
    """Run one session; its result message (None when Claude Code died before giving one)."""
    result = None
    try:
        async for message in query(prompt=PROMPT, options=options):
            if isinstance(message, ResultMessage):
                result = message
    except ClaudeSDKError:
        pass  # an error result is yielded first, then raised; a crash gives no result at all
    return result


def recorded(before: dict, after: dict) -> bool:
    """Whether a step outcome or an approval was recorded between two `baton status --json`."""
    def outcomes(job: dict) -> set:
        return {(s["id"], s["status"], s["attempt"], s["approved"]) for s in job["steps"] if s["status"] != "running"}
    return bool(outcomes(after) - outcomes(before))


def ending_of(result: ResultMessage | None) -> str:
    if result is None:
        return "crashed"
    if result.subtype in ENDINGS:
        return ENDINGS[result.subtype]
    if result.terminal_reason == "api_error":
        return "api_error"
    return "error" if result.is_error else "completed"


async def run_job(project: Path, plugin: Path, cli: str | None, max_idle: int, first_wait: float) -> int:
    resume, idle, failures = None, 0, 0
    while idle < max_idle:
        job = json.loads(baton(plugin, project, "status", "--json"))
        if job["next"] is None:
            print(f"done: {job['done']} of {job['total']} steps")
            return 0
        step = next(s for s in job["steps"] if s["id"] == job["next"])
        if step["approval"] and not step["approved"]:
            print(f"waiting for a person's approval of {step['id']}: claude -p \"/baton:approve {step['id']}\"")
            return 3
        options = ClaudeAgentOptions(
            cwd=str(project), cli_path=cli, resume=resume,
            plugins=[{"type": "local", "path": str(plugin)}],
            system_prompt={"type": "preset", "preset": "claude_code"},  # the default would send an empty one
            permission_mode="acceptEdits", allowed_tools=["Bash"],
        )
        result = await one_session(options)
        ended = ending_of(result)
        figures = ["--cost-usd", str(result.total_cost_usd or 0), "--turns", str(result.num_turns)] if result else []
        baton(plugin, project, "session", result.session_id if result else "", ended, *figures)
        after = json.loads(baton(plugin, project, "status", "--json"))
        print(f"session {result.session_id if result else '?'}: {ended}; NEXT {after['next'] or '(none)'}")
        idle = 0 if recorded(job, after) else idle + (ended != "api_error")
        resume = result.session_id if ended == "api_error" and result else None  # keep its conversation
        failures = failures + 1 if ended in ("api_error", "crashed", "error") else 0
        if failures:
            await asyncio.sleep(min(first_wait * 2 ** (failures - 1), 600))
    print(f"no progress in {max_idle} sessions in a row")
    return 5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, default=Path.cwd(), help="the project holding .baton/")
    parser.add_argument("--plugin", type=Path, default=Path(__file__).resolve().parents[1], help="baton's folder")
    parser.add_argument("--cli", help="the Claude Code executable (default: the one the SDK bundles)")
    parser.add_argument("--max-idle-sessions", type=int, default=3)
    parser.add_argument("--first-wait", type=float, default=15.0, help="seconds after a first failure, doubling")
    args = parser.parse_args()
    return asyncio.run(run_job(args.project.resolve(), args.plugin.resolve(), args.cli, args.max_idle_sessions,
                               args.first_wait))


if __name__ == "__main__":
    sys.exit(main())
