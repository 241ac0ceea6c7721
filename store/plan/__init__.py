"""The job's plan: ``plan.json`` parsed and validated into immutable steps, the job's rules, the hosts
they allow, the sandbox settings, and what a person's approval of a step covers. Imports only
``store.base`` and ``store.ledger`` (the hash an approval binds).
"""
