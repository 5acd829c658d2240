"""The Domino Arena referee service and command line."""
