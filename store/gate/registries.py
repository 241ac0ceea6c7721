"""Where publishing sends a package: npm, pnpm, yarn, twine, uv, poetry, flit, hatch, cargo, gem, docker.

An explicit registry option wins; npm-style tools also read every ``registry`` line of the
``.npmrc`` files (the command's folder, the project, the home folder) and ``publishConfig`` in
``package.json``, and all of them count (one of them is used); otherwise the tool's public
registry. A registry named only by a configuration baton does not read is unknown (``None``).
"""

from __future__ import annotations

import os

from store.base import bounded, jsonc
from store.gate.urls import url_host

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, List, Optional, Sequence, Tuple

    Dest = Tuple[Optional[str], str]

PUBLIC = {"npm": "registry.npmjs.org", "pnpm": "registry.npmjs.org", "yarn": "registry.yarnpkg.com",
          "twine": "upload.pypi.org", "uv": "upload.pypi.org", "poetry": "upload.pypi.org", "flit": "upload.pypi.org",
          "hatch": "upload.pypi.org", "cargo": "crates.io", "gem": "rubygems.org", "docker": "docker.io",
          "podman": "docker.io"}
_VERB = {"npm": ("publish",), "pnpm": ("publish",), "yarn": ("publish", "npm"), "twine": ("upload",),
         "uv": ("publish",), "poetry": ("publish",), "flit": ("publish",), "hatch": ("publish",),
         "cargo": ("publish",), "gem": ("push",), "docker": ("push",), "podman": ("push",)}


def _value(words: Sequence[str], *names: str) -> Optional[str]:
    for k, word in enumerate(words):
        for name in names:
            if word == name and k + 1 < len(words):
                return words[k + 1]
            if name.startswith("--") and word.startswith(name + "="):
                return word[len(name) + 1 :]
    return None


def publish_destinations(argv: Sequence[str], ctx: Any) -> List[Dest]:
    tool, words = os.path.basename(argv[0]), list(argv[1:])
    verbs = [w for w in words if not w.startswith("-")]
    if not verbs or verbs[0] not in _VERB.get(tool, ()) or (tool == "yarn" and verbs[:2] == ["npm"]):
        return []
    if tool == "yarn" and verbs[0] == "npm" and verbs[1:2] != ["publish"]:
        return []
    what = f"{tool} {verbs[0]}"
    explicit = _value(words, "--registry", "--repository-url", "--publish-url", "--index", "--host")
    if explicit is not None:
        return [_dest(explicit, what)]
    if _value(words, "-r", "--repository", "--registry") is not None:
        return [(None, f"{what} names a repository from a configuration baton does not read")]
    if tool in ("docker", "podman"):
        image = verbs[1] if len(verbs) > 1 else ""
        first = image.split("/", 1)[0]
        registry = first if "/" in image and ("." in first or ":" in first or first == "localhost") else PUBLIC[tool]
        return [(url_host(registry, bare=True), what)]
    if tool in ("npm", "pnpm", "yarn"):
        return _npm(ctx, what, tool)
    return [(PUBLIC[tool], what)]


def _dest(text: str, what: str) -> Dest:
    host = url_host(text)  # None for a word only known at run time (it holds a NUL)
    return (host, what) if host else (None, f"{what}: cannot tell the host of {text[:60]!r}")


def _npm(ctx: Any, what: str, tool: str) -> List[Dest]:
    found: List[Dest] = []
    unscoped = False
    for folder in dict.fromkeys(f for f in (ctx.cwd, ctx.project, ctx.home) if f):
        for key, value in _npmrc(os.path.join(folder, ".npmrc")):
            if key == "registry" or key.endswith(":registry"):
                unscoped = unscoped or key == "registry"
                found.append(_dest(value, f"{what} ({folder}/.npmrc)"))
    published = _publish_config(os.path.join(ctx.cwd or ctx.project, "package.json"))
    if published:
        found.append(_dest(published, f"{what} (package.json publishConfig)"))
    if not unscoped and not published:
        found.append((PUBLIC[tool], what))
    return found


def _npmrc(path: str) -> List[Tuple[str, str]]:
    try:
        lines = bounded.read_regular(path, 1_000_000).decode("utf-8", "replace").splitlines()
    except (OSError, bounded.Unreadable):
        return []
    pairs = []
    for line in lines:
        key, eq, value = line.strip().partition("=")
        if eq and not key.startswith((";", "#")):
            pairs.append((key.strip(), value.strip().strip('"')))
    return pairs


def _publish_config(path: str) -> Optional[str]:
    try:
        data = jsonc.loads(bounded.read_regular(path, 5_000_000).decode("utf-8"))
    except (OSError, ValueError, bounded.Unreadable):
        return None
    config = data.get("publishConfig") if isinstance(data, dict) else None
    registry = config.get("registry") if isinstance(config, dict) else None
    return registry if isinstance(registry, str) else None
