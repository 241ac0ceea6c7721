"""baton's bare /brief and /record command files: written only where no file of the person's is,
removed only when they are baton's, and answered by the hook only when Claude Code uses them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from store.cli import command_files

if TYPE_CHECKING:
    from conftest import Baton, Sandbox


def test_install_writes_both_files_with_the_marker(baton: Baton, sandbox: Sandbox) -> None:
    folder = sandbox.project / ".claude" / "commands"
    run = baton("commands", "install")
    assert (run.code, run.err) == (0, "")
    assert run.out.splitlines() == [f"{folder / 'brief.md'}: installed", f"{folder / 'record.md'}: installed"]
    for name in ("brief", "record"):
        text = (folder / f"{name}.md").read_text()
        assert text == command_files.FILES[name] and command_files.MARKER in text
        assert "disable-model-invocation: true" in text and "description: " in text
    assert baton("commands", "install").out.count("already installed") == 2


def test_a_persons_own_file_is_never_overwritten_and_never_removed(baton: Baton, sandbox: Sandbox) -> None:
    folder = sandbox.project / ".claude" / "commands"
    folder.mkdir(parents=True)
    mine = "---\ndescription: my own record command\n---\nRecord this in my notes: $ARGUMENTS\n"
    (folder / "record.md").write_text(mine)
    run = baton("commands", "install")
    assert run.out.splitlines() == [
        f"{folder / 'brief.md'}: installed",
        f"{folder / 'record.md'}: kept: a command file of your own is there, so /record stays yours"]
    assert (folder / "record.md").read_text() == mine
    removed = baton("commands", "remove")
    assert removed.out.splitlines() == [f"{folder / 'brief.md'}: removed", f"{folder / 'record.md'}: kept: not baton's"]
    assert (folder / "record.md").read_text() == mine and not (folder / "brief.md").exists()
    assert baton("commands", "remove").out.splitlines()[0] == f"{folder / 'brief.md'}: not there"


def test_an_older_copy_of_batons_file_is_updated(baton: Baton, sandbox: Sandbox) -> None:
    folder = sandbox.project / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "brief.md").write_text(f"---\ndescription: old\n---\n{command_files.MARKER}\nold text\n")
    assert f"{folder / 'brief.md'}: updated" in baton("commands", "install").out
    assert (folder / "brief.md").read_text() == command_files.FILES["brief"]


def test_user_scope_and_init_commands(baton: Baton, sandbox: Sandbox) -> None:
    run = baton("commands", "install", "--user")
    assert run.code == 0 and (sandbox.home / ".claude" / "commands" / "record.md").exists()
    made = baton("init", "a", "b", "--commands")
    assert made.code == 0, made.err
    assert f"{sandbox.project / '.claude' / 'commands' / 'record.md'}: installed" in made.out
    assert baton("commands", "install", "--user", "--project").code == 2


def test_claude_code_uses_the_users_file_first(tmp_path: Path) -> None:
    project, home = tmp_path / "project" / "sub", tmp_path / "home"
    project.mkdir(parents=True)
    assert command_files.resolved("record", project, home) is None and not command_files.answers("record", project,
                                                                                                  home)
    command_files.install(command_files.folder_for("project", project.parent, home))
    assert command_files.resolved("record", project, home) == project.parent / ".claude" / "commands" / "record.md"
    assert command_files.answers("record", project, home)
    user = command_files.folder_for("user", project, home)
    user.mkdir(parents=True)
    (user / "record.md").write_text("my own\n")
    assert command_files.resolved("record", project, home) == user / "record.md"
    assert not command_files.answers("record", project, home)  # the person's /record, never taken over
    assert command_files.answers("brief", project, home)
