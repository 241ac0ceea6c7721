"""The PreToolUse gate: may this tool call run while the job's NEXT step is what it is?

Built on ``store.state`` (the plan, NEXT, approvals) and ``store.shell`` (what a Bash command
writes). Every refusal carries a short stable code (``[baton:CODE]``), defined in the module that
raises it and listed in docs/gate.md.
"""
