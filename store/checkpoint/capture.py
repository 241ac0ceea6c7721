"""What a record carries as a checkpoint: for ``done``, every artifact (declared in the plan or
added with ``--artifact``) with its size and SHA-256, refusing when one is missing; the input
revision (git commit, dirty flag, digest of the declared inputs); and the git change with its
patch id. ``running`` records carry the git commit, where the step's change starts.
"""

from __future__ import annotations

import os

from store.base.errors import CHECK, BatonError
from store.checkpoint import revision
from store.checkpoint.digests import Hasher, NotRegular, TooMany, expand, inputs_digest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

    from store.plan.plan import Step
    from store.state.location import Layout
    from store.state.snapshot import Snapshot

MAX_ARTIFACTS = 10_000


def _entry(layout: Layout, rel: str, hasher: Hasher) -> Dict[str, Any]:
    full = os.path.join(str(layout.project), rel)
    try:
        st = os.stat(full)
        sha = hasher.sha(rel, full, st)
    except NotRegular as exc:
        raise BatonError(f"artifact {exc}, not a file a checkpoint can hash; nothing was recorded", CHECK) from None
    except OSError as exc:
        raise BatonError(f"artifact {rel}: {exc.strerror or exc}; nothing was recorded", CHECK) from None
    return {"path": rel, "size": st.st_size, "sha256": sha, "mtime_ns": st.st_mtime_ns}


def _given(layout: Layout, item: str, sha: Optional[str], hasher: Hasher) -> List[Dict[str, Any]]:
    if "://" in item:
        return [{"uri": item, **({"sha256": sha.lower()} if sha else {})}]
    full = os.path.abspath(os.path.join(str(layout.project), os.path.expanduser(item)))
    rel = os.path.relpath(full, str(layout.project)).replace(os.sep, "/")
    if not os.path.exists(full):
        raise BatonError(f"--artifact {item}: no such file; nothing was recorded", CHECK)
    entries = [_entry(layout, r, hasher) for r in expand(layout.project, [rel])]
    if sha and (len(entries) != 1 or entries[0]["sha256"] != sha.lower()):
        raise BatonError(f"--artifact {item}: its SHA-256 is not the one given with --sha256; nothing was recorded",
                         CHECK)
    return entries


def artifacts(layout: Layout, step: Step, extra: Sequence[Tuple[str, Optional[str]]],
              hasher: Hasher) -> List[Dict[str, Any]]:
    """The artifacts of a ``done`` record; raises (exit 1) when a declared one is missing."""
    found: Dict[str, Dict[str, Any]] = {}
    try:
        for pattern in step.artifacts:
            files = expand(layout.project, [pattern])
            if not files:
                raise BatonError(f"step {step.id} must produce {pattern} (its plan's artifacts), and nothing there "
                                 "exists; nothing was recorded", CHECK)
            found.update((rel, _entry(layout, rel, hasher)) for rel in files)
        for item, sha in extra:
            found.update((e.get("path") or e["uri"], e) for e in _given(layout, item, sha, hasher))
    except TooMany as exc:
        raise BatonError(f"step {step.id}: artifacts: {exc}") from None
    if len(found) > MAX_ARTIFACTS:
        raise BatonError(f"step {step.id}: more than {MAX_ARTIFACTS} artifacts; record a folder's archive instead")
    return [found[k] for k in sorted(found)]


def fields(layout: Layout, step: Step, snap: Snapshot, status: str, made: Optional[List[Dict[str, Any]]],
           hasher: Hasher) -> Dict[str, Any]:
    """The checkpoint fields of a record of ``step`` as ``status``."""
    out: Dict[str, Any] = {"phase": step.phase} if step.phase else {}
    if status not in ("running", "done"):
        return out
    rev = revision.revision(layout.project)
    if status == "done" and step.inputs:
        try:
            digest, count, stamps = inputs_digest(layout.project, step.inputs, hasher)
        except TooMany as exc:
            raise BatonError(f"step {step.id}: inputs: {exc}") from None
        newest = max((mtime for _, mtime in stamps), default=0)  # files newer than this changed since
        rev.update(inputs=digest, input_files=count, input_mtime_ns=newest)
    if rev:
        out["revision"] = rev
    if made:
        out["artifacts"] = made
    base = revision.base_commit(snap, step.id) if status == "done" and rev.get("commit") else None
    if base:
        out["change"] = {"base": base, "patch_id": revision.patch_id(layout.project, base)}
    return out


def same_change(snap: Snapshot, step_id: str, record_fields: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The step's snapshot entry when it is already done with the same (non-empty) patch id."""
    info = snap.steps.get(step_id, {})
    patch = (record_fields.get("change") or {}).get("patch_id")
    return info if patch and info.get("status") == "done" and info.get("patch_id") == patch else None
