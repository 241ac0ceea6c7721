"""baton's core: the plan, the hash-chained ledger, the job's state and brief, the gate and its sandbox.

Standard library only (Python 3.9+). Nothing here but the gate's answers knows Claude Code's
JSON; the hook adapters in ``hooks/`` and the CLI in ``store/cli/`` are thin layers over these parts.
"""

__version__ = "0.1.0"
