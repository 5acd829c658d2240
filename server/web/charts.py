"""A bot's rating chart as inline SVG markup: pure (points in, markup out), no image file.

The page embeds the markup as it is (the Content-Security-Policy allows inline SVG; it has no
``style`` attribute and no script, only presentation attributes, which the stylesheet
overrides with the palette: docs/web.md, look and accessibility). Every text in it goes
through :func:`markupsafe.escape`, so a hostile label cannot open a tag, and the result is a
:class:`markupsafe.Markup` so the template does not escape it a second time.

The chart has axes with round tick values and a grid, the axes' titles, and every drawn point
carries its value in a ``<title>`` (shown on hover with no script); it is sized by its
``viewBox`` and scales to the page's width. The pages list the same values under it for the
keyboard and screen readers (the chart itself is one image to them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final

from markupsafe import Markup, escape

WIDTH: Final = 420
HEIGHT: Final = 240
LEFT: Final = 50
"""Room for the rating ticks on the left."""
RIGHT: Final = 14
TOP: Final = 26
"""Room for the vertical axis's title above it."""
BOTTOM: Final = 40
"""Room for the game ticks and the horizontal axis's title below."""
FONT: Final = 13
MAX_POINTS: Final = 400
"""The most points drawn; a longer history is thinned evenly, keeping the first and last."""
DOTS_UP_TO: Final = 40
"""Up to this many points each is drawn as a dot; more, and only the one under the pointer."""
TICKS: Final = 5
"""About how many ticks an axis has."""


def thinned(values: Sequence[float], most: int = MAX_POINTS) -> list[tuple[int, float]]:
    """Return (game number from 1, value) of at most ``most`` of ``values``, evenly spread,
    the first and the last always among them."""
    count = len(values)
    if count <= most:
        return [(n + 1, v) for n, v in enumerate(values)]
    step = (count - 1) / (most - 1)
    picked = sorted({round(i * step) for i in range(most)})
    return [(n + 1, values[n]) for n in picked]


def nice_step(span: float, count: int = TICKS, *, whole: bool = False) -> float:
    """A round tick step (1, 2 or 5 times a power of ten) giving about ``count`` ticks
    over ``span``; at least 1 when ``whole`` (game numbers)."""
    raw = span / max(count, 1) if span > 0 else 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 5.0, 10.0) if m * power >= raw)
    if whole:
        step = max(1.0, float(math.ceil(step)))
    return step


def ticks(low: float, high: float, step: float) -> list[float]:
    """The multiples of ``step`` from the last at or below ``low`` to the first at or above
    ``high``."""
    first = math.floor(low / step + 1e-9)
    last = math.ceil(high / step - 1e-9)
    return [n * step for n in range(first, last + 1)]


def number(value: float) -> str:
    """A tick's or a point's value: one decimal at most, no trailing zero."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


def frame(
    x_ticks: Sequence[float],
    y_ticks: Sequence[float],
    x: Callable[[float], float],
    y: Callable[[float], float],
    *,
    y_title: str,
    x_title: str,
) -> list[str]:
    """A chart's grid, ticks, axes and axes' titles (escaped), at the ticks' positions by
    ``x`` and ``y``: the frame every chart of the pages has."""
    bottom = HEIGHT - BOTTOM
    parts = []
    for t in y_ticks:
        parts.append(
            f'<line class="grid" x1="{LEFT}" y1="{y(t):.1f}" x2="{WIDTH - RIGHT}" '
            f'y2="{y(t):.1f}" stroke="#ddd"/>'
            f'<text class="y-tick" x="{LEFT - 6}" y="{y(t) + FONT * 0.35:.1f}" '
            f'text-anchor="end" font-size="{FONT}">{number(t)}</text>'
        )
    for t in x_ticks:
        parts.append(
            f'<line class="tick" x1="{x(t):.1f}" y1="{bottom}" x2="{x(t):.1f}" '
            f'y2="{bottom + 5}" stroke="#888"/>'
            f'<text class="x-tick" x="{x(t):.1f}" y="{bottom + 6 + FONT}" '
            f'text-anchor="middle" font-size="{FONT}">{number(t)}</text>'
        )
    parts += [
        f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" stroke="#888"/>',
        f'<line class="axis" x1="{LEFT}" y1="{bottom}" x2="{WIDTH - RIGHT}" y2="{bottom}" '
        'stroke="#888"/>',
        f'<text class="axis-title y-title" x="{LEFT - 6}" y="{FONT + 2}" text-anchor="start" '
        f'font-size="{FONT}">{escape(y_title)}</text>',
        f'<text class="axis-title x-title" x="{WIDTH - RIGHT}" y="{HEIGHT - 4}" '
        f'text-anchor="end" font-size="{FONT}">{escape(x_title)}</text>',
    ]
    return parts


def rating_chart(ratings: Sequence[float], *, label: str, start: float) -> Markup:
    """Return an SVG line chart of ``ratings`` (a bot's rating after each of its games).

    Args:
        label: what the chart shows, e.g. "bob in passing" (escaped; also its accessible title).
        start: the rating before the first game, the line's first point (game 0).

    The vertical axis ("Live Elo") runs between round ratings around the lowest and highest,
    the horizontal one ("rated games") from 0 to the number of games; with no games the
    chart says so instead of drawing a line.
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
            f'text-anchor="middle" font-size="{FONT}">no rated games yet</text></svg>'
        )
    points = [(0, start), *thinned(ratings)]
    games = len(ratings)
    values = [v for _, v in points]
    low, high = min(values), max(values)
    if high - low < 1.0:  # a flat line: a band around it
        low, high = low - 5.0, high + 5.0
    y_ticks = ticks(low, high, nice_step(high - low))
    y_low, y_high = y_ticks[0], y_ticks[-1]
    x_ticks = [t for t in ticks(0, games, nice_step(games, whole=True)) if t <= games]
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM

    def x(n: float) -> float:
        return LEFT + plot_w * n / games

    def y(v: float) -> float:
        return TOP + plot_h * (y_high - v) / (y_high - y_low)

    parts = [
        head,
        *frame(x_ticks, y_ticks, x, y, y_title="Live Elo", x_title=f"rated games ({games} in all)"),
    ]
    line = " ".join(f"{x(n):.1f},{y(v):.1f}" for n, v in points)
    parts.append(
        f'<polyline class="rating" points="{line}" fill="none" stroke="currentColor" '
        'stroke-width="2" stroke-linejoin="round"/>'
    )
    dots = "point only" if len(points) <= DOTS_UP_TO else "point"
    for n, v in points:
        what = "start" if n == 0 else f"after game {n}"
        parts.append(
            f'<circle class="{dots}" cx="{x(n):.1f}" cy="{y(v):.1f}" r="4" '
            f'fill="currentColor"><title>{what}: {number(v)}</title></circle>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
