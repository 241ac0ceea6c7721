"""``baton once``: its arguments, read by hand (everything after ``--`` is the command, untouched),
and its output: the command's own output streamed through, baton's lines on stderr."""

from __future__ import annotations

import os
import sys

from store.base.errors import BatonError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional, Sequence

    from store.state.location import Layout

USAGE = ("usage: baton once KEY [--id-from REGEX | --id-json FIELD] -- CMD [ARG...]\n"
         "       baton once --settle KEY done|failed|retry \"<evidence>\"")
HELP = f"""{USAGE}

Run CMD (an argv, no shell) at most once for KEY in this job. A stored result is replayed (its
exit code, external id and the tail of its output) without running CMD again. An earlier run
that died between its intent and its result makes the outcome unknown: exit 3 until it is
settled. CMD gets BATON_IDEMPOTENCY_KEY (stable for the job and KEY) to hand to an API.

  --id-from REGEX   the external id: the first match in stdout (group 1 if it has one)
  --id-json FIELD   the external id: a dotted field of JSON printed on stdout (data.id, items.0.url)
  --settle KEY OUTCOME EVIDENCE
                    record what you checked about an unknown outcome: done (it happened), failed
                    (it did not work) or retry (it did not happen: KEY may run again)

Exit codes: CMD's own when it ran or was replayed; 3 outcome unknown; 1 a limit or a refused
settlement; 2 bad usage."""


def _write(stream: object, text: str) -> None:
    print(text, file=stream)  # type: ignore[call-overload]
    getattr(stream, "flush", lambda: None)()


def _show(text: str) -> None:
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()


def run(args: Sequence[str], layout: Layout) -> int:
    from store.once import ident, runner

    words = list(args)
    if not words or words[0] in ("-h", "--help"):
        print(HELP)
        return 0 if words else 2
    if words[0] == "--settle":
        if len(words) < 4:
            raise BatonError("baton once --settle needs KEY, OUTCOME and evidence (see `baton once --help`)")
        print(runner.settle(layout, words[1], words[2], " ".join(words[3:])))
        return 0
    key, id_from, id_json, command = _parse(words)
    pattern = ident.compile_pattern(id_from) if id_from is not None else None
    return runner.run_once(layout, os.environ, key, command, pattern, id_json,
                           lambda line: _write(sys.stderr, line), _show)


def _parse(words: List[str]) -> tuple[str, Optional[str], Optional[str], List[str]]:
    key = words[0]
    if key.startswith("-"):
        raise BatonError(f"baton once: unknown option {key!r} (see `baton once --help`)")
    id_from: Optional[str] = None
    id_json: Optional[str] = None
    rest = words[1:]
    while rest and rest[0] in ("--id-from", "--id-json"):
        if len(rest) < 2:
            raise BatonError(f"baton once: {rest[0]} needs a value (see `baton once --help`)")
        if rest[0] == "--id-from":
            id_from = rest[1]
        else:
            id_json = rest[1]
        rest = rest[2:]
    if id_from is not None and id_json is not None:
        raise BatonError("give --id-from or --id-json, not both")
    if rest and rest[0] == "--":
        rest = rest[1:]
    if not rest:
        raise BatonError(f"baton once {key}: no command to run (see `baton once --help`)")
    return key, id_from, id_json, rest
