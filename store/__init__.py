"""baton's core: the plan, the hash-chained ledger, the derived snapshot and the brief.

Standard library only (Python 3.9+). Nothing here knows Claude Code's JSON; the hook adapters
in ``hooks/`` and the CLI in ``store/cli.py`` are thin layers over these modules.
"""

__version__ = "0.1.0"
