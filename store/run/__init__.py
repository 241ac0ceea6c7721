"""``baton run``: the supervisor that drives Claude Code headless, session after session, until the job
is done, waits for a person, reaches a limit, or stops making progress."""
