"""A bot's mean loss per decision over its analysed games, as inline SVG: "did v2 improve?".

Pure (values in, markup out), drawn like :mod:`.charts`' rating chart and with its frame
(:func:`.charts.frame`: grid, round ticks, axes and their titles), so the stylesheet colours
both with the palette and no ``style`` attribute or script is needed (docs/web.md, look and
accessibility). Every point carries its values in a ``<title>``; each version's games are
joined by its mean (a level line over them), and where a new version starts a labelled line
is drawn. Every text goes through :func:`markupsafe.escape` (a version's name is the
uploader's). The pages list the same values in a table under it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from domino_arena.server.web.charts import (
    BOTTOM,
    FONT,
    HEIGHT,
    LEFT,
    RIGHT,
    TOP,
    WIDTH,
    frame,
    nice_step,
    number,
    ticks,
)

VERSION_CLASSES = 4
"""Versions are coloured ``v0`` to ``v3`` in turn (the stylesheet's palette)."""


@dataclass(frozen=True, slots=True)
class LossPoint:
    """One analysed game of the bot: its mean loss in points per decision."""

    match_id: str
    version: str
    loss: float


def loss_chart(points: Sequence[LossPoint], *, label: str) -> Markup:
    """An SVG chart of ``points`` (oldest first): analysed games across, mean loss per decision
    up from 0, each version's mean a level line over its games."""
    title = escape(label)
    head = (
        f'<svg class="rating-chart loss-chart" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="{title}"><title>{title}</title>'
    )
    if not points:
        return Markup(
            f'{head}<text class="empty" x="{WIDTH // 2}" y="{HEIGHT // 2}" '
            f'text-anchor="middle" font-size="{FONT}">no analysed games yet</text></svg>'
        )
    count = len(points)
    high = max([p.loss for p in points] + [0.1])
    y_ticks = ticks(0.0, high, nice_step(high))
    y_high = y_ticks[-1]
    x_ticks = [t for t in ticks(1, count, nice_step(count, whole=True)) if 1 <= t <= count]
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM

    def x(n: float) -> float:
        return LEFT + plot_w * (n - 0.5) / count

    def y(v: float) -> float:
        return TOP + plot_h * (y_high - v) / y_high

    parts = [
        head,
        *frame(
            x_ticks,
            y_ticks,
            x,
            y,
            y_title="points lost a decision",
            x_title=f"analysed games, oldest first ({count})",
        ),
    ]
    runs: list[tuple[str, int, int]] = []  # (version, first game, last game), from 1
    for n, p in enumerate(points, start=1):
        if runs and runs[-1][0] == p.version:
            runs[-1] = (p.version, runs[-1][1], n)
        else:
            runs.append((p.version, n, n))
    versions = list(dict.fromkeys(p.version for p in points))
    for version, first, last in runs:
        kind = f"v{versions.index(version) % VERSION_CLASSES}"
        mean = sum(p.loss for p in points[first - 1 : last]) / (last - first + 1)
        name = escape(version)
        if first > 1:
            parts.append(
                f'<line class="version-start" x1="{x(first - 0.5):.1f}" y1="{TOP}" '
                f'x2="{x(first - 0.5):.1f}" y2="{HEIGHT - BOTTOM}" stroke="#888" '
                'stroke-dasharray="3 3"/>'
            )
        parts.append(
            f'<text class="version-name" x="{x(first - 0.5) + 3:.1f}" y="{TOP + FONT}" '
            f'font-size="{FONT}">{name}</text>'
            f'<line class="version-mean {kind}" x1="{x(first - 0.4):.1f}" y1="{y(mean):.1f}" '
            f'x2="{x(last + 0.4):.1f}" y2="{y(mean):.1f}" stroke="currentColor" '
            f'stroke-width="2"><title>{name}: {number(mean)} points lost a decision over '
            f"{last - first + 1} game{'s' if last > first else ''}</title></line>"
        )
    for n, p in enumerate(points, start=1):
        kind = f"v{versions.index(p.version) % VERSION_CLASSES}"
        parts.append(
            f'<circle class="point only {kind}" cx="{x(n):.1f}" cy="{y(p.loss):.1f}" r="4" '
            f'fill="currentColor"><title>game {n} ({escape(p.match_id)}), {escape(p.version)}: '
            f"{p.loss:.2f} points lost a decision</title></circle>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))
