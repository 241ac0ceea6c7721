"""The command line and environment of each Claude Code session that ``baton run`` starts.

``claude -p PROMPT --output-format stream-json --verbose``, allow rules for baton's own commands (so
the model can record progress when no one is there to answer a permission prompt), the plugin
directory when one is given, ``--max-turns``, ``--max-budget-usd`` and ``--task-budget`` from what is
left of the job's limits (or the person's own, smaller values after ``--``), ``--resume`` when
resuming, then the person's arguments; its hooks get ``BATON_PARK_APPROVALS=1`` (park a call that waits for an
approval). ``--task-budget`` (hidden from Claude Code's help) puts
``output_config.task_budget`` in every request, so the model is told how many tokens the job has
left; the API takes it as advice to the model, not a cap, and refuses a total under
:data:`MIN_TASK_BUDGET`, so a smaller rest is sent as that minimum. ``OTEL_RESOURCE_ATTRIBUTES``
gets ``baton.job.id=<job id>`` appended: the attribute baton's own export puts on every point, so a
backend can join the two.
"""

from __future__ import annotations

import math

from store.base.errors import BatonError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Mapping, Optional, Sequence, Tuple

PROMPT = ("Go on with this job. baton's brief, in your context, says what is NEXT: do that step, record it "
          "with baton record, and keep going until NEXT says all steps are complete or a line says WAITING.")
BATON_RULES = ("Bash(baton brief)", "Bash(baton status)", "Bash(baton status --json)", "Bash(baton log)",
               "Bash(baton log *)", "Bash(baton verify)", "Bash(baton record *)")
OWN_FLAGS = ("-p", "--print", "--output-format", "--input-format", "-r", "--resume", "-c", "--continue",
             "--session-id", "--fork-session")
CAPS = {"--max-turns": "turns", "--max-budget-usd": "cost_usd", "--task-budget": "tokens"}
WHOLE = ("turns", "tokens")  # caps given as whole numbers
MIN_TASK_BUDGET = 1024  # the Messages API's minimum for output_config.task_budget.total
PARK_APPROVALS = "BATON_PARK_APPROVALS"  # store.gate.parking.ENV


class Caps:
    """Per-session caps: the tighter of what is left of the job's limits and the person's own.
    ``tokens`` is the task budget: the job's tokens left, told to the model through the API."""

    __slots__ = ("turns", "cost_usd", "tokens")

    def __init__(self, turns: Optional[int] = None, cost_usd: Optional[float] = None,
                 tokens: Optional[int] = None) -> None:
        self.turns, self.cost_usd, self.tokens = turns, cost_usd, tokens

    def tighter(self, other: Caps) -> Caps:
        def low(a: Optional[float], b: Optional[float]) -> Optional[float]:
            return b if a is None else a if b is None else min(a, b)

        turns, tokens = low(self.turns, other.turns), low(self.tokens, other.tokens)
        return Caps(None if turns is None else int(turns), low(self.cost_usd, other.cost_usd),
                    None if tokens is None else int(tokens))

    def flags(self) -> List[str]:
        out = ["--max-turns", str(self.turns)] if self.turns is not None else []
        if self.cost_usd is not None:
            out += ["--max-budget-usd", format(self.cost_usd, ".10g")]
        if self.tokens is not None:
            out += ["--task-budget", str(max(self.tokens, MIN_TASK_BUDGET))]
        return out


def split_user_args(args: Sequence[str]) -> Tuple[List[str], Caps]:
    """The person's arguments for Claude Code without ``--max-turns``, ``--max-budget-usd`` and
    ``--task-budget`` (returned as caps); flags that would fight the supervisor are refused."""
    rest: List[str] = []
    values: Dict[str, float] = {}
    items = list(args)
    while items:
        word = items.pop(0)
        name, eq, value = word.partition("=")
        if name in OWN_FLAGS:
            raise BatonError(f"baton run sets {name} itself; remove it from the arguments after --")
        if name in CAPS:
            if not eq:
                if not items:
                    raise BatonError(f"{name} needs a value")
                value = items.pop(0)
            try:
                number = float(value)
            except ValueError:
                raise BatonError(f"{name} {value!r}: expected a number") from None
            if not math.isfinite(number) or number <= 0:
                raise BatonError(f"{name} {value!r}: expected a number above 0")
            if CAPS[name] in WHOLE and number != int(number):
                raise BatonError(f"{name} {value!r}: expected a whole number")
            values[CAPS[name]] = number
            continue
        rest.append(word)
    turns, tokens = values.get("turns"), values.get("tokens")
    return rest, Caps(None if turns is None else int(turns), values.get("cost_usd"),
                      None if tokens is None else int(tokens))


def job_caps(limits: Mapping[str, float], turns_used: float, cost_used: float, tokens_used: float = 0) -> Caps:
    """What is left of the job's ``turns``, ``cost_usd`` and ``tokens`` limits (None: no such limit)."""
    turns, cost, tokens = limits.get("turns"), limits.get("cost_usd"), limits.get("tokens")
    return Caps(None if not turns else max(int(turns - turns_used), 0),
                None if not cost else max(cost - cost_used, 0.0),
                None if not tokens else max(int(tokens - tokens_used), 0))


def argv(claude: str, caps: Caps, user_args: Sequence[str], plugin_dir: str = "", resume: str = "",
         prompt: str = PROMPT) -> List[str]:
    command = [claude, "-p", prompt, "--output-format", "stream-json", "--verbose", "--allowedTools", *BATON_RULES]
    if plugin_dir:
        command += ["--plugin-dir", plugin_dir]
    command += caps.flags()
    if resume:
        command += ["--resume", resume]
    return command + list(user_args)


def environment(env: Mapping[str, str], job_id: str) -> Dict[str, str]:
    """``env`` with the job id appended to ``OTEL_RESOURCE_ATTRIBUTES`` (values are percent-encoded),
    and ``BATON_PARK_APPROVALS=1`` unless the person set it (``0`` keeps refusing calls that wait for
    an approval, see ``store.gate.parking``)."""
    from urllib.parse import quote

    out = dict(env)
    out.setdefault(PARK_APPROVALS, "1")
    mine = f"baton.job.id={quote(job_id, safe='')}"
    before = out.get("OTEL_RESOURCE_ATTRIBUTES", "").strip().rstrip(",")
    out["OTEL_RESOURCE_ATTRIBUTES"] = f"{before},{mine}" if before else mine
    return out
