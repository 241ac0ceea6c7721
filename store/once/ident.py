"""The external id a side effect printed (a pull request URL, a message id), read from its stdout
with ``--id-from REGEX`` (group 1 when it has one, else the whole match) or ``--id-json FIELD``
(a dotted path into JSON output: ``data.id``, ``items.0.url``; the whole of stdout, or else the
last line of it that is JSON)."""

from __future__ import annotations

import re

from store.base import jsonc
from store.base.errors import BatonError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional, Pattern

MAX_ID = 200


def compile_pattern(text: str) -> Pattern[str]:
    try:
        return re.compile(text, re.MULTILINE)
    except re.error as exc:
        raise BatonError(f"--id-from: not a valid regular expression: {exc}") from None


def from_regex(pattern: Pattern[str], stdout: bytes) -> Optional[str]:
    match = pattern.search(stdout.decode("utf-8", "replace"))
    if match is None:
        return None
    found = match.group(1) if pattern.groups else match.group(0)
    return None if found is None else found[:MAX_ID]


def _document(text: str) -> Any:
    try:
        return jsonc.loads(text)
    except ValueError:
        pass
    for line in reversed(text.splitlines()):
        try:
            return jsonc.loads(line)
        except ValueError:
            continue
    return None


def from_json(field: str, stdout: bytes) -> Optional[str]:
    value = _document(stdout.decode("utf-8", "replace"))
    for part in field.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    if isinstance(value, (dict, list)) or value is None:
        return None
    text = value if isinstance(value, str) else jsonc.dumps(value)
    return text[:MAX_ID]
