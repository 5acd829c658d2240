"""House bots: random, greedy (and, later, search) players for every game."""
