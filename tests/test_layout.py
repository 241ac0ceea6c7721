"""The shape of the code, read from the source with ``ast``: each part imports only the parts
below it, no module takes part in an import cycle, every module says what it decides in its
first lines, the map of the parts (docs/development.md) matches the tree, and every refusal code
the gate can give is in its table (docs/gate.md) with the module that raises it."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest
from docpages import section

ROOT = Path(__file__).resolve().parent.parent
ORDER = ["store.base", "store.backend", "store.shell", "store.ledger", "store.plan", "store.sandbox", "store.state",
         "store.checkpoint", "store.monitor", "store.once", "store.gate", "store.run", "store.cli", "hooks"]
# part -> the parts it imports (besides itself and the root package's version): each only below it in
# ORDER, and each one really used, so the table is the graph and a new edge is a decision made here
ALLOWED: Dict[str, Set[str]] = {
    "store.base": set(),
    "store.backend": {"store.base"},
    "store.shell": {"store.base"},
    "store.ledger": {"store.base"},
    "store.plan": {"store.base", "store.ledger"},
    "store.sandbox": {"store.base", "store.plan"},
    "store.state": {"store.base", "store.backend", "store.ledger", "store.plan"},
    "store.checkpoint": {"store.base", "store.plan", "store.state"},
    "store.monitor": {"store.base", "store.ledger", "store.plan", "store.sandbox", "store.state"},
    "store.once": {"store.base", "store.plan", "store.state", "store.monitor"},
    "store.gate": {"store.base", "store.shell", "store.plan", "store.sandbox", "store.state", "store.monitor"},
    "store.run": {"store.base", "store.state", "store.monitor"},
    "store.cli": {"store.base", "store.backend", "store.ledger", "store.plan", "store.sandbox", "store.state",
                  "store.checkpoint", "store.monitor", "store.once", "store.gate", "store.run"},
    "hooks": {"store.base", "store.shell", "store.sandbox", "store.state", "store.checkpoint", "store.monitor",
              "store.gate", "store.cli"},
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


def part_edges(edges: Graph) -> Dict[str, Set[str]]:
    """part -> the other parts its modules import (the root package aside)."""
    found: Dict[str, Set[str]] = {}
    for source, targets in edges.items():
        mine = part_of(source)
        if mine in ("store", "bin.baton"):
            continue
        found.setdefault(mine, set()).update(part_of(t) for t in targets if part_of(t) not in (mine, "store"))
    return found


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


def test_the_table_allows_only_parts_below_and_every_permission_is_used() -> None:
    below = {part: set(ORDER[:i]) for i, part in enumerate(ORDER)}
    assert all(ALLOWED[part] <= below[part] for part in ORDER)
    assert set(ALLOWED) == set(ORDER) | {"store.__main__"}
    used = part_edges(graph())
    assert {part: ALLOWED[part] - used.get(part, set()) for part in ALLOWED} == {part: set() for part in ALLOWED}


def test_an_unused_permission_is_seen() -> None:
    edges = {"store.gate.bash": {"store.shell.scan"}, "store.shell.scan": set()}
    assert part_edges(edges) == {"store.gate": {"store.shell"}, "store.shell": set()}


def behind_faces(edges: Graph) -> List[str]:
    """Imports, from outside ``store.shell``, of a module behind its face (``analyse``, ``simple_commands``
    and their types, all in ``store/shell/__init__.py``)."""
    return sorted(f"{source} imports {target}" for source, targets in edges.items() for target in targets
                  if target.startswith("store.shell.") and part_of(source) != "store.shell")


def test_nothing_outside_the_shell_imports_what_is_behind_its_face() -> None:
    assert behind_faces(graph()) == []
    assert behind_faces({"store.gate.bash": {"store.shell.lex"}}) == ["store.gate.bash imports store.shell.lex"]


def misleading_aliases(name: str, source: str, known: Set[str]) -> List[str]:
    """``import ... as NAME`` that hides what it names: a baton module under another name, or any name
    under the name of a baton module or part, or of a standard library module."""
    taken = {part for module in known for part in module.split(".")} | set(getattr(sys, "stdlib_module_names", ()))
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.asname is None or alias.asname == alias.name.rsplit(".", 1)[-1]:
                    continue
                full = alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}"
                if full in known or alias.asname in taken:
                    found.append(f"{name}: {alias.name} as {alias.asname}")
    return found


def test_no_alias_bears_another_modules_name() -> None:
    files = dict(module_files())
    known = set(files)
    wrong = [w for name, path in files.items() for w in misleading_aliases(name, path.read_text("utf-8"), known)]
    assert wrong == []
    assert misleading_aliases("m", "from store.base import paths as scope\nfrom a import b as json\n"
                                   "from a import c as c\nfrom a import d as e\n", {"store.base.paths"}) == [
        "m: paths as scope", "m: b as json"]


# one thing seen from two parts, under one name on purpose
SAME_THING = {"rules": ["store.gate.rules", "store.plan.rules"]}  # the plan's rules: parsed there, checked here


def test_no_two_modules_share_a_name() -> None:
    names: Dict[str, List[str]] = {}
    for name, _ in module_files():
        if not name.startswith("store.") or name.count(".") < 2:
            continue  # the parts' packages are named by their folders
        names.setdefault(name.rsplit(".", 1)[1], []).append(name)
    assert {n: sorted(found) for n, found in names.items() if len(found) > 1} == SAME_THING


def test_no_module_is_over_400_lines() -> None:
    long = {name: n for name, path in module_files() if (n := len(path.read_text("utf-8").splitlines())) > 400}
    assert long == {}


def test_every_module_starts_by_saying_what_it_decides() -> None:
    missing = []
    for name, path in module_files():
        if name in ("hooks.bootstrap", "bin.baton"):
            continue  # the bootstrap is inlined into hooks.json; bin/baton is a launcher
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        if not doc or len(doc.split("\n\n")[0]) < 30:
            missing.append(name)
    assert missing == []


TOP = ("store", "hooks", "tests", "bench", "dev", "docs", "commands", "examples", "bin", ".claude-plugin")
PARTS = tuple(p.name for p in (ROOT / "store").iterdir() if (p / "__init__.py").exists())
PATH = re.compile(r"(?<![\w./~$-])((?:" + "|".join(map(re.escape, TOP + PARTS)) + r")/[\w./-]*\w)(?![\w./-]*[<*{])")
DOTTED = re.compile(r"(?<![\w./])((?:store|hooks)(?:\.\w+)+)")
BARE = re.compile(r"(?<![\w./-])([\w-]+\.(?:py|md))\b")
NOT_OURS = {"json.py", "enum.py"}  # a project's own modules, which the hooks must not import


def top_names(path: Path) -> Set[str]:
    """The names a module defines or imports at its top level."""
    found: Set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.Assign):
            found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.If):  # TYPE_CHECKING blocks
            found |= {(a.asname or a.name) for n in node.body if isinstance(n, (ast.Import, ast.ImportFrom))
                      for a in n.names}
    return found


def named_files(doc: str, names: Set[str]) -> List[str]:
    """What ``doc`` names that the repository does not hold: a path (from the root, or from ``store/``
    for a part's folder), a dotted module, or a bare file name ending in .py or .md."""
    wrong = []
    for path in PATH.findall(doc):
        if "__pycache__" not in path and not any((where / path).exists() or (where / path).with_suffix(".py").exists()
                                                 for where in (ROOT, ROOT / "store")):
            wrong.append(path)
    for dotted in DOTTED.findall(doc):
        parts = dotted.split(".")
        if parts[-1] in ("json", "lock", "log", "bin"):
            continue  # a file's name (hooks.json, .baton/hooks.lock), not a module
        found = [f for k in range(len(parts), 0, -1)
                 for f in (ROOT.joinpath(*parts[:k]).with_suffix(".py"), ROOT.joinpath(*parts[:k]) / "__init__.py")
                 if f.exists()][:1]
        rest = parts[len(found[0].relative_to(ROOT).with_suffix("").parts) - (found[0].stem == "__init__"):] \
            if found else parts
        if not found or (rest and rest[0] not in top_names(found[0])):
            wrong.append(dotted)
    wrong += [bare for bare in BARE.findall(doc) if bare not in names | NOT_OURS]
    return wrong


def test_every_file_a_docstring_names_exists() -> None:
    names = {p.name for p in ROOT.rglob("*") if ".git" not in p.parts and ".cache" not in p.parts}
    wrong = []
    for top in ("store", "hooks", "bench", "dev", "tests", "examples"):
        for path in sorted((ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node) or ""
                    wrong += [f"{path.relative_to(ROOT)}: {n}" for n in named_files(doc, names)]
    assert wrong == []
    assert named_files("see ``store/cli.py``, store.gate.nothing, store.gate.bash.decide_bash, gate/bash.py, "
                       "tests/base/test_chars.py, shelllex.py, .baton/run/x.json and hooks/x.<tag>.bin", names) == [
        "store/cli.py", "tests/base/test_chars.py", "store.gate.nothing", "shelllex.py"]


def _table(heading: str) -> List[List[str]]:
    rows = [line for line in section(heading).splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[1:]]


def test_the_map_of_the_parts_lists_every_module_of_every_part() -> None:
    documented = {}
    for part, modules, _ in _table("The parts"):
        folder = part.strip("`").rstrip("/")
        names = set(re.findall(r"`(\w+)`", modules)) - {"analyse", "simple_commands", "__init__"}
        documented[folder] = names
    on_disk = {}
    for folder in sorted(p.parent for p in (ROOT / "store").rglob("__init__.py")
                         if p.parent != ROOT / "store") + [ROOT / "hooks"]:
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
