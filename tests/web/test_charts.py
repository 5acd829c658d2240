"""The rating chart (server/web/charts.py): round ticks on titled axes, each point's value on
hover, escaped text, one point, none."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from domino_arena.server.web.charts import MAX_POINTS, nice_step, rating_chart, thinned, ticks

SVG = "{http://www.w3.org/2000/svg}"


def parsed(markup: str) -> ET.Element:
    return ET.fromstring(markup)


def texts(root: ET.Element, cls: str) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}text") if t.get("class") == cls]


def test_the_axes_have_round_ticks_titles_and_each_point_its_value() -> None:
    root = parsed(rating_chart([1512.0, 1490.5, 1530.25], label="bob in moon", start=1500.0))
    assert texts(root, "y-tick") == ["1490", "1500", "1510", "1520", "1530", "1540"]
    assert texts(root, "x-tick") == ["0", "1", "2", "3"]
    assert [t for c in ("axis-title y-title", "axis-title x-title") for t in texts(root, c)] == [
        "Live Elo",
        "rated games (3 in all)",
    ]
    [line] = root.iter(f"{SVG}polyline")
    points = [tuple(map(float, p.split(","))) for p in (line.get("points") or "").split()]
    assert len(points) == 4  # the start, then each game
    xs = [x for x, _ in points]
    assert xs == sorted(xs)
    ratings = (1500.0, 1512.0, 1490.5, 1530.25)
    ys = {rating: y for rating, (_, y) in zip(ratings, points, strict=True)}
    assert ys[1530.25] < ys[1512.0] < ys[1500.0] < ys[1490.5]  # higher is up
    assert root.findtext(f"{SVG}title") == "bob in moon"
    hover = [c.findtext(f"{SVG}title") for c in root.iter(f"{SVG}circle")]
    assert hover == [
        "start: 1500",
        "after game 1: 1512",
        "after game 2: 1490.5",
        "after game 3: 1530.2",
    ]
    assert root.get("viewBox") == "0 0 420 240"


def test_ticks_are_round_and_cover_the_range() -> None:
    assert nice_step(47.0) == 10.0
    assert nice_step(3.0, whole=True) == 1.0
    assert nice_step(5_000.0, whole=True) == 1_000.0
    assert ticks(1490.5, 1530.25, 10.0) == [1490.0, 1500.0, 1510.0, 1520.0, 1530.0, 1540.0]
    assert ticks(0.0, 20.0, 5.0) == [0.0, 5.0, 10.0, 15.0, 20.0]


def test_every_text_is_escaped() -> None:
    hostile = '<script>alert(1)</script>" onload="x'
    markup = rating_chart([1510.0], label=hostile, start=1500.0)
    assert "<script>" not in markup
    assert 'onload="x' not in markup
    root = parsed(markup)  # still well-formed
    assert root.findtext(f"{SVG}title") == hostile
    assert root.get("aria-label") == hostile
    assert not re.search(r"\sstyle=", markup)


def test_one_game_is_a_line_between_two_dots() -> None:
    root = parsed(rating_chart([1488.0], label="one", start=1500.0))
    assert len(list(root.iter(f"{SVG}polyline"))) == 1
    assert [c.get("class") for c in root.iter(f"{SVG}circle")] == ["point only", "point only"]
    assert texts(root, "x-tick") == ["0", "1"]
    y_ticks = [float(t) for t in texts(root, "y-tick")]
    assert y_ticks[0] <= 1488.0 and y_ticks[-1] >= 1500.0


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
    assert texts(root, "x-tick") == ["0", "1000", "2000", "3000", "4000", "5000"]
    assert {c.get("class") for c in root.iter(f"{SVG}circle")} == {"point"}  # no dots: hover
