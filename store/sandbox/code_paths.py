"""The files whose content other programs run later: Claude Code, MCP, editors, direnv, git or a shell.

While a job is active no tool writes them (the gate refuses with ``runs-code``) and baton's sandbox
keeps them read-only: they would run what they hold outside the sandbox. Paths are relative to the
project (:data:`PROJECT_CODE`) or to the home folder (:data:`HOME_CODE`).
"""

from __future__ import annotations

PROJECT_CODE = (".claude", ".mcp.json", ".vscode", ".idea", ".envrc", ".gitmodules", ".git/hooks", ".git/config",
                ".git/config.worktree", ".git/commondir", ".git/info", ".git/modules", ".git/worktrees")
HOME_CODE = (".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv", ".gitconfig",
             ".config/git", ".claude", ".claude.json", ".ssh", ".local/bin", ".config/baton")
