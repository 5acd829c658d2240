"""The Elo ladder's numbers: ratings per game type (pure), matchmaking, and the rating transaction.

What runs the continuous ladder's games is play's (:mod:`domino_arena.server.play.ladder_runner`).
"""
