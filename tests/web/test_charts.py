"""The rating chart (server/web/charts.py): labelled axes, escaped text, one point, none."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from domino_arena.server.web.charts import MAX_POINTS, rating_chart, thinned

SVG = "{http://www.w3.org/2000/svg}"


def parsed(markup: str) -> ET.Element:
    return ET.fromstring(markup)


def texts(root: ET.Element, cls: str) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}text") if t.get("class") == cls]


def test_the_axes_are_labelled_with_the_range_and_the_games() -> None:
    root = parsed(rating_chart([1512.0, 1490.5, 1530.25], label="bob in moon", start=1500.0))
    assert texts(root, "y-label") == ["1530.2", "1490.5"]
    assert texts(root, "x-label") == ["0", "3 games"]
    [line] = root.iter(f"{SVG}polyline")
    points = [tuple(map(float, p.split(","))) for p in (line.get("points") or "").split()]
    assert len(points) == 4  # the start, then each game
    xs = [x for x, _ in points]
    assert xs == sorted(xs)
    ratings = (1500.0, 1512.0, 1490.5, 1530.25)
    ys = {rating: y for rating, (_, y) in zip(ratings, points, strict=True)}
    assert ys[1530.25] < ys[1512.0] < ys[1500.0] < ys[1490.5]  # higher is up
    assert root.findtext(f"{SVG}title") == "bob in moon"


def test_every_text_is_escaped() -> None:
    hostile = '<script>alert(1)</script>" onload="x'
    markup = rating_chart([1510.0], label=hostile, start=1500.0)
    assert "<script>" not in markup
    assert 'onload="x' not in markup
    root = parsed(markup)  # still well-formed
    assert root.findtext(f"{SVG}title") == hostile
    assert root.get("aria-label") == hostile
    assert not re.search(r"\sstyle=", markup)


def test_one_game_is_a_line_and_a_dot() -> None:
    root = parsed(rating_chart([1488.0], label="one", start=1500.0))
    assert len(list(root.iter(f"{SVG}circle"))) == 1
    assert texts(root, "x-label") == ["0", "1 games"]
    assert texts(root, "y-label") == ["1500", "1488"]


def test_no_games_says_so_and_draws_no_line() -> None:
    root = parsed(rating_chart([], label="none", start=1500.0))
    assert list(root.iter(f"{SVG}polyline")) == []
    assert texts(root, "empty") == ["no rated games yet"]


def test_a_long_history_is_thinned_keeping_the_first_and_last() -> None:
    values = [float(n) for n in range(5_000)]
    kept = thinned(values)
    assert len(kept) == MAX_POINTS
    assert kept[0] == (1, 0.0) and kept[-1] == (5_000, 4_999.0)
    assert [n for n, _ in kept] == sorted({n for n, _ in kept})
    assert thinned(values[:3]) == [(1, 0.0), (2, 1.0), (3, 2.0)]
    root = parsed(rating_chart(values, label="long", start=1500.0))
    [line] = root.iter(f"{SVG}polyline")
    assert len((line.get("points") or "").split()) == MAX_POINTS + 1
    assert texts(root, "x-label") == ["0", "5000 games"]
