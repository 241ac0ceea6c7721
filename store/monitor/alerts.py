"""Alerts that mean something, raised once per condition: to the model, to the person, to a log.

A condition (the same call failing again and again, many calls or many minutes without a record,
a job limit reached, a cost projection over ``limits.cost_usd``, steps costing far more than the
job's average) is raised when it first holds and not again until it has cleared. Raising it
appends an ``alert`` line to ``events.jsonl`` (for ``baton status``, the report and the
OpenTelemetry export) and gives two texts: one for the model (``additionalContext``) and one for
the person (``systemMessage``, shown in the terminal, never sent to the model). What cannot reach
the model at once (a Stop that lets the session end) waits in ``counters.json`` for its next hook.
"""

from __future__ import annotations

from store.base.values import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

KEEP_RAISED = 200
KEEP_PENDING = 5
PERSON = 300  # characters of one alert shown to the person


class Alert(Frozen):
    __slots__ = ("kind", "key", "step", "model", "person")

    def __init__(self, kind: str, key: str, step: str, model: str, person: str) -> None:
        self.kind, self.key, self.step = kind, key, step
        self.model = model  # what the model is told, with what to do about it
        self.person = person  # one line for the person


def fresh(counters: Dict[str, Any], holding: Iterable[Alert], now: str) -> List[Alert]:
    """Of the conditions that hold now, those not raised before; they are marked raised."""
    raised = counters.setdefault("raised", {})
    out = []
    for alert in holding:
        if alert.key not in raised:
            raised[alert.key] = now
            out.append(alert)
    while len(raised) > KEEP_RAISED:
        raised.pop(next(iter(raised)))
    return out


def clear(counters: Dict[str, Any], *prefixes: str) -> None:
    """Conditions that no longer hold: they may be raised again when they come back."""
    raised = counters.get("raised")
    if raised:
        for key in [k for k in raised if k.startswith(prefixes)]:
            del raised[key]


def settle(counters: Dict[str, Any], holding: Sequence[Alert], *prefixes: str) -> None:
    """Clear the raised conditions under ``prefixes`` that are not among ``holding``."""
    raised = counters.get("raised")
    keep = {a.key for a in holding}
    if raised:
        for key in [k for k in raised if k.startswith(prefixes) and k not in keep]:
            del raised[key]


def lines(alerts: Sequence[Alert], session: str, now: str) -> List[Dict[str, Any]]:
    """The ``alert`` lines for ``events.jsonl``, one per alert."""
    return [{"kind": "alert", "ts": now, "alert": a.kind, "key": a.key, "step": a.step, "session": session,
             "message": a.person[:PERSON]} for a in alerts]


def defer(counters: Dict[str, Any], alerts: Sequence[Alert], person: bool = False) -> None:
    """Keep the model's texts for the next hook that can give them (PostToolUse, SessionStart), and
    with ``person`` the person's too (for the next PostToolUse or Stop to show)."""
    if alerts:
        counters["pending"] = (list(counters.get("pending") or []) + [a.model for a in alerts])[-KEEP_PENDING:]
    if alerts and person:
        told = list(counters.get("pending_person") or []) + [a.person for a in alerts]
        counters["pending_person"] = told[-KEEP_PENDING:]


def take_pending(counters: Dict[str, Any]) -> List[str]:
    pending = [str(p) for p in counters.pop("pending", None) or []]
    return pending


def take_pending_person(counters: Dict[str, Any]) -> List[str]:
    return [str(p) for p in counters.pop("pending_person", None) or []]


def for_person(alerts: Sequence[Alert], earlier: Sequence[str] = ()) -> Optional[str]:
    """The ``systemMessage``: one line per alert (those raised earlier where no person could see
    them first), ``None`` when there is none."""
    texts = [*earlier, *(a.person for a in alerts)]
    if not texts:
        return None
    return "\n".join(f"baton alert: {text[:PERSON]}" for text in texts)


# ---- conditions checked by the hooks


def no_progress(limits: Mapping[str, float], progress_at: Optional[float], seq: int, step: str,
                now: float) -> Optional[Alert]:
    """``limits.no_progress_minutes`` passed since the last step or approval record."""
    cap = limits.get("no_progress_minutes")
    if not cap or progress_at is None or not step:
        return None
    minutes = (now - progress_at) / 60.0
    if minutes < cap:
        return None
    return Alert("no-progress", f"no-progress:{seq}", step,
                 f"baton: no step recorded for {minutes:.0f} minutes (the job's limit is {cap:g}). If {step} "
                 f"is done, record it: baton record {step} done \"<what you produced>\"; if it is stuck, "
                 f"record it failed with why, or tell the person.",
                 f"no step recorded for {minutes:.0f} minutes (no_progress_minutes {cap:g}); NEXT is {step}")


def limits_hit(hit: Sequence[str], step: str) -> List[Alert]:
    """One alert per job limit reached (``tool_calls 500 of 500``...)."""
    return [Alert("limit", f"limit:{phrase.split()[0]}", step,
                  f"baton: the job reached its limit ({phrase}); only reading is allowed now. Stop and report "
                  "to the person.",
                  f"job limit reached: {phrase}; baton now allows only reading") for phrase in hit]
