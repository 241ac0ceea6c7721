"""Checkpoints: what a ``done`` step produced (artifacts with size and SHA-256), from what (its
declared inputs and the git revision), and whether that still holds when a job resumes.
``brief_news`` is the one entry the brief's callers use: free when no step has a checkpoint.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List

    from store.state.job import Job


def brief_news(job: Job) -> List[str]:
    """The brief's CHANGED, STALE and UNCHECKED lines for ``job`` (nothing to read or import when
    no DONE step carries artifacts or an inputs digest)."""
    from store.state.checkpointed import marked

    if not any(marked(info) for info in job.snap.steps.values()):
        return []
    from store.checkpoint import freshness

    try:
        return freshness.news(job.layout, job.plan, job.snap)
    except Exception as exc:  # noqa: BLE001 - the brief must still reach the session, saying what failed
        return [f"UNCHECKED: the DONE steps' artifacts could not be checked ({type(exc).__name__}: {exc}); "
                "run `baton verify --artifacts`"]
