"""Where analyses run: a bounded pool of worker processes (pool.py) and the runner of the
database's queue of matches to analyse (jobs.py), above the store (docs/analysis.md: running
analyses). The analysis package itself stays pure, beneath the store, which keeps its results.
"""
