"""A person's approvals: ledger records of status ``approved`` that carry an HMAC signature.

Only baton's prompt hook, answering ``/baton:approve STEP`` typed by a person, writes them. The
key lives outside the project (``$XDG_CONFIG_HOME/baton/approval.key``, mode 0600), and the
PreToolUse gate refuses every gated tool call that names it, so a line appended to the ledger by
any other means (a Bash one-liner, an edited file) carries no valid signature and is ignored.
This raises the bar against a model approving its own step; it is not a defence against another
program running as the same user with intent to forge.
"""

from __future__ import annotations

import os

from store.base import jsonc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional, Tuple

KEY_NAME = "approval.key"


def key_dir(env: Mapping[str, str]) -> str:
    base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
    return os.path.join(base, "baton")


def key_path(env: Mapping[str, str]) -> str:
    return os.path.join(key_dir(env), KEY_NAME)


def load_key(env: Mapping[str, str]) -> Tuple[Optional[bytes], str]:
    """(the key, ``""``) or (``None``, what is wrong with it: missing, unreadable and why, damaged)."""
    path = key_path(env)
    try:
        with open(path, "rb") as handle:
            key = handle.read()
    except FileNotFoundError:
        return None, "missing"
    except OSError as exc:
        from store.base.errors import describe

        return None, f"unreadable ({describe(exc)})"
    return (key, "") if len(key) >= 32 else (None, f"damaged ({len(key)} bytes, a key has 64)")


def read_key(env: Mapping[str, str]) -> Optional[bytes]:
    return load_key(env)[0]


def key_id(key: bytes) -> str:
    """Names the key an approval was signed with (not secret: 8 hex digits of its SHA-256)."""
    from store.ledger.sealing import sha256_maker  # the gate reads only key_dir without a job

    return str(sha256_maker()(key).hexdigest()[:8])


def ensure_key(env: Mapping[str, str]) -> bytes:
    """The signing key, created (0600, in a 0700 folder) on the first approval.

    Written whole to a temp file, then linked into place, so a reader never sees half a key and
    two first approvals at once agree on one key. A short key (a crash of an older writer) cannot
    have signed anything and is replaced."""
    key, problem = load_key(env)
    if key is not None:
        return key
    if problem.startswith("unreadable"):
        from store.base.errors import BatonError

        path = key_path(env)
        raise BatonError(f"the approval key {path} is {problem}; make it readable by you (chmod 600 {path}) "
                         "and approve again: a new key would void every approval the old one signed")
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
    # binds the digest of what was approved (store.plan.scope)
    fields = ["baton-approval-v2", project, step, ts, session, scope] if scope else [
        "baton-approval-v1", project, step, ts, session]
    return jsonc.dumps(fields, ensure_ascii=True).encode("ascii")


def hmac_sha256(key: bytes, message: bytes) -> str:
    """HMAC-SHA256 (RFC 2104) as hex, over the built-in SHA-256: the ``hmac`` module loads OpenSSL,
    which would cost every gate call on a job with approvals several milliseconds."""
    from store.ledger.sealing import sha256_maker

    sha256 = sha256_maker()
    block = 64
    if len(key) > block:
        key = sha256(key).digest()
    key = key.ljust(block, b"\0")
    inner = sha256(bytes(k ^ 0x36 for k in key) + message).digest()
    return str(sha256(bytes(k ^ 0x5C for k in key) + inner).hexdigest())


def sign(key: bytes, project: str, step: str, ts: str, session: str, scope: str = "") -> str:
    return hmac_sha256(key, _message(project, step, ts, session, scope))


def scope_digest(entry: Mapping[str, Any]) -> str:
    scope = entry.get("scope")
    return str(scope.get("digest") or "") if isinstance(scope, dict) else ""


def same_text(a: str, b: str) -> bool:
    """Compare two signatures in time that does not depend on where they differ."""
    left, right = a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass")
    if len(left) != len(right):
        return False
    diff = 0
    for x, y in zip(left, right):
        diff |= x ^ y
    return diff == 0


def is_valid(entry: Mapping[str, Any], key: Optional[bytes], project: str, step: str) -> bool:
    """True when ``entry`` (a snapshot approval) was signed for ``step`` in ``project``."""
    if key is None or not isinstance(entry.get("sig"), str):
        return False
    want = sign(key, project, step, str(entry.get("ts", "")), str(entry.get("session") or ""), scope_digest(entry))
    return same_text(want, entry["sig"])


def approved_steps(approvals: Dict[str, Dict[str, Any]], env: Mapping[str, str], project: str) -> Dict[str, bool]:
    """Each approval in the snapshot mapped to whether its signature holds."""
    key = read_key(env)
    return {step: is_valid(entry, key, project, step) for step, entry in approvals.items()}


def check(approvals: Dict[str, Dict[str, Any]], env: Mapping[str, str], project: str) -> Tuple[Dict[str, str], str]:
    """(each approval mapped to ``valid``, ``other-key`` (signed by a key that is not the current one,
    as its ``kid`` says) or ``forged``, the key's problem or ``""``). Without a usable key nothing
    can be checked: every approval maps to ``unchecked`` and the problem says why."""
    key, problem = load_key(env)
    if key is None:
        return {step: "unchecked" for step in approvals}, problem
    current = key_id(key)
    verdicts = {}
    for step, entry in approvals.items():
        if is_valid(entry, key, project, step):
            verdicts[step] = "valid"
        elif isinstance(entry.get("kid"), str) and entry["kid"] != current:
            verdicts[step] = "other-key"
        else:
            verdicts[step] = "forged"
    return verdicts, ""
