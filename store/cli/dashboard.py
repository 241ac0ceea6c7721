"""``baton status`` as text: a compact dashboard of the status document, at most 80 columns wide,
coloured only for a terminal (and never when ``NO_COLOR`` is set or ``TERM`` is ``dumb``)."""

from __future__ import annotations

import textwrap

from store.base.text import one_line
from store.monitor.clock import epoch, span

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

WIDTH = 80
LABEL = 7  # "tokens " and the like: the width of a line's label
WINDOW = 12  # plans this long or shorter list every step
COLOURS = {"done": "32", "skipped": "32", "failed": "31", "running": "33", "left": "33", "waiting": "33",
           "pending": "2", "alert": "31", "head": "1"}


def use_colour(stream: Any, env: Mapping[str, str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and "NO_COLOR" not in env and env.get("TERM") != "dumb"


def money(value: Optional[float]) -> str:
    if value is None:
        return "-"
    if value < 0.01:
        return f"${value:.4f}"
    return f"${value:,.2f}"


def count(value: float) -> str:
    """1234 -> 1.2k, 4500000 -> 4.5M; small numbers as they are."""
    if value < 10_000:
        return f"{int(value):,}"
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.1f}{suffix}"
    return str(int(value))  # pragma: no cover


class Painter:
    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def __call__(self, kind: str, text: str) -> str:
        code = COLOURS.get(kind)
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour and code else text


def _line(label: str, text: str) -> List[str]:
    """``label`` then ``text`` wrapped to the width, continuation lines indented under the text."""
    return textwrap.wrap(text, WIDTH, initial_indent=f"{label:<{LABEL}}", subsequent_indent=" " * LABEL,
                         break_on_hyphens=False) or [label]


def _ago(ts: Optional[str], now: float) -> str:
    moment = epoch(ts)
    return "" if moment is None else f"{span(now - moment)} ago"


def _head(data: Mapping[str, Any], paint: Painter) -> List[str]:
    done, total = data["done"], data["total"]
    filled = round(20 * done / total) if total else 20
    bar = "[" + "#" * filled + "-" * (20 - filled) + "]"
    counts = data["counts"]
    extra = ", ".join(f"{counts[k]} {k}" for k in ("failed", "running") if counts[k])
    name = one_line(data["job"] or data["job_id"], 30)
    first = f"job {name}  {bar}  {done}/{total} steps" + (f", {extra}" if extra else "")
    return [paint("head", first)]


def _next(data: Mapping[str, Any], now: float) -> List[str]:
    current = data["current"]
    if current is None:  # in a parallel plan NEXT is this worker's own step: none claimed is not the end
        return _line("next", "all steps complete" if data["done"] >= data["total"] else "no step claimed by you")
    phase = f" ({current['phase']})" if current["phase"] else ""
    since = _ago(current["since"], now).replace(" ago", "")
    what = f"{one_line(current['step'], 40)}{phase}, attempt {current['attempt']}" + (f", {since} in" if since else "")
    if current["waiting_for_approval"]:
        what += f"; waiting for a person's approval (/baton:approve {one_line(current['step'], 40)})"
    return _line("next", what)


def _gates(data: Mapping[str, Any]) -> List[str]:
    sandbox = data.get("sandbox")
    if sandbox is None:
        return []
    if not sandbox["enforced"]:
        return _line("gates", f"best effort: baton's sandbox cannot run here ({sandbox['why']}); Bash commands are "
                              "only read")
    private = f"; its /tmp is private (the host's cannot be shown: {sandbox['tmp_why']})" if sandbox.get(
        "tmp") == "private" else ""
    return _line("gates", f"Bash runs in baton's sandbox (bubblewrap), enforced by the kernel{private}")


def _time(data: Mapping[str, Any], now: float) -> List[str]:
    duration = data["duration"]
    if duration["wall_s"] is None:
        return _line("time", "no record yet")
    records = data["records"]
    text = (f"{span(duration['wall_s'])} since the first of {records:,} record{'s' if records != 1 else ''}, "
            f"{span(duration['active_s'])} active")
    last = _ago(duration["last_activity"], now)
    return _line("time", text + (f", last activity {last}" if last else ""))


def _cost(data: Mapping[str, Any]) -> List[str]:
    cost = data["cost"]
    if cost["reported_usd"] is None and not cost["estimated_usd"]:
        text = "unknown: no session has reported its cost yet (Claude Code writes it as a session ends)"
    else:
        text = f"{money(cost['reported_usd'])} reported" if cost["reported_usd"] is not None else "none reported"
        if not cost["complete"]:
            missing = cost["unreported_sessions"]
            estimate = f"~{money(cost['estimated_usd'])}" if cost["estimated_usd"] is not None else "unknown"
            text += f"; {estimate} with what is not reported yet" + (
                f" ({missing} session{'s' if missing != 1 else ''} without a cost)" if missing else "")
    if cost["projected_usd"] is not None:
        text += f"; projected {money(cost['projected_usd'])}"
    if cost["limit_usd"]:
        text += f" (limit {money(cost['limit_usd'])})"
    if cost["per_done_step_usd"] is not None:
        text += f"; {money(cost['per_done_step_usd'])} per done step (latest {money(cost['recent_per_step_usd'])})"
    return _line("cost", text)


def _tokens(data: Mapping[str, Any]) -> List[str]:
    t = data["tokens"]
    return _line("tokens", f"{count(t['input'])} in, {count(t['output'])} out, {count(t['cache_read'])} cache read, "
                           f"{count(t['cache_creation'])} cache write; {count(data['turns'])} turns")


def _tools(data: Mapping[str, Any], now: float) -> List[str]:
    tools = data["tools"]
    refused = sum(tools["refusals"].values())
    text = f"{count(tools['calls'])} calls, {count(tools['failures'])} failed" + (
        f", {count(refused)} refused by the gate" if refused else "")
    error = tools["last_error"]
    if error:
        where = f" in {one_line(error['step'], 30)}" if error.get("step") else ""
        text += (f"; last error {_ago(error.get('ts'), now)}{where}: {one_line(error['tool'], 20)} "
                 f"{one_line(error['target'], 40)}: {one_line(error['error'], 80)}")
    return _line("tools", text)


def _api(data: Mapping[str, Any], now: float) -> List[str]:
    """Turns that ended on an API error Claude Code's retries did not outlast (none: no line)."""
    api = data.get("api_errors") or {}
    turns, last = int(api.get("turns") or 0), api.get("last")
    if not turns or not last:
        return []
    where = f" in {one_line(last['step'], 30)}" if last.get("step") else ""
    return _line("api", f"{count(turns)} turn{'s' if turns != 1 else ''} ended on an API error; last "
                        f"{_ago(last.get('ts'), now)}{where}: {one_line(last['error'], 30)}: "
                        f"{one_line(last['detail'], 80)}")


def _work(data: Mapping[str, Any]) -> List[str]:
    parts = [f"{data['retries']} retr{'y' if data['retries'] == 1 else 'ies'}"]
    if data["approval_wait_s"]:
        parts.append(f"{span(data['approval_wait_s'])} waiting for approval")
    parts.append(f"{data['changed_files']} files changed")
    validation = data["validation"]
    if validation["passed"] or validation["failed"]:
        parts.append(f"validation {validation['passed']} passed, {validation['failed']} failed")
    if data["artifacts"]:
        parts.append(f"{data['artifacts']} artifacts")
    return _line("work", ", ".join(parts))


def _sessions(data: Mapping[str, Any]) -> List[str]:
    views = data["sessions"]
    if not views:
        return _line("seen", "no session yet")
    shown = ", ".join(f"{v['id'][:8]} {v['ended']}" for v in views[-4:])
    more = f" (latest {min(len(views), 4)}: {shown})"
    return _line("seen", f"{len(views)} session{'s' if len(views) != 1 else ''}{more}")


def _alerts(data: Mapping[str, Any], paint: Painter) -> List[str]:
    out: List[str] = []
    for alert in data["alerts"][-3:]:
        when = str(alert.get("ts") or "")[11:16]
        out += [paint("alert", line) for line in _line("alert", f"{when} {one_line(str(alert['message']), 200)}")]
    return out


def _once(data: Mapping[str, Any]) -> List[str]:
    once = data.get("once") or {}
    if not once.get("results") and not once.get("open"):
        return []
    lines = _line("once", f"side effects (baton once): {once['results']} results, {len(once['open'])} open")
    for o in once["open"]:
        lines += _line("", f"open {one_line(o['key'], 40)} ({one_line(str(o.get('step')), 30)}) since "
                           f"{o.get('ts')}: running now, or unknown until settled")
    return lines


def _telemetry(data: Mapping[str, Any]) -> List[str]:
    info = data.get("telemetry") or {}
    if not info.get("enabled") and not info.get("last_export") and not info.get("error"):
        return []
    text = "on" if info.get("enabled") else "off in this shell"
    if info.get("last_export"):
        text += f", last sent {info['last_export']}"
    if info.get("error"):
        text += f"; failing: {one_line(str(info['error']), 150)}"
    lines = _line("export", text)
    if info.get("to") and info.get("settings_from"):
        lines += _line("", f"to {one_line(str(info['to'][0]), 80)}, settings from "
                           f"{one_line(str(info['settings_from']), 150)}")
    return lines


def step_row(step: Mapping[str, Any], current: Optional[str], paint: Painter) -> str:
    """One step in 80 columns: marker, id, status, attempt, calls, failures, tokens, cost."""
    mark = ">" if step["id"] == current else " "
    cost = step["cost_usd"] if step["cost_usd"] is not None else step["cost_estimated_usd"]
    shown_cost = money(cost) if step["cost_usd"] is not None or cost is None else "~" + money(cost)
    gate = "*" if step["approval"] and not step["approved"] else " "
    row = (f"{mark} {one_line(step['id'], 30):<30}{gate}{step['status']:<8}{step['attempt']:>4}"
           f"{count(step['calls']):>7}{count(step['failures']):>6}{count(step['tokens']['total']):>9}"
           f"{shown_cost:>11}")
    return paint(step["status"], row[:WIDTH].rstrip())


def _window(steps: Sequence[Mapping[str, Any]], current: Optional[str]) -> List[Optional[int]]:
    """Indexes of the steps worth a line (``None``: a gap); every step when the plan is short."""
    if len(steps) <= WINDOW:
        return list(range(len(steps)))
    at = next((i for i, s in enumerate(steps) if s["id"] == current), len(steps) - 1)
    keep = {i for i, s in enumerate(steps) if s["status"] in ("failed", "running")}
    keep |= set(range(max(at - 3, 0), min(at + 4, len(steps))))
    keep = set(sorted(keep)[-WINDOW:]) | {at}
    out: List[Optional[int]] = []
    for i in sorted(keep):
        if out and out[-1] is not None and i != out[-1] + 1:
            out.append(None)
        elif not out and i:
            out.append(None)
        out.append(i)
    if out[-1] != len(steps) - 1:
        out.append(None)
    return out


def steps_table(data: Mapping[str, Any], paint: Painter, every: bool) -> List[str]:
    steps, current = data["steps"], data["next"]
    head = f"  {'step':<30} {'status':<8}{'try':>4}{'calls':>7}{'fail':>6}{'tokens':>9}{'cost':>11}"
    lines = [head]
    indexes: List[Optional[int]] = list(range(len(steps))) if every else _window(steps, current)
    for i in indexes:
        lines.append("  ..." if i is None else step_row(steps[i], current, paint))
    if not every and len(indexes) < len(steps):
        lines.append(f"  ({sum(1 for i in indexes if i is not None)} of {len(steps)} steps shown; "
                     "baton status --all lists every one)")
    if any(s["approval"] and not s["approved"] for s in steps):
        lines.append("  * needs a person's approval")
    return lines


def render(data: Mapping[str, Any], colour: bool = False, every: bool = False, now: Optional[float] = None,
           log_line: Optional[Callable[[Dict[str, Any]], str]] = None) -> str:
    """The dashboard for a status document (``store.monitor.summary``)."""
    import time

    now = time.time() if now is None else now
    paint = Painter(colour)
    lines = _head(data, paint) + _next(data, now) + _gates(data) + _time(data, now) + _cost(data) + _tokens(data)
    lines += _tools(data, now) + _api(data, now) + _work(data) + _sessions(data) + _once(data) + _telemetry(data)
    lines += _alerts(data, paint)
    lines += [f"problem: {one_line(p, 70)}" for p in data["problems"]]
    if data.get("partial"):
        lines += _line("note", "read from the ledger's end while its snapshot is rebuilt: problems and the time "
                               "since the first record may be incomplete")
    lines += [""] + steps_table(data, paint, every)
    if data["last"] and log_line is not None:
        lines += ["", "last records:"] + ["  " + one_line(log_line(dict(r)), WIDTH - 2) for r in data["last"][-3:]]
    return "\n".join(lines)
