"""The job's state: where it lives, the plan, the hash-chained ledger, the snapshot, approvals,
health, and the brief the model reads. Imports only ``store.base``.
"""
