"""The job's state: where it lives, appending to the ledger and reading the snapshot, approvals,
who holds which step, health, and the brief the model reads. Built on ``store.plan`` and
``store.ledger``, and ``store.backend`` for a job kept in a database.
"""
