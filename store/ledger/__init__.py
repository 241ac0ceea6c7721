"""The ledger ``steps.jsonl``: its line format, the SHA-256 sealing of each line, the verification of
the hash chain, and the merge of two branches' ledgers. Imports only ``store.base``.
"""
