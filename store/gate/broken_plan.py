"""The gate's answer while ``.baton/plan.json`` cannot be read or is invalid. It is not a passing
fault to retry around ("Try a simpler call"): no call can be checked against a broken plan, the
model may not edit ``.baton/``, and so the refusal says that the plan is broken, where (the file
and the line or field, as :func:`store.plan.plan.load_plan` names them) and that a person must
fix it."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


def reason(exc: Optional[BaseException]) -> Optional[str]:
    """The refusal for ``exc`` when it is a broken plan, else ``None``."""
    from store.plan.plan import PlanError  # only on the way to an answer that already failed

    if not isinstance(exc, PlanError):
        return None
    return (f"baton's plan is broken: {exc.message}. Until it is fixed, no call can be checked against the plan, so "
            "every call baton gates is refused. You cannot fix it yourself (.baton/ is baton's, and edits to it are "
            "refused): stop and tell the person what is wrong and where, as said above, so that they correct "
            ".baton/plan.json (`baton brief` checks it) or replace it with `baton init --force --plan FILE`. "
            "[baton:plan-broken]")
