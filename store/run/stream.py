"""What one Claude Code session printed on ``--output-format stream-json``, and how it ended.

Claude Code 2.1.328 (``-p --output-format stream-json --verbose``) prints one JSON object per line:
``system/init`` (session id, loaded plugins), ``system/api_retry`` before each of its own retries of
an API error (``error_status``, ``retry_delay_ms``: a retry-after of up to 60 s is honoured there),
the ``assistant`` and ``user`` messages, and one ``result``. When an API error outlasts its retries
(``CLAUDE_CODE_MAX_RETRIES``, default 10) the result has ``terminal_reason: "api_error"`` and
``api_error_status`` (429, 529, 5xx; null for a dropped connection or a timeout), and the process
exits 1. The retry-after itself never appears: only the delays of the retries before. A session
whose PreToolUse hook deferred a call (baton parks a call that waits for an approval, see
``store.gate.parking``) ends with ``terminal_reason: "tool_deferred"``, the call in
``deferred_tool_use``, an empty result and exit 0.
"""

from __future__ import annotations

import signal

from store.base import jsonc
from store.base.text import one_line
from store.base.values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

ENDINGS = ("completed", "approval", "parked", "limit", "api_error", "turn_cap", "budget", "killed", "crashed",
           "error", "interrupted", "no_plugin")
RETRIED_STATUSES = (408, 409, 429)  # and every 5xx (529 overloaded included), and no status (network)


class Report:
    """Everything worth keeping from one session's stream, filled line by line by :meth:`feed`."""

    def __init__(self) -> None:
        self.session_id = ""
        self.plugins: Optional[List[str]] = None  # names from the init line; None until it arrives
        self.plugin_errors: List[str] = []
        self.retries = 0  # Claude Code's own API retries in this session
        self.retry_delay = 0.0  # seconds of its last retry: the retry-after the API sent, when it sent one
        self.assistant_messages = 0
        self.result: Optional[Dict[str, Any]] = None

    def feed(self, line: str) -> Optional[Dict[str, Any]]:
        """Take one line of output; return it parsed when it is news (init, an API retry)."""
        try:
            event = jsonc.loads(line)
        except ValueError:
            return None
        if not isinstance(event, dict):
            return None
        kind, subtype = event.get("type"), event.get("subtype")
        if isinstance(event.get("session_id"), str) and event["session_id"]:
            self.session_id = event["session_id"]
        if kind == "system" and subtype == "init":
            plugins = event.get("plugins")
            listed = plugins if isinstance(plugins, list) else []
            self.plugins = [str(p.get("name")) for p in listed if isinstance(p, dict)]
            errors = event.get("plugin_errors")
            self.plugin_errors = [one_line(str(e.get("message", e)), 200) for e in errors or [] if isinstance(e, dict)]
            return event
        if kind == "system" and subtype == "api_retry":
            self.retries += 1
            delay = event.get("retry_delay_ms")
            self.retry_delay = delay / 1000.0 if isinstance(delay, (int, float)) and delay > 0 else 0.0
            return event
        if kind == "assistant":
            self.assistant_messages += 1
        elif kind == "result":
            self.result = event
        return None


class Ending(Frozen):
    """How a session ended, in the terms of the ledger's ``session`` records."""

    __slots__ = ("ended", "detail", "transient", "retry_after", "cost_usd", "turns", "exit_code", "api_error",
                 "parked")

    def __init__(self, ended: str, detail: str, transient: bool = False, retry_after: float = 0.0,
                 cost_usd: Optional[float] = None, turns: Optional[int] = None,
                 exit_code: Optional[int] = None, api_error: str = "",
                 parked: Optional[Dict[str, Any]] = None) -> None:
        self.ended = ended
        self.detail = detail  # one line for people: the error, the signal, the last words on stderr
        self.transient = transient  # an API error worth retrying (overloaded, rate limited, 5xx, network)
        self.retry_after = retry_after  # seconds Claude Code last waited before retrying (0 when unknown)
        self.cost_usd = cost_usd  # total_cost_usd as reported (cumulative over resumes of one session)
        self.turns = turns
        self.exit_code = exit_code  # the process's exit code, negative for a signal (as subprocess says)
        self.api_error = api_error  # for api_error: the status and kind ("529 overloaded_error"), else ""
        self.parked = parked  # for parked: the call a hook deferred ({"id", "tool", "what"}), else None


def _api_error(result: Dict[str, Any]) -> Optional[str]:
    """``"529 overloaded_error"``-like words when the result reports an API error, else None."""
    status, kind = result.get("api_error_status"), result.get("api_error_type") or result.get("api_error")
    if result.get("terminal_reason") != "api_error" and status is None and not kind:
        return None
    words = [str(status) if status is not None else "network", str(kind) if kind else ""]
    return " ".join(w for w in words if w)


def transient(status: Any) -> bool:
    """Whether an API error with this HTTP status is worth retrying later (None: no response at all)."""
    if status is None:
        return True
    return isinstance(status, int) and (status in RETRIED_STATUSES or status >= 500)


def _deferred(call: Any) -> Dict[str, Any]:
    """The call a PreToolUse hook deferred, as the result names it: its id, tool and what it touches."""
    call = call if isinstance(call, dict) else {}
    tool_input = call.get("input") if isinstance(call.get("input"), dict) else {}
    target = next((tool_input[k] for k in ("command", "file_path", "notebook_path", "url") if
                   isinstance(tool_input.get(k), str)), "")
    return {"id": str(call.get("id") or ""), "tool": str(call.get("name") or ""),
            "what": one_line(f"{call.get('name')}: {target}", 120)}


def _from_result(result: Dict[str, Any], report: Report, exit_code: int) -> Ending:
    cost = result.get("total_cost_usd")
    cost = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None
    turns = result.get("num_turns") if isinstance(result.get("num_turns"), int) else None
    errors = result.get("errors")
    first_error = one_line(str(errors[0]), 200) if isinstance(errors, list) and errors else ""
    said = one_line(str(result.get("result") or ""), 200)
    api = _api_error(result)
    subtype, reason = result.get("subtype"), result.get("terminal_reason")
    if api is not None:
        said = said.split(". ", 1)[0]  # "API Error: 529 Overloaded", without Claude Code's advice after it
        return Ending("api_error", f"{api}: {said}" if said else api, transient(result.get("api_error_status")),
                      report.retry_delay, cost, turns, exit_code, api)
    if reason == "tool_deferred" or result.get("stop_reason") == "tool_deferred":
        call = _deferred(result.get("deferred_tool_use"))
        return Ending("parked", f"parked {call['what']}", False, 0.0, cost, turns, exit_code, parked=call)
    if subtype == "error_max_turns" or reason == "max_turns":
        return Ending("turn_cap", first_error or "reached --max-turns", False, 0.0, cost, turns, exit_code)
    if subtype == "error_max_budget_usd" or reason == "budget_exhausted":
        return Ending("budget", first_error or "reached --max-budget-usd", False, 0.0, cost, turns, exit_code)
    if result.get("is_error"):
        return Ending("error", first_error or said or f"{subtype} ({reason})", False, 0.0, cost, turns, exit_code)
    return Ending("completed", "", False, 0.0, cost, turns, exit_code)


def classify(report: Report, exit_code: int, interrupted: int = 0, stderr_tail: str = "") -> Ending:
    """How the session ended. ``interrupted``: the signal baton forwarded to it (0 if none)."""
    result = report.result
    if interrupted:
        ending = _from_result(result, report, exit_code) if result else None
        return Ending("interrupted", f"stopped by {signal.Signals(interrupted).name}", False, 0.0,
                      ending.cost_usd if ending else None, ending.turns if ending else None, exit_code)
    if result is not None:
        return _from_result(result, report, exit_code)
    last_words = one_line(stderr_tail, 200)
    if exit_code < 0:
        try:
            name = signal.Signals(-exit_code).name
        except ValueError:
            name = f"signal {-exit_code}"
        return Ending("killed", f"killed by {name}" + (f": {last_words}" if last_words else ""), exit_code=exit_code)
    return Ending("crashed", f"exit code {exit_code} without a result" + (f": {last_words}" if last_words else ""),
                  exit_code=exit_code)


def refused_calls(result: Optional[Dict[str, Any]]) -> int:
    """Tool calls the session was refused: for want of a permission, or by baton's gate (both are listed)."""
    denials = result.get("permission_denials") if result else None
    return len(denials) if isinstance(denials, list) else 0
