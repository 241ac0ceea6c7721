"""Where a job's records are kept when not in ``.baton/steps.jsonl``: a PostgreSQL database
shared by several machines, chosen by the environment, and what each clone keeps locally of it.

Below ``store.state``: it stores lines, hashes and snapshots it does not interpret; the state
part seals the records and folds the snapshot, and hands them over.
"""
