"""baton's kernel sandbox for Bash: what one command may write and reach, as bubblewrap enforces it.

``bwrap_args`` turns a step's :class:`~store.sandbox.bwrap_args.Policy` into bubblewrap's arguments
(``mounts`` and ``writable`` make the write globs into binds, ``code_paths`` names what stays
read-only), ``rewrite`` is the command Claude Code runs instead of the model's, ``runs`` and
``afterrun`` keep and check each run, ``netproxy`` is the allowlist's HTTP proxy, and ``probe``,
``claude_settings`` (Claude Code's own sandbox excludes baton's) and ``mode`` say whether the sandbox
can run here, which the brief reports without loading the gate. What a call may do is the gate's:
``store.gate.enforce`` decides when a command runs in the sandbox, ``store.gate.permissions`` applies
the person's own rules to the original command, ``store.gate.baton_calls`` lets ``baton`` run beside
it. Built on ``store.base`` and ``store.plan``.
"""
