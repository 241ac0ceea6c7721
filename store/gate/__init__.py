"""The PreToolUse gate: may this tool call run while the job's NEXT step is what it is?

Built on ``store.plan`` (the plan and its rules), ``store.state`` (NEXT, approvals), ``store.shell``
(what a Bash command writes) and ``store.sandbox`` (where Bash runs); ``rules/`` checks the plan's
rules, one module per kind. Every refusal carries a short stable code (``[baton:CODE]``), defined
in the module that raises it and listed in docs/gate.md.
"""
