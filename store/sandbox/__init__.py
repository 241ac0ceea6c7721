"""baton's kernel sandbox for Bash: what one command may write and reach, as bubblewrap enforces it.

``bwrap_args`` turns a step's :class:`~store.sandbox.bwrap_args.Policy` into bubblewrap's arguments
(``mounts`` and ``writable`` make the write globs into binds), ``rewrite`` is the command Claude Code
runs instead of the model's, ``runs`` and ``afterrun`` keep and check each run, ``netproxy`` is the
allowlist's HTTP proxy, and ``probe``, ``claude_settings`` and ``mode`` say whether the sandbox can run
here. Built on ``store.base`` and ``store.plan``; the gate (``store.gate.enforce``) decides when it is used.
"""
