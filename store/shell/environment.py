"""Which variable names change what the shell or the programs it runs do, whatever their value.

Assigning one of them (``export PATH=...``, ``GIT_CONFIG_PARAMETERS=... git status``,
``read PS4``) makes a command the scanner would call read-only run other code, so the scan
reports it. The list is derived from what the programs on the read-only list, git's read-only
subcommands, bash and the C library read from the environment; adding a program to the
read-only list means checking the variables it reads against these patterns. Names that only
scripts use (``dir``, ``OUT``, ``COUNT``) are not listed: the scanner follows their values.
"""

from __future__ import annotations

# exact names: bash itself (PATH lookup, cd, prompts and traces, startup files) and programs' config
_NAMES = frozenset(
    """PATH HOME PWD OLDPWD CDPATH BASH_ENV ENV SHELLOPTS BASHOPTS PS0 PS1 PS2 PS3 PS4 PROMPT_COMMAND IFS
    GLOBIGNORE EXECIGNORE FIGNORE TMPDIR PAGER MANPAGER EDITOR VISUAL SHELL BROWSER INPUTRC HISTFILE
    POSIXLY_CORRECT TAPE MAGIC HOSTALIASES RES_OPTIONS LOCALDOMAIN LOCPATH NLSPATH GCONV_PATH TERMINFO
    TERMINFO_DIRS SSLKEYLOGFILE WGETRC SYSTEM_WGETRC CURL_HOME RIPGREP_CONFIG_PATH AWKPATH AWKLIBPATH
    JQ_LIBRARY_PATH GZIP BZIP2 ZSTD_CLEVEL LESS MORE TZDIR FUNCNEST PERL5LIB RUBYLIB CLASSPATH""".split()
)
# prefixes and suffixes of families: the dynamic loader, git, less, tar, interpreters, options, proxies
# (anywhere in the name: a family's prefix; at its end: a suffix; and "proxy" or a package manager's
# prefix in any case)
_PARTS = ("LD_", "DYLD_", "GIT_", "BASH_FUNC_", "BASH", "LESS", "TAR_", "PYTHON", "NODE_", "NPM_", "PERL", "RUBY",
          "JAVA_", "_JAVA_", "GLIBC_", "MALLOC_", "XDG_", "SSH_", "CURL_", "GREP_", "COMP_", "READLINE_", "HIST")
_SUFFIXES = ("_OPTIONS", "_OPTS", "_OPT", "_CONFIG", "_COMMAND", "_PROGRAM", "_PAGER", "_EDITOR", "_ASKPASS")
_ANY_CASE_PREFIXES = ("npm_config_", "yarn_", "pip_")
# harmless ones that the patterns above would catch
_HARMLESS = frozenset(
    """PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE PYTHONIOENCODING PYTHONHASHSEED PYTHONUTF8 PYTHONWARNINGS
    PYTHONFAULTHANDLER PYTHONDEVMODE NODE_ENV GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_AUTHOR_DATE GIT_COMMITTER_NAME
    GIT_COMMITTER_EMAIL GIT_COMMITTER_DATE GIT_TERMINAL_PROMPT GIT_OPTIONAL_LOCKS LESSCHARSET""".split()
)
# pagers and editors set to these programs change nothing
_PAGER_VALUES = frozenset(("", "cat", "less", "more", "less -R", "less -FRX", "less -FRSX", "true"))
_PAGERS = frozenset(("PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "BAT_PAGER"))


def changes_programs(name: str, value: str | None = None) -> bool:
    """Assigning ``name`` (``value``: its literal value when known) may change what runs."""
    if name in _PAGERS and value is not None and value.strip() in _PAGER_VALUES:
        return False
    if name in _HARMLESS:
        return False
    if name in _NAMES or name.endswith(_SUFFIXES) or any(part in name for part in _PARTS):
        return True
    if not name.isascii():  # bash names are ASCII; Unicode case rules are the regex's, not lower()'s
        import re

        return re.search(r"(?i)proxy|\Anpm_config_|\Ayarn_|\Apip_", name) is not None
    folded = name.lower()
    return "proxy" in folded or folded.startswith(_ANY_CASE_PREFIXES)
