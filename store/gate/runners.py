"""Test runners' options that name a file or folder they write (``pytest --junitxml=PATH`` and the like).

A step's ``bash`` patterns (the validated phase's defaults are test runners) let a command run
whatever it writes; the outputs these options name are still writes, checked like any other.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Tuple

# program -> options whose value is a path it writes (or, for --basetemp, empties)
OUTPUT_OPTIONS: Dict[str, Tuple[str, ...]] = {
    "pytest": ("--junitxml", "--junit-xml", "--result-log", "--resultlog", "--report-log", "--html",
               "--json-report-file", "--basetemp", "--debug", "--cov-report", "-o", "--override-ini"),
    "mypy": ("--junit-xml", "--cache-dir", "--html-report", "--xml-report", "--txt-report", "--linecount-report",
             "--linecoverage-report", "--cobertura-xml-report", "--any-exprs-report", "--lineprecision-report"),
    "ruff": ("--output-file", "-o", "--cache-dir"),
    "go": ("-o", "-coverprofile", "-cpuprofile", "-memprofile", "-blockprofile", "-mutexprofile", "-trace",
           "-outputdir"),
    "cargo": ("--target-dir",),
    "tox": ("--result-json", "--workdir"),
    "nox": ("--envdir", "--report"),
}
MODULES = {"pytest": "pytest", "mypy": "mypy", "ruff": "ruff", "tox": "tox", "nox": "nox"}


def _program(words: Sequence[Optional[str]]) -> Optional[str]:
    name = os.path.basename(words[0] or "") if words else ""
    if name.startswith("python") and len(words) > 2 and words[1] == "-m":
        return MODULES.get(words[2] or "")
    return name if name in OUTPUT_OPTIONS else None


def _value(option: str, value: str) -> str:
    if option in ("-o", "--override-ini") and "=" in value:
        key, _, path = value.partition("=")
        return path if key.strip() in ("cache_dir", "junit_logging_file", "log_file") else ""
    if option == "--cov-report":
        return value.partition(":")[2]
    return value


def outputs(command: str, cwd: str) -> Tuple[List[str], bool]:
    """The absolute paths test runners in ``command`` are told to write, and whether one such value
    is not literal (so what it writes cannot be told)."""
    from store.shell import simple_commands

    found: List[str] = []
    unknown = False
    for simple in simple_commands(command).commands:
        program = _program(simple.words)
        if program is None:
            continue
        options = OUTPUT_OPTIONS[program]
        words = simple.words
        for i, word in enumerate(words):
            if word is None:
                unknown = unknown or (i > 0 and words[i - 1] in options)
                continue
            name, eq, inline = word.partition("=")
            if name not in options:
                continue
            value = inline if eq else (words[i + 1] if i + 1 < len(words) else "")
            if value is None:
                unknown = True
                continue
            path = _value(name, value)
            if path:
                found.append(os.path.normpath(os.path.join(cwd, os.path.expanduser(path))))
    return found, unknown
