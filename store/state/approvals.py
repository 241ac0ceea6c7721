"""A person's approvals: ledger records of status ``approved`` that carry an HMAC signature.

Only baton's prompt hook, answering ``/baton:approve STEP`` typed by a person, writes them. The
key lives outside the project (``$XDG_CONFIG_HOME/baton/approval.key``, mode 0600), and the
PreToolUse gate refuses every gated tool call that names it, so a line appended to the ledger by
any other means (a Bash one-liner, an edited file) carries no valid signature and is ignored.
This raises the bar against a model approving its own step; it is not a defence against another
program running as the same user with intent to forge.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional

KEY_NAME = "approval.key"


def key_dir(env: Mapping[str, str]) -> str:
    base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
    return os.path.join(base, "baton")


def read_key(env: Mapping[str, str]) -> Optional[bytes]:
    try:
        with open(os.path.join(key_dir(env), KEY_NAME), "rb") as handle:
            key = handle.read()
    except OSError:
        return None
    return key if len(key) >= 32 else None


def ensure_key(env: Mapping[str, str]) -> bytes:
    """The signing key, created (0600, in a 0700 folder) on the first approval.

    Written whole to a temp file, then linked into place, so a reader never sees half a key and
    two first approvals at once agree on one key. A short key (a crash of an older writer) cannot
    have signed anything and is replaced."""
    key = read_key(env)
    if key is not None:
        return key
    folder = key_dir(env)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.join(folder, KEY_NAME)
    import secrets

    tmp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_hex(32).encode("ascii"))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            if read_key(env) is None:
                os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    key = read_key(env)
    if key is None:
        raise OSError(f"cannot create the approval key at {path}")
    return key


def _message(project: str, step: str, ts: str, session: str, scope: str = "") -> bytes:
    # JSON keeps the fields apart whatever they contain (separators, lone surrogates); v2 also
    # binds the digest of what was approved (store.state.scope)
    fields = ["baton-approval-v2", project, step, ts, session, scope] if scope else [
        "baton-approval-v1", project, step, ts, session]
    return json.dumps(fields, ensure_ascii=True).encode("ascii")


def sign(key: bytes, project: str, step: str, ts: str, session: str, scope: str = "") -> str:
    import hashlib
    import hmac

    return hmac.new(key, _message(project, step, ts, session, scope), hashlib.sha256).hexdigest()


def scope_digest(entry: Mapping[str, Any]) -> str:
    scope = entry.get("scope")
    return str(scope.get("digest") or "") if isinstance(scope, dict) else ""


def is_valid(entry: Mapping[str, Any], key: Optional[bytes], project: str, step: str) -> bool:
    """True when ``entry`` (a snapshot approval) was signed for ``step`` in ``project``."""
    if key is None or not isinstance(entry.get("sig"), str):
        return False
    want = sign(key, project, step, str(entry.get("ts", "")), str(entry.get("session") or ""), scope_digest(entry))
    from hmac import compare_digest

    return compare_digest(want, entry["sig"])


def approved_steps(approvals: Dict[str, Dict[str, Any]], env: Mapping[str, str], project: str) -> Dict[str, bool]:
    """Each approval in the snapshot mapped to whether its signature holds."""
    key = read_key(env)
    return {step: is_valid(entry, key, project, step) for step, entry in approvals.items()}
