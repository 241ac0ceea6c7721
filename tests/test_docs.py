"""The README, the CLI, the commands folder and CI agree with each other."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from store.cli.main import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README, re.M | re.S)
    assert match, f"README has no section {title!r}"
    return match.group(1)


def test_setup_is_two_commands_and_ci_runs_the_test_command() -> None:
    blocks = re.findall(r"```sh\n(.*?)```", _section("Set-up"), re.S)
    commands = [line for block in blocks for line in block.splitlines() if line.strip()]
    assert commands == ["claude plugin install baton --marketplace baton-dev/baton", "dev/test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^exec dev/test\s*$", ci, re.M), ci


def test_every_cli_subcommand_is_documented_and_no_other() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    real = set(sub.choices)  # type: ignore[arg-type]
    documented = set(re.findall(r"^\| `baton (\w+)", _section("The CLI"), re.M))
    assert documented == real


def test_every_slash_command_is_documented_and_answered() -> None:
    files = {p.stem for p in (ROOT / "commands").glob("*.md")}
    documented = set(re.findall(r"^\| `/baton:(\w+)", _section("Commands"), re.M))
    from store.cli.prompt import NAMES

    assert files == documented == set(NAMES)


@pytest.mark.skipif(sys.version_info < (3, 10), reason="sys.stdlib_module_names is new in 3.10")
def test_no_module_shares_a_name_with_the_standard_library() -> None:
    ours = {p.stem for folder in ("store", "hooks") for p in (ROOT / folder).rglob("*.py")} | {"store", "hooks"}
    ours |= {p.name for p in (ROOT / "store").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert "ledger" in ours and "plan" in ours
    assert (ours - {"__init__", "__main__"}) & set(sys.stdlib_module_names) == set()
