"""Tournament formats and their planning: pure schedulers beside the round robin (DESIGN.md
section 3; docs/tournaments.md)."""
