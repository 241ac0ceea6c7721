"""``baton once``: its arguments, read by hand (everything after ``--`` is the command, untouched),
and its output: the command's own output streamed through, baton's lines on stderr."""

from __future__ import annotations

import os
import sys

from store.base.errors import BatonError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple

    from store.state.location import Layout

USAGE = ("usage: baton once KEY [--id-from REGEX | --id-json FIELD] [--reuse-key] -- CMD [ARG...]\n"
         "       baton once --settle KEY done|failed|retry \"<evidence>\"")
HELP = f"""{USAGE}

Run CMD (an argv, no shell) at most once for KEY in this job. A stored result is replayed (its
exit code, external id and the tail of its output) without running CMD again. An earlier run
that died between its intent and its result makes the outcome unknown: exit 3 until it is
settled. CMD gets BATON_IDEMPOTENCY_KEY (stable for the job and KEY) to hand to an API.
KEY is bound to what it first ran: its command, folder and step. The same KEY with another
command, folder or step is refused (exit 2, nothing run), naming the command that first used it.

  --id-from REGEX   the external id: the first match in stdout (group 1 if it has one)
  --id-json FIELD   the external id: a dotted field of JSON printed on stdout (data.id, items.0.url)
  --reuse-key       this call is the same side effect as KEY's first run, though its command,
                    folder or step differ: replay KEY's stored result for it
  --settle KEY OUTCOME EVIDENCE
                    record what you checked about an unknown outcome: done (it happened), failed
                    (it did not work) or retry (it did not happen: KEY may run again)

examples:
  baton once pr-42 --id-from 'pull/([0-9]+)' -- gh pr create --fill
  baton once mail-report -- ./send-report.sh weekly
  baton once --settle mail-report done "the report is in the team's inbox"

Exit codes: CMD's own when it ran or was replayed; 3 outcome unknown; 1 a limit or a refused
settlement; 2 bad usage or a KEY bound to another command."""
OPTIONS = ("--id-from", "--id-json", "--reuse-key", "--settle", "--help")


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
    key, id_from, id_json, command, reuse = _parse(words)
    pattern = ident.compile_pattern(id_from) if id_from is not None else None
    return runner.run_once(layout, os.environ, key, command, pattern, id_json,
                           lambda line: _write(sys.stderr, line), _show, reuse=reuse)


def _unknown(word: str) -> BatonError:
    from store.cli.typos import hint

    return BatonError(f"baton once: unknown option {word!r}; {hint(word, OPTIONS)}(see `baton once --help`)")


def _parse(words: List[str]) -> Tuple[str, Optional[str], Optional[str], List[str], bool]:
    """KEY, --id-from, --id-json, CMD and --reuse-key; where CMD starts is :mod:`store.base.once_words`'
    answer, which the gate and the shell scanner use too."""
    from store.base.once_words import FLAGS, VALUED, command_start

    key = words[0]
    if key in (*FLAGS, *VALUED):
        raise BatonError(f"baton once: {key} comes after KEY (see `baton once --help`)")
    if key.startswith("-"):
        raise _unknown(key)
    start = command_start(words)
    if start is None:
        raise BatonError(f"baton once {key}: no command to run (see `baton once --help`)")
    values: Dict[str, Optional[str]] = {name: None for name in VALUED}
    reuse, at = False, 1
    while at < start and words[at] != "--":
        if words[at] in FLAGS:
            reuse, at = True, at + 1
        else:
            values[words[at]], at = words[at + 1], at + 2
    if at == start and words[start].startswith("-"):  # no `--`: a word with a dash is a mistyped option, not CMD
        if words[start] in VALUED:
            raise BatonError(f"baton once: {words[start]} needs a value (see `baton once --help`)")
        raise _unknown(words[start])
    if values["--id-from"] is not None and values["--id-json"] is not None:
        raise BatonError("give --id-from or --id-json, not both")
    return key, values["--id-from"], values["--id-json"], words[start:], reuse
