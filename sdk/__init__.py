"""Domino Arena SDK: the rules library, the Bot interface and local play."""
