"""The row format of the shell specification: a command and the verdict baton must reach on it.

``READ``: read-only (nothing written, nothing opaque). ``writes(paths)``: exactly these files are
written and the effect is otherwise known. ``opaque(because, writes=...)``: the effect cannot be
told, for a reason containing ``because``. ``runs(argv, ...)`` adds the simple commands bash
would run, resolved (``None`` for a word known only at run time), in order. Paths in a row are
relative to ``CWD`` unless absolute; "~/" is ``HOME``.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Sequence, Tuple

from store.shell import analyse
from store.shell.findings import Scan

CWD = "/work/proj"
HOME = "/home/u"
Argv = Tuple[Optional[str], ...]


class Verdict(NamedTuple):
    readonly: bool = False
    writes: Tuple[str, ...] = ()
    because: Optional[str] = None  # None: not opaque; else a phrase of one opaque reason ("": any)
    runs: Tuple[Argv, ...] = ()
    links: Tuple[str, ...] = ()
    effects: bool = True  # False: only ``runs`` is specified

    def and_runs(self, *argvs: Argv) -> Verdict:
        return self._replace(runs=self.runs + tuple(argvs))


READ = Verdict(readonly=True)


def writes(*paths: str, links: Sequence[str] = ()) -> Verdict:
    return Verdict(writes=tuple(paths), links=tuple(links))


def opaque(because: str, writes: Sequence[str] = ()) -> Verdict:
    return Verdict(writes=tuple(writes), because=because)


def runs(*argvs: Argv) -> Verdict:
    """Only the resolved commands are specified (for rows about resolution, not effects)."""
    return Verdict(runs=tuple(argvs), effects=False)


Row = Tuple[str, Verdict]


def at(path: str) -> str:
    if path.startswith("~/"):
        return HOME + path[1:]
    return path if path.startswith("/") else f"{CWD}/{path}"


def check(command: str, verdict: Verdict) -> Scan:
    """Assert ``command`` gets ``verdict``; return the scan."""
    result = analyse(command, CWD, HOME)
    if verdict.readonly:
        assert result.readonly, f"{command!r} should be read-only: {result}"
        assert not result.writes and not result.opaque, result
    elif verdict.effects:
        assert not result.readonly, f"{command!r} should not be read-only: {result}"
        assert sorted(result.writes) == sorted({at(w) for w in verdict.writes}), result
        if verdict.because is None:
            assert not result.opaque, result.opaque
        else:
            assert any(verdict.because in reason for reason in result.opaque), (verdict.because, result.opaque)
    if verdict.links:
        assert sorted(result.links) == sorted({at(w) for w in verdict.links}), result.links
    if verdict.runs:
        seen = [inv.argv for inv in result.invocations]
        position = 0
        for argv in verdict.runs:
            assert argv in seen[position:], f"{argv} not run (in order) by {command!r}: {seen}"
            position = seen.index(argv, position) + 1
    return result


def ids(rows: Sequence[Row]) -> list[str]:
    return [repr(command)[:60] for command, _ in rows]
