"""baton's hook adapters: Claude Code's JSON in, one call into ``store``, one decision out."""
