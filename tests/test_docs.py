"""The README, the CLI, the commands folder and CI agree with each other."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import List

import pytest
from docpages import anchors, links, pages, section, text_of

from store.cli.main import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def setup_blocks() -> List[List[str]]:
    """The commands of each ```sh block of the Set-up section, in order."""
    blocks = re.findall(r"```sh\n(.*?)```", section("Set-up"), re.S)
    return [[line for line in block.splitlines() if line.strip()] for block in blocks]


def test_setup_installs_from_a_copy_then_links_the_cli_and_ci_runs_the_test_command() -> None:
    install, tests = setup_blocks()
    assert install[0] == 'claude plugin install baton --marketplace "$PWD"'
    assert install[1] == 'mkdir -p ~/.local/bin && ln -sf "$PWD/bin/baton" ~/.local/bin/baton'
    assert tests == ["dev/test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^exec dev/test\s*$", ci, re.M), ci


def broken_links(page: Path) -> List[str]:
    """The page's relative links whose file, or whose anchor in that file, does not exist."""
    broken = []
    for target in links(text_of(page)):
        if re.match(r"[a-z][a-z+.-]*:", target):  # https:, mailto: ... are not checked here
            continue
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(target)
        elif fragment and (dest.suffix != ".md" or fragment not in anchors(text_of(dest))):
            broken.append(target)
    return broken


@pytest.mark.parametrize("page", [*pages(), ROOT / "bench" / "README.md"], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_readme_stays_short_and_links_every_docs_page() -> None:
    """The README is what a newcomer reads: under 40 KB, the reference is in docs/."""
    assert len(README.encode("utf-8")) < 40 * 1024
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in links(README)}
    assert set(pages()[1:]) - linked == set()


def test_the_link_checker_finds_a_broken_file_or_anchor(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# Title B\n\n## A `code` heading (with) punctuation\n")
    page = tmp_path / "a.md"
    page.write_text("# A\n\n[ok](b.md) [ok](b.md#a-code-heading-with-punctuation) [ok](#a)\n"
                    "[gone](c.md) [no anchor](b.md#nothing) [own](#b)\n```sh\n[code](x.md)\n```\n"
                    "`[code](y.md)` [web](https://example.com/x) [two\nlines](b.md#title-b)\n")
    assert broken_links(page) == ["c.md", "b.md#nothing", "#b"]


def test_nothing_points_at_a_repository_that_does_not_exist() -> None:
    """baton is installed from a copy: no manifest or doc names a hosted repository or site."""
    for name in ("plugin.json", "marketplace.json"):
        text = (ROOT / ".claude-plugin" / name).read_text()
        assert re.findall(r"https?://[^\s\"]+", text) == [], name
    for page in pages():
        text = text_of(page)
        assert "baton-dev/baton" not in text, page
        # a host name in an example rule is not a repository
        assert re.findall(r"github\.com/[\w.-]+", text) == [], page


def test_the_node_version_is_the_one_claude_code_declares_everywhere() -> None:
    installer = (ROOT / "dev" / "install-claude-code").read_text()
    [major] = re.findall(r"^node_major=(\d+)", installer, re.M)
    assert f"Node.js {major} or newer" in README
    assert not re.search(r"Node(\.js)? ?\d+\+", README), "say the one version Claude Code declares"


def test_the_readme_says_which_commands_the_model_cannot_invoke() -> None:
    flagged = {p.stem for p in (ROOT / "commands").glob("*.md")
               if "\ndisable-model-invocation: true\n" in p.read_text()}
    [sentence] = [p for p in section("Commands").split("\n\n") if "carry `disable-model-invocation: true`" in p]
    named = set(re.findall(r"`/baton:(\w+)`", sentence))
    assert named == flagged == {p.stem for p in (ROOT / "commands").glob("*.md")}
    from store.cli.command_files import FILES

    assert all("\ndisable-model-invocation: true\n" in text for text in FILES.values())
    assert "so do the bare ones" in sentence


def test_every_cli_subcommand_is_documented_and_no_other() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    real = set(sub.choices)  # type: ignore[arg-type]
    documented = set(re.findall(r"^\| `baton (\w+)", section("The CLI"), re.M))
    assert documented == real


def test_every_slash_command_is_documented_and_answered() -> None:
    files = {p.stem for p in (ROOT / "commands").glob("*.md")}
    documented = set(re.findall(r"^\| `/baton:(\w+)", section("Commands"), re.M))
    from store.cli.command_files import FILES
    from store.cli.prompt import BARE_NAMES, NAMES, parse_bare

    assert files == documented == set(NAMES)
    bare = re.findall(r"^\| `/(\w+)[ `]", section("Commands"), re.M)
    assert bare[:2] == list(FILES) == ["brief", "record"], "the card's names come first"
    assert tuple(FILES) == BARE_NAMES and all(parse_bare(f"/{name}") == (name, "") for name in FILES)


@pytest.mark.skipif(sys.version_info < (3, 10), reason="sys.stdlib_module_names is new in 3.10")
def test_no_module_shares_a_name_with_the_standard_library() -> None:
    ours = {p.stem for folder in ("store", "hooks") for p in (ROOT / folder).rglob("*.py")} | {"store", "hooks"}
    ours |= {p.name for p in (ROOT / "store").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert "ledger" in ours and "plan" in ours
    assert (ours - {"__init__", "__main__"}) & set(sys.stdlib_module_names) == set()
