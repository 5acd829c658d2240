"""The canonical text of tiles and actions (docs/decisions.md: decision 5;
docs/rules.md 0.1, 0.4, X1, D12).

Bots send actions as text and match records store them as text, so ``parse`` and ``str`` must
round-trip exactly, and anything else must fail with :class:`InvalidActionError` (a
``RulesError``), never with another exception that a referee would not expect.
"""

from __future__ import annotations

import copy
import itertools
import pickle
import random

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from domino_arena.sdk.rules import (
    DEAL,
    DOUBLE_SIX,
    DRAW,
    NO_TRUMP,
    PASS,
    TRUMP_DOUBLES,
    Action,
    Bid,
    Discard,
    InvalidActionError,
    Play,
    RulesError,
    Tile,
    Trump,
    parse_action,
    parse_tiles,
    pip_total,
)
from domino_arena.sdk.rules.actions import LINE_ENDS, sort_actions
from domino_arena.sdk.rules.tiles import format_tiles

DIGIT_ENDS = tuple("0123456")
"""Doubles names an end by the number it shows (docs/rules.md D12)."""

tiles = st.sampled_from(DOUBLE_SIX)


# -- tiles ------------------------------------------------------------------------------------


def test_the_set_has_28_tiles_in_canonical_order_0_1() -> None:
    assert len(DOUBLE_SIX) == len(set(DOUBLE_SIX)) == 28
    assert [(x.high, x.low) for x in DOUBLE_SIX] == [
        (high, low) for high in range(7) for low in range(high + 1)
    ]
    assert [x.index for x in DOUBLE_SIX] == list(range(28))
    assert sum(x.is_double for x in DOUBLE_SIX) == 7


@pytest.mark.parametrize("tile", DOUBLE_SIX, ids=str)
def test_every_tile_round_trips_through_its_text(tile: Tile) -> None:
    text = str(tile)
    assert text == f"{tile.high}-{tile.low}"
    assert Tile.parse(text) is tile
    assert Tile.parse(f"{tile.low}-{tile.high}") is tile
    assert Tile.parse(f"[{text}]") is tile
    assert Tile.parse(f"  {text} ") is tile
    assert repr(tile) == f"Tile({tile.high}, {tile.low})"


def test_tiles_are_interned() -> None:
    for a, b in itertools.product(range(7), repeat=2):
        assert Tile(a, b) is Tile(b, a)
        assert Tile(a, b) is DOUBLE_SIX[Tile(a, b).index]
    tile = Tile(6, 4)
    assert copy.copy(tile) is tile
    assert copy.deepcopy(tile) is tile
    assert pickle.loads(pickle.dumps(tile)) is tile
    assert {Tile(4, 6): 1}[Tile(6, 4)] == 1


def test_tiles_are_immutable() -> None:
    tile = Tile(3, 2)
    with pytest.raises(AttributeError):
        tile.high = 5
    assert tile.high == 3


@given(tiles)
def test_tile_properties_0_1(tile: Tile) -> None:
    assert tile.high >= tile.low
    assert tile.pips == tile.high + tile.low
    assert tile.is_double == (tile.high == tile.low)
    for n in range(7):
        assert tile.has(n) == (n in (tile.high, tile.low))
    assert tile.other(tile.high) == tile.low
    assert tile.other(tile.low) == tile.high


@given(tiles, tiles)
def test_tile_order_is_the_canonical_index(a: Tile, b: Tile) -> None:
    assert (a < b) == (a.index < b.index) == ((a.high, a.low) < (b.high, b.low))
    assert (a <= b) == (a.index <= b.index)
    assert (a > b) == (a.index > b.index)
    assert (a >= b) == (a.index >= b.index)
    assert (a == b) == (a is b)


def test_sorting_restores_the_canonical_order() -> None:
    shuffled = list(DOUBLE_SIX)
    random.Random(3).shuffle(shuffled)
    assert tuple(sorted(shuffled)) == DOUBLE_SIX


def test_pip_totals_count_both_halves_c4() -> None:
    assert pip_total([Tile(6, 6)]) == 12
    assert pip_total([Tile(0, 0)]) == 0
    assert pip_total([]) == 0
    assert pip_total(DOUBLE_SIX) == 168


def test_tile_lists_parse_and_format() -> None:
    assert parse_tiles("6-6 5-4,3-0") == (Tile(6, 6), Tile(5, 4), Tile(3, 0))
    assert parse_tiles("") == ()
    assert format_tiles([Tile(6, 6), Tile(4, 5)]) == "6-6 5-4"
    assert parse_tiles(format_tiles(DOUBLE_SIX)) == DOUBLE_SIX


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "6",
        "6-",
        "-6",
        "6-4-1",
        "7-1",
        "6-7",
        "10-1",
        "a-b",
        "66",
        "6_4",
        "6 - 4",
        "6--4",
        "-1-2",
        "+1-2",
        "[[6-4]]",
        "6-4 E",
        "²-1",
        "٣-1",
    ],
)
def test_bad_tile_texts_are_rejected(text: str) -> None:
    with pytest.raises(InvalidActionError, match="tile"):
        Tile.parse(text)


@pytest.mark.parametrize(("a", "b"), [(7, 1), (1, 7), (-1, 0), (0, 9)])
def test_tiles_outside_the_double_six_set_do_not_exist(a: int, b: int) -> None:
    with pytest.raises(InvalidActionError, match=f"no tile {a}-{b}"):
        Tile(a, b)


@given(st.text(max_size=8))
@example("²-1")
@example("٣-1")
def test_tile_parse_accepts_canonical_text_or_raises_invalid_action(text: str) -> None:
    try:
        tile = Tile.parse(text)
    except InvalidActionError:
        return
    body = text.strip().removeprefix("[").removesuffix("]")
    assert body in (f"{tile.high}-{tile.low}", f"{tile.low}-{tile.high}")


# -- actions ----------------------------------------------------------------------------------


def _every_action() -> list[Action]:
    actions: list[Action] = [DRAW, PASS, DEAL, Trump(TRUMP_DOUBLES), Trump(NO_TRUMP)]
    for tile in DOUBLE_SIX:
        actions.append(Play(tile))
        actions.extend(Play(tile, end) for end in (*LINE_ENDS, *DIGIT_ENDS))
        actions.append(Discard(tile))
    actions.extend(Bid(v) for v in (4, 5, 6, 7, 21))
    actions.extend(Trump(n) for n in range(7))
    return actions


@pytest.mark.parametrize("action", _every_action(), ids=str)
def test_every_action_round_trips_through_its_text(action: Action) -> None:
    text = str(action)
    assert parse_action(text) == action
    assert str(parse_action(text)) == text


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("play 6-5", Play(Tile(6, 5))),
        ("play 6-4 E", Play(Tile(6, 4), "E")),
        ("play 6-4 W", Play(Tile(6, 4), "W")),
        ("play 5-5 N", Play(Tile(5, 5), "N")),
        ("play 5-0 S", Play(Tile(5, 0), "S")),
        ("play 6-4 4", Play(Tile(6, 4), "4")),
        ("play 0-0 0", Play(Tile(0, 0), "0")),
        ("draw", DRAW),
        ("pass", PASS),
        ("deal", DEAL),
        ("bid 4", Bid(4)),
        ("bid 21", Bid(21)),
        ("discard 3-1", Discard(Tile(3, 1))),
        ("trump 0", Trump(0)),
        ("trump 6", Trump(6)),
        ("trump doubles", Trump(TRUMP_DOUBLES)),
        ("trump none", Trump(NO_TRUMP)),
    ],
)
def test_canonical_texts(text: str, action: Action) -> None:
    assert parse_action(text) == action
    assert str(action) == text


def test_the_opening_play_names_no_end_x1() -> None:
    assert str(Play(Tile(5, 6))) == "play 6-5"
    assert Play(Tile(6, 5)) != Play(Tile(6, 5), "E")


def test_tolerated_spacing_and_tile_order() -> None:
    assert parse_action("  play   4-6  E ") == Play(Tile(6, 4), "E")
    assert parse_action("discard [1-3]") == Discard(Tile(3, 1))


def test_hidden_discard_is_shown_but_not_parsed() -> None:
    assert str(Discard(None)) == "discard ?"
    with pytest.raises(InvalidActionError):
        parse_action("discard ?")


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("", "empty action"),
        ("   ", "empty action"),
        ("jump", "unknown action 'jump'"),
        ("play", "expected 'play TILE [END]'"),
        ("play 6-4 E W", "expected 'play TILE [END]'"),
        ("play 6-4 X", "end must be one of W, E, N, S"),
        ("play 6-4 7", "end must be one of W, E, N, S"),
        ("play 6-4 -1", "end must be one of W, E, N, S"),
        ("play 6-4 ²", "end must be one of W, E, N, S"),
        ("play 6-4 ٣", "end must be one of W, E, N, S"),
        ("play 9-9 E", "no tile 9-9"),
        ("play six-four", "bad tile"),
        ("draw 1", "'draw' takes no arguments"),
        ("pass now", "'pass' takes no arguments"),
        ("deal 2", "'deal' takes no arguments"),
        ("bid", "expected 'bid N'"),
        ("bid five", "expected 'bid N'"),
        ("bid -1", "expected 'bid N'"),
        ("bid 4 5", "expected 'bid N'"),
        ("bid ²", "expected 'bid N'"),
        ("discard", "expected 'discard TILE'"),
        ("discard 6-4 6-3", "expected 'discard TILE'"),
        ("trump", "expected 'trump X'"),
        ("trump 7", "expected 'trump X'"),
        ("trump all", "expected 'trump X'"),
        ("trump 1 2", "expected 'trump X'"),
    ],
)
def test_malformed_actions_are_rejected_clearly(text: str, hint: str) -> None:
    with pytest.raises(InvalidActionError) as info:
        parse_action(text)
    assert hint in str(info.value)


def _is_canonical(action: Action) -> bool:
    if isinstance(action, Play):
        return action.end is None or action.end in (*LINE_ENDS, *DIGIT_ENDS)
    return True


@given(st.text(max_size=16))
@example("bid ²")
@example("play 6-4 ²")
@example("play 6-4 ٣")
def test_parse_action_returns_a_canonical_action_or_raises_invalid_action(text: str) -> None:
    try:
        action = parse_action(text)
    except InvalidActionError:
        return
    assert parse_action(str(action)) == action
    assert _is_canonical(action)


@given(
    st.sampled_from(["play ", "draw", "pass", "deal", "bid ", "discard ", "trump "]),
    st.lists(
        st.sampled_from(["6-4", "0-0", "W", "E", "N", "S", "3", "21", "doubles", "none", "x"]),
        max_size=3,
    ),
)
def test_near_miss_texts_never_raise_anything_but_rules_errors(verb: str, args: list[str]) -> None:
    text = verb + " ".join(args)
    try:
        action = parse_action(text)
    except RulesError as exc:
        assert isinstance(exc, InvalidActionError)
        return
    assert parse_action(str(action)) == action


@given(st.lists(st.sampled_from(_every_action()), max_size=12))
def test_sort_actions_is_canonical_and_unique(actions: list[Action]) -> None:
    ordered = sort_actions(actions)
    assert len(ordered) == len(set(actions))
    assert set(ordered) == set(actions)
    assert list(ordered) == sorted(set(actions), key=lambda a: a.sort_key)
    assert sort_actions(list(reversed(actions))) == ordered


def test_sort_order_across_kinds() -> None:
    shuffled: list[Action] = [
        DEAL,
        PASS,
        DRAW,
        Play(Tile(1, 0), "W"),
        Trump(3),
        Discard(Tile(0, 0)),
    ]
    shuffled += [Bid(5), Play(Tile(0, 0), "E")]
    assert [str(a) for a in sort_actions(shuffled)] == [
        "bid 5",
        "discard 0-0",
        "trump 3",
        "play 0-0 E",
        "play 1-0 W",
        "draw",
        "pass",
        "deal",
    ]
