"""Reading a Claude Code transcript from an offset: tokens, model turns, cost and gate refusals
(with what was refused, :mod:`store.monitor.refusals`).

Claude Code (2.1.328) writes one ``assistant`` entry per content block, each repeating the
message's ``usage``; entries of one message share ``message.id`` and ``requestRef``. A message is
counted once: a later entry of the same message adds only what its usage grew by. A
``cost-state`` entry, written when a session's process ends, carries ``totalCostUSD`` (the
session's total so far, resumed runs included) and ``modelUsage`` (the tokens that total covers).
Only complete lines are read; a line still being written (or cut by a kill) waits for the next read.
"""

from __future__ import annotations

from store.base import jsonc
from store.base.values import Value
from store.monitor.clock import epoch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

    from store.monitor.refusals import Refusal

KINDS = ("input", "output", "cache_read", "cache_creation")
USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
MODEL_FIELDS = ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens")
CHUNK = 8 * 1024 * 1024  # the most one read takes in; the rest waits for the next read
RECENT = 2  # message keys remembered across reads, for entries of one message split by a read
REFUSAL = "[baton:"  # then the code, lowercase words joined by hyphens, then "]"


class Message(Value):
    """The tokens one model response added (beyond what earlier entries of it counted)."""

    __slots__ = ("ts", "tokens", "new", "sidechain")

    def __init__(self, ts: Optional[float], tokens: List[int], new: bool, sidechain: bool) -> None:
        self.ts, self.tokens, self.new, self.sidechain = ts, tokens, new, sidechain


class Cost(Value):
    __slots__ = ("ts", "usd", "covered")

    def __init__(self, ts: Optional[float], usd: float, covered: int) -> None:
        self.ts, self.usd, self.covered = ts, usd, covered  # covered: tokens the total accounts for


class Reading(Value):
    """What one read found. ``offset`` is where the next read starts; ``recent`` carries message
    keys (and the usage counted for each) to that read."""

    __slots__ = ("offset", "messages", "costs", "refusals", "recent", "last_ts", "skipped", "priced", "used")

    def __init__(self, offset: int, recent: List[List[Any]]) -> None:
        self.offset = offset
        self.messages: List[Message] = []
        self.costs: List[Cost] = []
        self.refusals: List[Refusal] = []
        self.used: Dict[str, Tuple[str, str]] = {}  # tool_use id -> (tool, target), for the refusals
        self.recent = recent
        self.last_ts: Optional[float] = None
        self.skipped = 0  # lines that were not JSON
        self.priced = 0.0  # dollars of ``costUSD`` fields on the messages read


def _usage(raw: Any) -> Optional[List[int]]:
    if not isinstance(raw, dict):
        return None
    return [v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0
            for v in (raw.get(f) for f in USAGE_FIELDS)]


def _key(entry: Dict[str, Any], message: Dict[str, Any]) -> Optional[str]:
    """What the entries of one message share (``None``: nothing to tell them apart by)."""
    if message.get("id") or entry.get("requestRef"):
        return f"{message.get('id', '')}|{entry.get('requestRef', '')}"
    return str(entry["uuid"]) if entry.get("uuid") else None


def _assistant(entry: Dict[str, Any], ts: Optional[float], reading: Reading, raw: bytes) -> None:
    message = entry.get("message")
    usage = _usage(message.get("usage")) if isinstance(message, dict) else None
    if usage is None or not isinstance(message, dict):
        return
    key = _key(entry, message)
    seen = next((item for item in reading.recent if item[0] == key), None) if key is not None else None
    if seen is None:
        added, new = usage, True
        if key is not None:
            reading.recent = (reading.recent + [[key, usage]])[-RECENT:]
    else:
        added, new = [max(u - s, 0) for u, s in zip(usage, seen[1])], False
        seen[1] = [max(u, s) for u, s in zip(usage, seen[1])]
    cost = entry.get("costUSD")  # older Claude Code versions priced each message in the transcript
    if new and isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0:
        reading.priced += float(cost)
    reading.messages.append(Message(ts, added, new, entry.get("isSidechain") is True))
    if b'"tool_use"' in raw:
        from store.monitor import refusals

        refusals.remember(message.get("content"), reading.used)


def _cost_state(entry: Dict[str, Any], ts: Optional[float], reading: Reading) -> None:
    total = entry.get("totalCostUSD")
    if not isinstance(total, (int, float)) or isinstance(total, bool) or total < 0:
        return
    covered = 0
    models = entry.get("modelUsage")
    for usage in models.values() if isinstance(models, dict) else ():
        if isinstance(usage, dict):
            covered += sum(v for v in (usage.get(f) for f in MODEL_FIELDS) if isinstance(v, int))
    reading.costs.append(Cost(ts, float(total), covered))


def _refusals(entry: Dict[str, Any], ts: Optional[float], reading: Reading) -> None:
    from store.monitor import refusals

    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error") is True:
            inner = block.get("content")
            text = inner if isinstance(inner, str) else jsonc.dumps(inner)
            reading.refusals += [refusals.of_result(text, code, ts, block.get("tool_use_id"), reading.used)
                                 for code in refusal_codes(text)[-1:]]


def refusal_codes(text: str) -> List[str]:
    """The codes of the gate's refusals in ``text``, ``[baton:CODE]`` (``re``'s findall of
    ``\\[baton:([a-z]+(?:-[a-z]+)*)\\]``, without importing ``re`` into the Stop hook)."""
    codes = []
    start = text.find(REFUSAL)
    while start >= 0:
        start += len(REFUSAL)
        end = text.find("]", start)
        code = text[start:end] if end >= 0 else ""
        if all(word.isascii() and word.isalpha() and word.islower() for word in code.split("-")):
            codes.append(code)
        start = text.find(REFUSAL, start)
    return codes


def _line(raw: bytes, reading: Reading) -> None:
    costly = b'"usage"' in raw or b'"cost-state"' in raw or (b'"is_error"' in raw and b"[baton:" in raw)
    if not costly:
        return  # most lines (attachments, request blobs, tool output) carry nothing counted here
    try:
        entry = jsonc.loads(raw)
    except ValueError:
        reading.skipped += 1
        return
    if not isinstance(entry, dict):
        return
    ts = epoch(entry.get("timestamp"))
    kind = entry.get("type", "assistant" if isinstance(entry.get("message"), dict) else None)
    if kind == "assistant":
        _assistant(entry, ts, reading, raw)
    elif kind == "cost-state":
        _cost_state(entry, ts, reading)
    elif kind == "user":
        _refusals(entry, ts, reading)
    if ts is not None:
        reading.last_ts = ts if reading.last_ts is None else max(reading.last_ts, ts)


def read(path: str, offset: int = 0, recent: Optional[List[List[Any]]] = None, chunk: int = 0) -> Reading:
    """Everything counted in the complete lines of ``path`` from ``offset`` (at most ``chunk``
    bytes of them). A transcript that shrank is read from its new end: nothing is counted twice."""
    reading = Reading(offset, [list(item) for item in recent or ()])
    chunk = chunk or CHUNK
    with open(path, "rb") as handle:
        size = handle.seek(0, 2)
        if size < offset:
            reading.offset = size
            return reading
        handle.seek(offset)
        data = handle.read(chunk)
        end = data.rfind(b"\n") + 1
        if end == 0 and len(data) == chunk:  # one line longer than a chunk: step over it, uncounted
            while True:
                more = handle.read(chunk)
                at = more.find(b"\n")
                if not more or at >= 0:
                    reading.offset = handle.tell() - len(more) + at + 1 if at >= 0 else offset
                    reading.skipped += 1 if at >= 0 else 0
                    return reading
    for raw in data[:end].split(b"\n"):
        if raw.strip():
            _line(raw, reading)
    reading.offset = offset + end
    return reading


def subagent_transcripts(path: str) -> List[str]:
    """The transcripts of a session's subagents: ``<session transcript without .jsonl>/subagents/
    agent-*.jsonl``, sorted; empty when there are none."""
    import os

    folder = os.path.join(path[:-6] if path.endswith(".jsonl") else path, "subagents")
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(os.path.join(folder, n) for n in names if n.startswith("agent-") and n.endswith(".jsonl"))
