"""The plan's rules as the gate checks them: one module per rule kind, named after it.

``deny_bash``, ``effects``, ``protect_branches``, ``deny_content`` and ``allow_hosts`` each read a
Bash command's scan (``store.shell``) against the plan's rules of their kind, and refuse with the
kind's code.
"""
