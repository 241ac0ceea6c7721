"""The files whose content other programs run later: Claude Code, MCP, editors, direnv, git or a shell.

While a job is active no tool writes them (the gate refuses with ``runs-code``) and baton's sandbox
keeps them read-only: they would run what they hold outside the sandbox. Paths are relative to the
project (:data:`PROJECT_CODE`) or to the home folder (:data:`HOME_CODE`): every shell's start-up
files (bash, zsh, ksh, csh, fish, profile), the user's git config, ssh keys and config, and what
picks the interpreter (pyenv, asdf, mise), which steers every hook's ``python3``.
"""

from __future__ import annotations

PROJECT_CODE = (".claude", ".mcp.json", ".vscode", ".idea", ".envrc", ".gitmodules", ".git/hooks", ".git/config",
                ".git/config.worktree", ".git/commondir", ".git/info", ".git/modules", ".git/worktrees")
SHELL_STARTUP = (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
                 ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".shrc", ".cshrc", ".tcshrc", ".login",
                 ".logout",
                 ".config/fish", ".config/zsh", ".config/environment.d", ".pam_environment", ".inputrc")
# what picks the interpreter a hook runs (pyenv, asdf, mise and their shims): steering it steers every hook
VERSION_PICKERS = (".python-version", ".tool-versions", ".pyenv", ".asdf", ".asdfrc", ".config/mise",
                   ".local/share/mise", ".mise.toml")
HOME_CODE = (*SHELL_STARTUP, *VERSION_PICKERS, ".gitconfig", ".config/git", ".claude", ".claude.json", ".ssh",
             ".local/bin", ".config/baton", ".config/systemd", ".config/autostart")
