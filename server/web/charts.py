"""A bot's rating chart as inline SVG markup: pure (points in, markup out), no image file.

The page embeds the markup as it is (the Content-Security-Policy allows inline SVG; it has no
``style`` attribute and no script, only presentation attributes). Every text in it goes through
:func:`markupsafe.escape`, so a hostile label cannot open a tag, and the result is a
:class:`markupsafe.Markup` so the template does not escape it a second time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from markupsafe import Markup, escape

WIDTH: Final = 480
HEIGHT: Final = 160
LEFT: Final = 48
"""Room for the rating labels on the left."""
BOTTOM: Final = 20
"""Room for the game numbers below."""
PAD: Final = 8
MAX_POINTS: Final = 400
"""The most points drawn; a longer history is thinned evenly, keeping the first and last."""


def thinned(values: Sequence[float], most: int = MAX_POINTS) -> list[tuple[int, float]]:
    """Return (game number from 1, value) of at most ``most`` of ``values``, evenly spread,
    the first and the last always among them."""
    count = len(values)
    if count <= most:
        return [(n + 1, v) for n, v in enumerate(values)]
    step = (count - 1) / (most - 1)
    picked = sorted({round(i * step) for i in range(most)})
    return [(n + 1, values[n]) for n in picked]


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def rating_chart(ratings: Sequence[float], *, label: str, start: float) -> Markup:
    """Return an SVG line chart of ``ratings`` (a bot's rating after each of its games).

    Args:
        label: what the chart shows, e.g. "bob in passing" (escaped; also its accessible title).
        start: the rating before the first game, the line's first point (game 0).

    The axes are labelled with the lowest and highest rating and the first and last game
    number; with no games the chart says so instead of drawing a line.
    """
    title = escape(label)
    head = (
        f'<svg class="rating-chart" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="{title}"><title>{title}</title>'
    )
    if not ratings:
        return Markup(
            f'{head}<text class="empty" x="{WIDTH // 2}" y="{HEIGHT // 2}" '
            f'text-anchor="middle">no rated games yet</text></svg>'
        )
    points = [(0, start), *thinned(ratings)]
    games = len(ratings)
    values = [v for _, v in points]
    low, high = min(values), max(values)
    span = high - low or 1.0
    plot_w = WIDTH - LEFT - PAD
    plot_h = HEIGHT - BOTTOM - PAD

    def x(n: int) -> float:
        return LEFT + plot_w * n / games

    def y(v: float) -> float:
        return PAD + plot_h * (high - v) / span

    line = " ".join(f"{x(n):.1f},{y(v):.1f}" for n, v in points)
    bottom = HEIGHT - BOTTOM
    parts = [
        head,
        f'<line class="axis" x1="{LEFT}" y1="{PAD}" x2="{LEFT}" y2="{bottom}" '
        'stroke="currentColor"/>',
        f'<line class="axis" x1="{LEFT}" y1="{bottom}" x2="{WIDTH - PAD}" y2="{bottom}" '
        'stroke="currentColor"/>',
        f'<text class="y-label" x="{LEFT - 4}" y="{PAD + 4}" text-anchor="end" '
        f'font-size="11">{_number(high)}</text>',
        f'<text class="y-label" x="{LEFT - 4}" y="{bottom}" text-anchor="end" '
        f'font-size="11">{_number(low)}</text>',
        f'<text class="x-label" x="{LEFT}" y="{HEIGHT - 4}" text-anchor="start" '
        'font-size="11">0</text>',
        f'<text class="x-label" x="{WIDTH - PAD}" y="{HEIGHT - 4}" text-anchor="end" '
        f'font-size="11">{games} games</text>',
        f'<polyline class="rating" points="{line}" fill="none" stroke="currentColor" '
        'stroke-width="1.5"/>',
    ]
    if len(points) == 2:  # one game: a dot, so a lone point is visible
        n, v = points[-1]
        parts.append(f'<circle class="rating" cx="{x(n):.1f}" cy="{y(v):.1f}" r="3"/>')
    parts.append("</svg>")
    return Markup("".join(parts))
