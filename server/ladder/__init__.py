"""The Elo ladder: ratings per game type (pure), and what keeps them."""
