"""Tournament formats as pure schedulers, and the planner that sizes them (docs/tournaments.md).

A format here only decides who sits at which table: no I/O, no clock, no store, the same output
for the same seed, so a tournament resumes by computing its schedule again (docs/tournaments.md).
The round robin's scheduler (``scheduler.py``) expands the tables into games (rotations on
duplicate deals, rounds); a tournament's life, above play, is ``lifecycle/``'s.
"""
