"""Server-drawn SVG of a match's table (issue 32): tiles with pips, each game's layout as it
lies, the seats with names and hands. The entry point is :func:`draw_table`; the modules each
draw one thing (tiles.py a tile, line.py the snaking line, one module per game, seats.py the
seats)."""

from .table import draw_table

__all__ = ["draw_table"]
