"""The shape of the code, read from the source with ``ast``: each part imports only the parts
below it, no module takes part in an import cycle, every module says what it decides in its
first lines, the map of the parts (docs/development.md) matches the tree, and every refusal code
the gate can give is in its table (docs/gate.md) with the module that raises it."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest
from docpages import section

ROOT = Path(__file__).resolve().parent.parent
ORDER = ["store.base", "store.backend", "store.shell", "store.state", "store.checkpoint", "store.monitor",
         "store.once", "store.gate", "store.run", "store.cli", "hooks"]
# part -> the parts it may import (besides itself and the root package's version)
ALLOWED: Dict[str, Set[str]] = {
    "store.base": set(),
    "store.backend": {"store.base"},
    "store.shell": {"store.base"},
    "store.state": {"store.base", "store.backend"},
    "store.checkpoint": {"store.base", "store.backend", "store.state"},
    "store.monitor": {"store.base", "store.backend", "store.shell", "store.state"},
    "store.once": {"store.base", "store.backend", "store.state", "store.monitor"},
    "store.gate": {"store.base", "store.backend", "store.shell", "store.state", "store.monitor"},
    "store.run": {"store.base", "store.backend", "store.state", "store.monitor"},
    "store.cli": {"store.base", "store.backend", "store.shell", "store.state", "store.checkpoint", "store.monitor",
                  "store.once", "store.gate", "store.run"},
    "hooks": set(ORDER[:-1]),
    "store.__main__": {"store.cli"},
}
Graph = Dict[str, Set[str]]


def module_files() -> Iterator[Tuple[str, Path]]:
    for folder in ("store", "hooks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join(parts), path
    yield "bin.baton", ROOT / "bin" / "baton"


def imports_of(name: str, path: Path, known: Set[str]) -> Set[str]:
    """Every baton module ``path`` imports, anywhere in it (functions and TYPE_CHECKING blocks too)."""
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in known else node.module)
    return {m for m in found if m in known and m != name}


def graph() -> Graph:
    files = dict(module_files())
    known = set(files)
    return {name: imports_of(name, path, known) for name, path in files.items()}


def cycles(edges: Graph) -> List[List[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    found: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def part_of(module: str) -> str:
    if module in ("store", "store.__main__", "bin.baton"):
        return module
    if module.startswith("hooks"):
        return "hooks"
    return ".".join(module.split(".")[:2])


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_takes_part_in_an_import_cycle() -> None:
    edges = graph()
    assert "store.gate.bash" in edges and "store.shell.scan" in edges
    assert cycles(edges) == []


def test_each_part_imports_only_the_parts_below_it() -> None:
    wrong = []
    for source, targets in graph().items():
        mine = part_of(source)
        if mine in ("store", "bin.baton"):
            continue
        for target in targets:
            theirs = part_of(target)
            if theirs not in (mine, "store") and theirs not in ALLOWED[mine]:
                wrong.append(f"{source} imports {target}")
    assert wrong == []


def test_every_module_starts_by_saying_what_it_decides() -> None:
    missing = []
    for name, path in module_files():
        if name in ("hooks.bootstrap", "bin.baton"):
            continue  # the bootstrap is inlined into hooks.json; bin/baton is a launcher
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        if not doc or len(doc.split("\n\n")[0]) < 30:
            missing.append(name)
    assert missing == []


def _table(heading: str) -> List[List[str]]:
    rows = [line for line in section(heading).splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[1:]]


def test_the_map_of_the_parts_lists_every_module_of_every_part() -> None:
    documented = {}
    for part, modules, _ in _table("The parts"):
        folder = part.strip("`").rstrip("/")
        names = set(re.findall(r"`(\w+)`", modules)) - {"analyse", "__init__"}
        documented[folder] = names
    on_disk = {}
    for folder in [p for p in (ROOT / "store").iterdir() if (p / "__init__.py").exists()] + [ROOT / "hooks"]:
        names = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
        if folder.name == "hooks":  # "one module per event" stands for the event modules
            from hooks.adapter import MODULES

            names -= set(MODULES.values())
        on_disk[str(folder.relative_to(ROOT))] = names
    assert documented == on_disk


def raised_codes() -> Dict[str, Set[str]]:
    """code -> the files whose source gives it: ``refuse("code", ...)``, a returned
    ``("code", why)`` pair, or a literal ``[baton:code]``."""
    found: Dict[str, Set[str]] = {}
    for name, path in module_files():
        text = path.read_text(encoding="utf-8")
        rel = str(path.relative_to(ROOT))
        codes = set(re.findall(r"\[baton:([a-z-]+)\]", text))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "refuse" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    codes.add(first.value)
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 2:
                first = node.value.elts[0]
                if (isinstance(first, ast.Constant) and isinstance(first.value, str)
                        and re.fullmatch(r"[a-z]+(?:-[a-z]+)*", first.value) and name.startswith("store.gate")):
                    codes.add(first.value)
        for code in codes:
            found.setdefault(code, set()).add(rel)
    return found


def test_every_refusal_code_is_in_the_docs_with_the_modules_that_raise_it() -> None:
    rows = _table("Why was this denied?")
    documented = {row[0].strip("`"): set(re.findall(r"`([\w/.]+\.py)`", row[2])) for row in rows}
    assert raised_codes() == documented


@pytest.mark.parametrize("code", ["own-files", "writes", "waiting"])
def test_a_refusal_carries_its_code(code: str) -> None:
    assert code in raised_codes()
