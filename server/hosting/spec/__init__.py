"""What a hosted version is, beneath the store that keeps it: its files as submitted and checked
(:mod:`.submissions`, standard library only: the light install packs with it) and the limits its
sandbox runs under (:mod:`.limits`). The rest of ``server/hosting`` (the sandbox, the runner,
the validator) sits above the store and uses it; this package uses nothing of the server's.
"""
