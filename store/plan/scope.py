"""What an approval covers: the approved step's definition and the job's rules, and whether the
plan, edited since, lets the step do more than the person approved.

An approval record keeps :func:`scope_of` (with its digest). While the digest matches, the
approval holds; when it does not, :func:`widened` compares field by field, and any way in which
the step may now do more (another tool, a wider ``writes`` or ``bash`` list, a changed phase or
``validate``, a job rule, ``protect`` glob or ``effects`` pattern removed, baton's sandbox for the
step turned off or loosened) makes the approval stop counting, with the reasons. A narrower plan
keeps it. Approvals without a scope (older records) keep counting as before.
"""

from __future__ import annotations

from store.base import jsonc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence

    from store.plan.plan import Plan, Step

LISTS = ("tools", "writes", "bash")


def _sorted(values: Optional[Sequence[str]]) -> Optional[List[str]]:
    return None if values is None else sorted(set(values))


def scope_of(plan: Plan, step: Step) -> Dict[str, Any]:
    """The step's definition and the job's rules as approved, with their digest."""
    body: Dict[str, Any] = {
        "step": {"phase": step.phase, "tools": _sorted(step.tools), "writes": _sorted(step.writes),
                 "bash": _sorted(step.bash), "approval": step.needs_approval, "validate": step.validate},
        "job": {"rules": sorted({r.deny_bash for r in plan.rules}), "protect": sorted(set(plan.protect)),
                "effects": sorted(set(plan.effects)), "sandbox": _sandbox(plan, step)},
    }
    return {"digest": digest(body), **body}


def _sandbox(plan: Plan, step: Step) -> Dict[str, Any]:
    """The sandbox the step's Bash commands run in, as far as it limits them."""
    settings = plan.sandbox.for_step(step.sandbox)
    network = settings.network_mode
    return {"enabled": settings.enabled, "auto_allow": settings.auto_allow, "git": settings.git_mode,
            "network": sorted(network) if isinstance(network, tuple) else network, "caches": settings.caches,
            "extra_writes": sorted(set(settings.extra_writes)), "disable_userns": settings.disable_userns}


def _looser_sandbox(was: Mapping[str, Any], now: Mapping[str, Any]) -> List[str]:
    if not was or not now:
        return []  # approved before the sandbox was part of what an approval covers
    reasons = [what for loosened, what in (
        (was.get("enabled") and not now.get("enabled"), "baton's sandbox is turned off"),
        (now.get("auto_allow") and not was.get("auto_allow"), "its commands now run without a prompt (auto_allow)"),
        (was.get("git") == "ro" and now.get("git") == "rw", "git is now writable in the sandbox"),
        (was.get("caches") == "private" and now.get("caches") == "shared", "the shared package caches are writable"),
        (was.get("disable_userns") and not now.get("disable_userns"), "user namespaces are allowed again inside"),
    ) if loosened]
    was_net, now_net = was.get("network"), now.get("network")
    if _wider_network(was_net, now_net):
        reasons.append(f"the sandbox's network now reaches {now_net if isinstance(now_net, str) else 'more hosts'}")
    reasons += _wider_list("sandbox.extra_writes", was.get("extra_writes"), now.get("extra_writes"))
    return reasons


def _wider_network(was: Any, now: Any) -> bool:
    """``host`` (anywhere) is wider than an allowlist, which is wider than ``none``."""
    if was == now or was == "host" or now == "none":
        return False
    return now == "host" or was == "none" or bool(set(now or ()) - set(was or ()))


def digest(body: Mapping[str, Any]) -> str:
    from store.ledger.sealing import sha256_maker  # the built-in SHA-256: no OpenSSL to load

    payload = {k: body.get(k) for k in ("step", "job")}
    text = jsonc.dumps(payload, sort_keys=True, separators=(",", ":"))
    return str(sha256_maker()(text.encode("utf-8")).hexdigest()[:32])


def _wider_list(name: str, was: Any, now: Any) -> List[str]:
    if was is None:
        return []  # it was not restricted: nothing can be wider
    if now is None:
        return [f"{name} is no longer restricted"]
    added = sorted(set(now) - set(was))
    return [f"{name} now include {', '.join(added[:3])}"] if added else []


def widened(approved: Mapping[str, Any], now: Mapping[str, Any]) -> List[str]:
    """Why the step may now do more than ``approved`` allowed (empty: the approval holds)."""
    if not isinstance(approved, dict) or not approved.get("digest") or approved.get("digest") == now.get("digest"):
        return []
    was_step, now_step = approved.get("step") or {}, now.get("step") or {}
    reasons: List[str] = []
    for name in LISTS:
        reasons += _wider_list(name, was_step.get(name), now_step.get(name))
    if was_step.get("phase") != now_step.get("phase"):
        reasons.append(f"its phase changed from {was_step.get('phase')} to {now_step.get('phase')}")
    if was_step.get("approval") and not now_step.get("approval"):
        reasons.append("it no longer needs an approval")
    if was_step.get("validate") and was_step.get("validate") != now_step.get("validate"):
        reasons.append("its validate command was removed" if not now_step.get("validate")
                       else "its validate command changed")
    was_job, now_job = approved.get("job") or {}, now.get("job") or {}
    for name, what in (("rules", "job rule"), ("protect", "protect glob"), ("effects", "effects pattern")):
        removed = sorted(set(was_job.get(name) or ()) - set(now_job.get(name) or ()))
        if removed:
            reasons.append(f"the {what} {removed[0]!r} was removed" + (f" (and {len(removed) - 1} more)"
                                                                       if len(removed) > 1 else ""))
    return reasons + _looser_sandbox(was_job.get("sandbox") or {}, now_job.get("sandbox") or {})
