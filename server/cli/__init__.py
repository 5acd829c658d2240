"""The ``domino-arena`` command line, one module per family of commands."""
