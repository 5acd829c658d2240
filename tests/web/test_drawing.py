"""The drawn table (server/web/drawing), read back as XML: pips, names, each game's layout as it
lies, the widow face down live and face up in a replay, escaped names, legal-play marks, and no
hidden tile's value anywhere in a live table's SVG over whole real games of every configuration.
"""

from __future__ import annotations

import itertools
import math
import random
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any, Final

import pytest

from domino_arena.sdk.rules import (
    SPECTATOR,
    Game,
    MoonState,
    Phase,
    StraightState,
    Tile,
    make_game,
)
from domino_arena.server.web.drawing import draw_table
from domino_arena.server.web.drawing.table import VIEW_W
from domino_arena.server.web.drawing.tiles import Spot, tile
from domino_arena.server.web.table import draw_public
from domino_arena.server.web.table import draw_table as table_data
from tests.fakes.leaks import CONFIG_IDS, CONFIGS, hidden_from, seeds_for

SVG: Final = "{http://www.w3.org/2000/svg}"
TILE_TEXT: Final = re.compile(r"\b([0-6])-([0-6])\b")
Matrix = tuple[float, float, float, float, float, float]
"""An SVG transform matrix (a, b, c, d, e, f)."""
IDENTITY: Final[Matrix] = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def parse(piece: str) -> ET.Element:
    """One drawn piece (a tile), parsed in the SVG namespace."""
    return next(iter(ET.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg">{piece}</svg>')))


def svg_of(markup: str) -> ET.Element:
    """The ``<svg>`` of a drawn table, parsed (it must be well-formed XML)."""
    start, end = markup.index("<svg"), markup.index("</svg>") + len("</svg>")
    return ET.fromstring(markup[start:end])


def times(m: Matrix, n: Matrix) -> Matrix:
    a, b, c, d, e, f = m
    p, q, r, s, t, u = n
    return (a * p + c * q, b * p + d * q, a * r + c * s, b * r + d * s, a * t + c * u + e,
            b * t + d * u + f)  # fmt: skip


def parse_transform(text: str) -> Matrix:
    matrix = IDENTITY
    for name, args in re.findall(r"(\w+)\(([^)]*)\)", text):
        values = [float(v) for v in args.replace(",", " ").split()]
        if name == "translate":
            step: Matrix = (1, 0, 0, 1, values[0], values[1] if len(values) > 1 else 0.0)
        elif name == "scale":
            k = values[0]
            step = (k, 0, 0, values[1] if len(values) > 1 else k, 0, 0)
        else:
            assert name == "rotate", name
            r = math.radians(values[0])
            step = (math.cos(r), math.sin(r), -math.sin(r), math.cos(r), 0, 0)
        matrix = times(matrix, step)
    return matrix


def placed(root: ET.Element) -> Iterator[tuple[ET.Element, Matrix]]:
    """Every element with the transform that places it in the picture."""

    def walk(node: ET.Element, matrix: Matrix) -> Iterator[tuple[ET.Element, Matrix]]:
        here = times(matrix, parse_transform(node.get("transform", "")))
        yield node, here
        for child in node:
            yield from walk(child, here)

    return walk(root, IDENTITY)


def centres(root: ET.Element) -> dict[str, tuple[float, float]]:
    """Each face-up tile's centre in the picture, by its ``data-tile``."""
    return {
        node.attrib["data-tile"]: (m[4], m[5])
        for node, m in placed(root)
        if "data-tile" in node.attrib
    }


def classes(node: ET.Element) -> set[str]:
    return set(node.get("class", "").split())


def play(game: Game, seed: int, until: Any) -> Any:
    """A real game from ``seed`` with random legal actions, up to the first state ``until``
    accepts."""
    rng = random.Random(seed)
    state = game.new_game(seed)
    while not until(state):
        assert not state.is_terminal(), "the game ended first"
        state = state.apply(rng.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("number", range(7))
def test_each_half_has_its_number_of_pips(number: int) -> None:
    drawn = parse(tile(number, 0, Spot(0, 0)).svg)
    pips = [c for c in drawn.iter(f"{SVG}circle") if "pip" in classes(c)]
    assert len(pips) == number
    assert sum(1 for c in pips if float(c.attrib["cx"]) < 0) == number, "all on the first half"


def test_a_tile_is_an_image_named_by_its_numbers() -> None:
    drawn = parse(tile(4, 6, Spot(0, 0, 90)).svg)
    assert (drawn.get("role"), drawn.get("aria-label"), drawn.get("data-tile")) == (
        "img",
        "4-6",
        "6-4",
    )


def test_straight_draws_its_four_arms_around_the_spinner() -> None:
    game = make_game("straight")
    state = play(game, 5, lambda s: isinstance(s, StraightState) and all(s.layout.arms))
    table = table_data(state)
    root = svg_of(draw_table(table, ["alice", "bob"]))
    at = centres(root)
    sx, sy = at[table["layout"]["spinner"]]
    arms = table["layout"]["arms"]
    for laid in arms["W"]:
        assert at[laid["tile"]][0] < sx
    for laid in arms["E"]:
        assert at[laid["tile"]][0] > sx
    for laid in arms["N"]:
        assert at[laid["tile"]][1] < sy
    for laid in arms["S"]:
        assert at[laid["tile"]][1] > sy
    assert f"Open ends add up to {table['layout']['count']}" in draw_table(table, ["a", "b"])


def passing_table(line: list[tuple[int, int]]) -> dict[str, Any]:
    return {
        "game": "passing",
        "deal": 1,
        "phase": "playing",
        "to_move": 0,
        "scores": [0, 0],
        "sides": [[0], [1]],
        "hand_sizes": [3, 3],
        "last": None,
        "boneyard_size": 2,
        "line": [{"tile": str(Tile(a, b)), "shown": f"{a}-{b}"} for a, b in line],
        "ends": [line[0][0], line[-1][1]],
    }


def test_a_long_passing_line_snakes_within_the_width() -> None:
    numbers = [0, 1, 2, 3, 4, 5, 6, 0, 2, 4, 6, 1, 3, 5, 0, 3, 6, 2, 5, 1, 4, 4, 0]
    line = list(itertools.pairwise(numbers))
    root = svg_of(draw_table(passing_table(line), ["alice", "bob"]))
    layout = next(g for g in root.iter(f"{SVG}g") if "layout" in classes(g))
    at = [m for node, m in placed(layout) if "data-tile" in node.attrib]
    assert len(at) == len(line)
    xs, ys = [m[4] for m in at], [m[5] for m in at]
    assert min(xs) > 0 and max(xs) < VIEW_W
    assert len({round(y) for y in ys}) >= 3, "the line turned at the edge into rows"
    scale = parse_transform(next(iter(layout)).get("transform", ""))[0]
    assert scale == 1.0, "it fits by turning, not by shrinking"
    assert root.get("viewBox", "").startswith(f"0 0 {VIEW_W:g} ")


def test_doubles_names_its_locked_numbers_and_marks_locked_ends() -> None:
    game = make_game("doubles")
    state = play(game, 3, lambda s: len(s.placed) >= 4)
    table = draw_public(state.observe(SPECTATOR))
    markup = draw_table(table, ["alice", "bob"])
    locked = [n for n in range(7) if n not in table["unlocked"]]
    assert (
        "Locked (an end showing one takes only its double): " + ", ".join(map(str, locked))
        in markup
    )
    marks = [g for g in svg_of(markup).iter(f"{SVG}g") if "locked-end" in classes(g)]
    shown_locked = [e for e in table["ends"] if e in locked]
    assert len(marks) == len(shown_locked)
    for mark, number in zip(marks, sorted(shown_locked), strict=False):
        assert "locked" in mark.attrib["aria-label"]
        assert f"showing {number}" in " ".join(m.attrib["aria-label"] for m in marks)
    spinners = sum(1 for t in table["placed"] if Tile(*map(int, t.split("-"))).is_double)
    assert len(set(centres(svg_of(markup)))) == len(table["placed"])
    assert f"Every double is a spinner ({spinners} laid)" in markup


def test_moon_s_widow_is_face_down_live_and_face_up_in_a_replay() -> None:
    state = play(
        make_game("moon"), 9, lambda s: isinstance(s, MoonState) and s.phase is Phase.BIDDING
    )
    assert state.widow is not None
    widow = str(state.widow)
    live = svg_of(draw_table(draw_public(state.observe(SPECTATOR)), ["a", "b", "c"]))
    backs = [g for g in live.iter(f"{SVG}g") if g.get("data-hidden") == "widow"]
    assert len(backs) == 1 and backs[0].get("aria-label") == "a hidden tile"
    assert widow not in centres(live)
    replay = svg_of(draw_table(table_data(state), ["a", "b", "c"]))
    assert widow in centres(replay)
    assert not [g for g in replay.iter(f"{SVG}g") if g.get("data-hidden") == "widow"]


def test_names_are_text_and_people_are_marked() -> None:
    state = play(make_game("moon"), 2, lambda s: True)
    hostile = "<script>alert(1)</script>"
    markup = draw_table(draw_public(state.observe(SPECTATOR)), [hostile, "person:ann", "house:x"])
    assert "<script>" not in markup
    root = svg_of(markup)
    names = [t.text for t in root.iter(f"{SVG}text") if "seat-name" in classes(t)]
    assert names[0] is not None and names[0].startswith("<script>")
    labels = [g.get("aria-label", "") for g in root.iter(f"{SVG}g") if "seat" in classes(g)]
    assert labels[1].startswith("person ann") and labels[2].startswith("house bot x")
    assert any(t.text and "person" in t.text for t in root.iter(f"{SVG}text"))


def marked(state: Any) -> list[str]:
    """The legal actions of ``state`` that the drawing marks: plays and discards."""
    return [str(a) for a in state.legal_actions() if str(a).split()[0] in ("play", "discard")]


@pytest.mark.parametrize("name", ["passing", "straight", "doubles", "moon"])
def test_legal_marks_carry_their_actions_and_only_when_asked(name: str) -> None:
    game = make_game(name)
    state = play(game, 4, lambda s: s.current_seat >= 0 and len(marked(s)) > 1)
    seat = state.current_seat
    table = draw_public(state.observe(SPECTATOR)) | {
        "viewer": seat,
        "own_hand": [str(t) for t in state.hands[seat]],
    }
    legal = [str(a) for a in state.legal_actions()]
    root = svg_of(draw_table(table, ["a", "b", "c", "d"], legal=legal))
    marks = [e for e in root.iter() if "legal" in classes(e)]
    assert marks
    for mark in marks:
        assert mark.get("data-action") in legal
        assert (mark.get("tabindex"), mark.get("role")) == ("0", "button")
        assert mark.get("aria-label")
    wanted = set(marked(state))
    assert {m.get("data-action") for m in marks} == wanted, "a mark for each play, no other"
    plain = draw_table(table, ["a", "b", "c", "d"])
    assert "data-action" not in plain and 'class="legal' not in plain
    others = sum(n for s, n in enumerate(table["hand_sizes"]) if s != seat)
    assert plain.count('data-hidden="hand"') == others, "only the viewer's hand is face up"


@pytest.mark.parametrize("game", CONFIGS, ids=CONFIG_IDS)
def test_a_live_table_draws_no_hidden_tile(game: Game) -> None:
    seed = seeds_for(game)[0]
    rng = random.Random(seed)
    state = game.new_game(seed)
    names = [f"bot{i}" for i in range(game.num_players)]
    seen = 0
    while True:
        public = draw_public(state.observe(SPECTATOR))
        markup = draw_table(public, names)
        hidden = hidden_from(state, SPECTATOR)
        shown = [Tile(int(a), int(b)) for a, b in TILE_TEXT.findall(markup)]
        found = [f"{t} from {hidden[t]}" for t in shown if t in hidden]
        assert not found, f"step {len(state.history)}: {found}"
        assert markup.count('data-hidden="hand"') == sum(public["hand_sizes"])
        seen += len(shown)
        if state.is_terminal():
            break
        state = state.apply(rng.choice(state.legal_actions()))
    assert seen > 0, "no tile was ever drawn: the walk checked nothing"
