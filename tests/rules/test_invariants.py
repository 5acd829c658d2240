"""Invariants over thousands of seeded random games of every registered game
(OpenSpiel's lesson, docs/decisions.md).

Every configuration the registry accepts (Moon for 3; Passing, Straight and Doubles for 2, 3 and
4 players, and 4 in partnerships where the game allows it) plays ``GAMES_PER_CONFIG`` games of
uniformly random legal actions. At every step the checks below run, so a bug that shows up once
in a few thousand positions still fails the suite:

- every tile of the game's set is in exactly one place: a hand, the stock (boneyard or widow),
  the table (tiles played this deal) or the Moon discard;
- the legal actions are sorted by the canonical key, unique, non-empty until the game is over,
  and equal to what an independent model of the rules (below, one per game, written from
  docs/rules.md and fed only the log) allows; the layout that model builds from the plays must be
  what the observations show;
- ``apply`` never changes the state it is called on, and a state's fields are immutable;
- ``observe(seat)`` holds exactly that seat's hand and no tile of another hand, the boneyard, the
  widow or another seat's discard (only tiles already on the table are public);
- each hand's points follow the game's formula, recomputed here from the hands at the end of the
  hand; the scores are the running sum; the game ends exactly when the rules say;
- every game ends within ``STEP_CAP`` steps, and ``new_game(seed)`` plus the logged actions
  replays it to the same final state and outcome.

Cost (CI has 2 cores, the file must stay within about 3 minutes): the games of each chunk are
checked at one of three levels (:class:`Level`), by a budget of steps per chunk:

- FULL, the first ``FULL_CHECK_STEPS`` steps' worth of games: everything above at every step;
- STRICT, up to ``STRICT_CHECK_STEPS``: everything at every step except the observation walk
  (done at the end of every hand) and the immutability of the fields (start and end of the game).
  This covers every line game;
- LIGHT, the rest (only Moon, whose random games are ten times longer): at every step the legal
  actions' order, uniqueness and presence, that ``apply`` leaves the old state alone, and the
  model's bookkeeping of turns, hand ends, points and game end; tile conservation at the start
  and end of every hand, every seat's observation at the end of every hand.

The replay from the log (as costly as the game itself) runs for the FULL games and for every
``REPLAY_EVERY``-th game. The hypothesis test checks everything at every step.
"""

from __future__ import annotations

import dataclasses
import enum
import operator
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, ClassVar, Final

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domino_arena.sdk.rules import (
    CHANCE,
    DEAL,
    DOUBLE_SIX,
    DRAW,
    GAMES,
    NO_TRUMP,
    PASS,
    TERMINAL,
    TRUMP_DOUBLES,
    Action,
    Bid,
    Deal,
    Discard,
    Draw,
    Game,
    GameState,
    HandEnd,
    LogEntry,
    Observation,
    Pass,
    Play,
    Tile,
    Trump,
    configurations,
)
from domino_arena.sdk.rules.passing import PassingObservation, PassingState

GAMES_PER_CONFIG: Final = 2000
CHUNK: Final = 125
"""Games per test case; the chunks spread over pytest-xdist workers."""
FULL_CHECK_STEPS: Final = 1500
"""Steps per chunk that check every seat's observation and every state field: the chunk's first
games are checked that way until this many steps are (about 7 line games, or one Moon game:
random Moon games are some 10 times longer)."""
STRICT_CHECK_STEPS: Final = 40_000
"""Steps per chunk (the full ones included) checked at the strict level; the rest of the chunk's
games are checked at the light level. A chunk of line games is about 30,000 steps, so all of it
is strict; a chunk of Moon games is some 240,000 (random bids keep failing, so a game runs to
``DEAL_CAP``), and checking all of it strictly would take the file past its time budget."""
REPLAY_EVERY: Final = 4
"""Besides the full-check games, every 4th game is replayed from its log (the replay costs as
much engine time as the game itself, and random Moon games are long)."""
DEAL_CAP: Final = 100
"""Where a random game stops if nobody has won: the rules have no deal limit (docs/rules.md
7.2), and random Moon bidders fail most contracts, so nobody may ever reach 21. A game stopped
here is checked as far as it went (the referee's own cap is tests/match/test_core.py's)."""
STEP_CAP: Final = 50_000
"""A loop guard. Random line games stay under 1,000 steps; random Moon games stopped at
``DEAL_CAP`` deals take under 3,000 steps."""
HYPOTHESIS_EXAMPLES: Final = 15


# -- the configurations -----------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """One game configuration to play: the registry name and the game it makes."""

    name: str
    game: Game

    @property
    def id(self) -> str:
        teams = "-teams" if len(self.game.sides) != self.game.num_players else ""
        return f"{self.name}-{self.game.num_players}{teams}"


CONFIGS: Final = [Config(game.name, game) for game in configurations()]
"""Every registered game in every seating it accepts (the registry's own list)."""
CHUNKS: Final = [
    pytest.param(config, start, id=f"{config.id}-{start // CHUNK}")
    for config in CONFIGS
    for start in range(0, GAMES_PER_CONFIG, CHUNK)
]


# -- what docs/rules.md fixes per game, written out here independently of the engines --------------

MOON_TILES: Final = tuple(t for t in DOUBLE_SIX if t.low != 0 or t.high == 0)
"""docs/rules.md 1.1: the double-six set without the blanks except 0-0 (22 tiles)."""

TILE_SETS: Final[dict[str, tuple[Tile, ...]]] = {"moon": MOON_TILES}
"""The tiles of each game; the line games use all 28."""

HAND_SIZES: Final[dict[str, dict[int, int]]] = {
    "moon": {3: 7},  # docs/rules.md 1.2
    "passing": {2: 7, 3: 7, 4: 6},  # docs/rules.md 2.2
    "straight": {2: 7, 3: 7, 4: 7},  # docs/rules.md 3.2
    "doubles": {2: 8, 3: 6, 4: 6},  # docs/rules.md 4.2
}
TARGETS: Final[dict[str, Callable[[Game], int]]] = {
    "moon": lambda g: 21,  # docs/rules.md 1.1
    "passing": lambda g: g.target,  # 101 / 61 or pagat's (checked in _check_passing_target)
    "straight": lambda g: 250,  # docs/rules.md 3.10
    "doubles": lambda g: 100,  # docs/rules.md 4.1
}


_INDEX: Final = operator.attrgetter("index")
"""Sets of tile indices are built in C; Tile.__hash__ is Python and slow in a hot loop."""


def round5(n: int) -> int:
    """docs/rules.md 0.6: to the nearest 5, remainders 1-2 down and 3-4 up."""
    return 5 * ((n + 2) // 5)


def pips(tiles: tuple[Tile, ...] | list[Tile]) -> int:
    return sum(t.high + t.low for t in tiles)


def next_seat(seat: int, players: int) -> int:
    return (seat + 1) % players


# -- reading a state (omniscient) ---------------------------------------------------------------


def stock(state: GameState) -> tuple[Tile, ...]:
    """The tiles nobody holds and nobody played: the boneyard, or Moon's widow while face down."""
    if state.game.name == "moon":
        # MoonState keeps ``widow`` after the pickup (the bidder's knowledge); it is face down
        # only until the auction has a winner, i.e. while ``bidder`` is None.
        widow = _field(state, "widow")
        face_down = _field(state, "bidder") is None
        return (widow,) if face_down and widow is not None else ()
    return tuple(_field(state, "boneyard"))


def _field(value: object, name: str) -> Any:
    """A game-specific attribute of a state or an observation, named in the caller."""
    return getattr(value, name)


def same_tiles(a: tuple[Tile, ...], b: tuple[Tile, ...]) -> bool:
    """Whether two groups of distinct tiles hold the same tiles, in any order."""
    return len(a) == len(b) and (a == b or set(map(_INDEX, a)) == set(map(_INDEX, b)))


def without(hand: tuple[Tile, ...], tile: Tile) -> tuple[Tile, ...]:
    assert tile in hand, f"{tile} is not in {hand}"
    return tuple(t for t in hand if t is not tile)


def hands_of(state: GameState) -> tuple[tuple[Tile, ...], ...]:
    """Every seat's hand; through the engines' ``hands`` field when there is one (it is hot)."""
    hands = getattr(state, "hands", None)
    if hands is None:
        return tuple(map(state.hand, range(state.game.num_players)))
    assert isinstance(hands, tuple)
    return hands


_SLOT_NAMES: dict[type, tuple[str, ...]] = {}
_SNAPSHOT: dict[type, Callable[[GameState], tuple[object, ...]]] = {}


def slot_names(state: GameState) -> tuple[str, ...]:
    """The names of every attribute a state of this class holds (its slots, all bases')."""
    cls = type(state)
    names = _SLOT_NAMES.get(cls)
    if names is None:
        found: list[str] = []
        for klass in cls.__mro__:
            slots = klass.__dict__.get("__slots__", ())
            for name in (slots,) if isinstance(slots, str) else slots:
                if name not in found and name not in ("__dict__", "__weakref__"):
                    found.append(name)
        assert not hasattr(state, "__dict__"), f"{cls.__name__} has a __dict__: use __slots__"
        names = _SLOT_NAMES[cls] = tuple(found)
    return names


def state_fields(state: GameState) -> dict[str, object]:
    """Every attribute of ``state`` by name."""
    return {name: getattr(state, name) for name in slot_names(state) if hasattr(state, name)}


def snapshot(state: GameState) -> tuple[object, ...]:
    """The values of every attribute of ``state``, in slot order (cheap: one C call)."""
    getter = _SNAPSHOT.get(type(state))
    if getter is None:
        getter = _SNAPSHOT[type(state)] = operator.attrgetter(*slot_names(state))
    return getter(state)


# -- walking an observation ---------------------------------------------------------------------

_ATOMS: Final = (int, str, float, bool, type(None), enum.Enum, bytes)
_FIELDS_CACHE: dict[type, tuple[str, ...]] = {}


def _dataclass_fields(value: object) -> tuple[str, ...]:
    cls = type(value)
    try:
        return _FIELDS_CACHE[cls]
    except KeyError:
        names = tuple(f.name for f in dataclasses.fields(value))  # type: ignore[arg-type]
        _FIELDS_CACHE[cls] = names
        return names


def walk_tiles(value: object, path: str = "obs") -> Iterator[tuple[Tile, str]]:
    """Yield every tile held anywhere inside ``value`` with where it is.

    Only plain data is allowed in an observation: an object of another kind (a state, say) could
    hide anything, so it fails the test.
    """
    if isinstance(value, Tile):
        yield value, path
    elif isinstance(value, _ATOMS):
        return
    elif isinstance(value, LogEntry):
        yield from walk_tiles(value.action, f"{path}.action")
    elif isinstance(value, tuple | list | frozenset | set):
        for i, item in enumerate(value):
            yield from walk_tiles(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from walk_tiles(key, f"{path}<key {key!r}>")
            yield from walk_tiles(item, f"{path}[{key!r}]")
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for name in _dataclass_fields(value):
            yield from walk_tiles(getattr(value, name), f"{path}.{name}")
    else:
        raise AssertionError(
            f"{path} is a {type(value).__name__}: an observation holds plain data only"
        )


_ATOM_TYPES: Final = frozenset({int, str, float, bool, type(None), bytes})
_SEQUENCE_TYPES: Final = frozenset({tuple, list, frozenset, set})
_TILELESS_ACTIONS: Final = frozenset({Bid, Trump, Draw, Pass, Deal})


def _tiles_fast(value: object, out: list[Tile]) -> None:
    """The same walk as :func:`walk_tiles` without paths, for the common case (no leak)."""
    kind = type(value)
    if kind is Tile:
        out.append(value)  # type: ignore[arg-type]
    elif kind in _ATOM_TYPES:
        return
    elif kind in _SEQUENCE_TYPES:
        for item in value:  # type: ignore[attr-defined]
            inner = type(item)
            if inner is Tile:
                out.append(item)
            elif inner is LogEntry:  # the history: by far the most common item, so inlined
                action = item.action
                if type(action) is Play or type(action) is Discard:
                    if action.tile is not None:
                        out.append(action.tile)
                elif type(action) not in _TILELESS_ACTIONS:
                    _tiles_fast(action, out)
            elif inner is Play or inner is Discard:  # legal actions
                if item.tile is not None:
                    out.append(item.tile)
            elif inner is tuple:  # pairs such as (seat, tile) or (west, east)
                for part in item:
                    if type(part) is Tile:
                        out.append(part)
                    elif type(part) not in _ATOM_TYPES:
                        _tiles_fast(part, out)
            elif inner not in _ATOM_TYPES and inner not in _TILELESS_ACTIONS:
                _tiles_fast(item, out)
    elif kind is LogEntry:
        _tiles_fast(value.action, out)  # type: ignore[attr-defined]
    elif kind is Play or kind is Discard:
        if value.tile is not None:  # type: ignore[attr-defined]
            out.append(value.tile)  # type: ignore[attr-defined]
    elif kind in _TILELESS_ACTIONS or isinstance(value, enum.Enum):
        return
    elif isinstance(value, dict):
        for key, item in value.items():
            _tiles_fast(key, out)
            _tiles_fast(item, out)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for name in _dataclass_fields(value):
            _tiles_fast(getattr(value, name), out)
    else:
        raise AssertionError(f"an observation holds a {type(value).__name__}: plain data only")


# -- the independent models ---------------------------------------------------------------------


class Model:
    """An independent model of one game's rules, fed only the hands at a deal and the log.

    It predicts the legal actions, the next seat, the end of each hand and its points, and checks
    the engine against them. Subclasses implement one game each.
    """

    name: ClassVar[str]

    def __init__(self, game: Game) -> None:
        self.game = game
        self.players = game.num_players
        self.sides = game.sides
        self.side_of = {seat: i for i, seats in enumerate(game.sides) for seat in seats}
        self.first_actor: int | None = None
        """The seat that acted first in the current deal (starter, opener or first bidder)."""
        self.previous_first: int | None = None
        self.deals = 0
        self.strict = True
        """Check every seat's hand after every step (the driver turns it off in light games)."""

    # The driver calls these.

    def on_deal(self, state: GameState) -> None:
        """A hand was just dealt into ``state`` (the first one, or after a ``deal`` step)."""
        self.deals += 1
        hands = hands_of(state)
        size = HAND_SIZES[self.name][self.players]
        assert all(len(h) == size for h in hands), (
            f"deal {state.deal_number}: hand sizes {[len(h) for h in hands]}, expected {size} "
            f"each (docs/rules.md deal table)"
        )
        self.previous_first, self.first_actor = self.first_actor, None
        self.start_hand(state)

    def step(self, before: GameState, seat: int, action: Action, after: GameState) -> None:
        """Check ``after = before.apply(action)`` taken by ``seat``."""
        if self.first_actor is None:
            self.first_actor = seat
        self.act(before, seat, action, after)

    def expected_legal(self, state: GameState) -> tuple[Action, ...] | None:
        """The legal actions the rules allow here (any order), or None if not modelled."""
        return None

    def check_observation(self, obs: Observation) -> None:
        """Compare the public layout in ``obs`` with the model's."""

    # Subclasses implement these.

    def start_hand(self, state: GameState) -> None:
        raise NotImplementedError

    def act(self, before: GameState, seat: int, action: Action, after: GameState) -> None:
        raise NotImplementedError

    # Shared checks.

    def expect_rotation(self, seat: int, what: str, rule: str) -> None:
        """The seat that opens a deal is one clockwise from the previous deal's."""
        if self.previous_first is not None:
            want = next_seat(self.previous_first, self.players)
            assert seat == want, (
                f"{what} of deal {self.deals} is seat {seat}; {rule}: one seat clockwise from "
                f"the previous deal's ({self.previous_first}), i.e. seat {want}"
            )

    def expect_hand_end(
        self,
        before: GameState,
        after: GameState,
        end: HandEnd | None,
        points: tuple[int, ...] | None,
        in_play: tuple[int, ...] | None = None,
    ) -> None:
        """Check the hand ended (or not) as the model says, with these points and scores.

        ``in_play`` is the points scored during play (Straight) before any end-of-hand points.
        """
        if end is None and not any(in_play or ()):
            assert len(after.hand_results) == len(before.hand_results), (
                f"the hand ended ({after.hand_results[-1]}) but the rules say play goes on"
            )
            assert after.scores == before.scores, f"scores {before.scores} -> {after.scores}"
            return
        new = after.hand_results[len(before.hand_results) :]
        gained = in_play or (0,) * len(self.sides)
        if end is None:
            assert not new, f"the hand ended ({new}) but the rules say play goes on"
            self.expect_scores(before, after, gained)
            return
        assert len(new) == 1, f"expected the hand to end by {end.value}, got results {new}"
        result = new[0]
        assert result.end == end, f"hand ended by {result.end.value}, expected {end.value}"
        assert points is not None
        assert result.points == points, (
            f"hand {result.deal} ({result.detail}): points {result.points}, the formula gives "
            f"{points}"
        )
        assert result.deal == before.deal_number
        self.expect_scores(before, after, tuple(a + b for a, b in zip(gained, points, strict=True)))

    def expect_scores(self, before: GameState, after: GameState, gained: tuple[int, ...]) -> None:
        want = tuple(s + g for s, g in zip(before.scores, gained, strict=True))
        assert after.scores == want, f"scores {after.scores}, expected {want}"

    def expect_game_over_at_target(self, after: GameState, target: int) -> None:
        """Line games: the game ends as soon as a side reaches the target, else play goes on."""
        reached = [i for i, s in enumerate(after.scores) if s >= target]
        assert len(reached) <= 1, f"two sides at the target: {after.scores}"
        outcome = after.outcome()
        if reached:
            assert after.current_seat == TERMINAL, f"side {reached[0]} reached {target}: game over"
            assert outcome is not None
            assert outcome.winner == reached[0]
            assert outcome.scores == after.scores
        else:
            assert after.current_seat != TERMINAL, "the game ended below the target"
            assert outcome is None


class _LineModel(Model):
    """What the three line games share in the model: the hands moving with plays and draws."""

    def track_hands(self, before: GameState, seat: int, action: Action, after: GameState) -> None:
        """A play takes the tile from the mover, a draw moves the boneyard's first tile."""
        if not self.strict:
            return
        want = list(hands_of(before))
        bone = stock(before)
        if isinstance(action, Play):
            want[seat] = without(want[seat], action.tile)
            bone_after = bone
        elif isinstance(action, Draw):
            assert len(bone) > 0
            want[seat] = (*want[seat], bone[0])
            bone_after = bone[1:]
        else:
            bone_after = bone
        got = hands_of(after)
        for s in range(self.players):
            assert same_tiles(want[s], got[s]), (
                f"after '{action}' by seat {seat}, seat {s} holds {got[s]}, expected {want[s]}"
            )
        assert stock(after) == bone_after, (
            "the boneyard changed other than by a draw from its front"
        )

    def next_or_end(
        self,
        before: GameState,
        after: GameState,
        seat: int,
        *,
        end: HandEnd | None,
        points: tuple[int, ...] | None,
        in_play: tuple[int, ...] | None = None,
    ) -> None:
        """Check the hand's end and points; if it goes on, ``seat`` must be the one to move."""
        self.expect_hand_end(before, after, end, points, in_play)
        if end is not None or any(in_play or ()):
            self.expect_game_over_at_target(after, TARGETS[self.name](self.game))
            if after.current_seat != TERMINAL and end is not None:
                assert after.current_seat == CHANCE, "after a hand the next step is the deal"
                assert after.legal_actions() == (DEAL,)
        if end is None and after.current_seat != TERMINAL:
            assert after.current_seat == seat, (
                f"seat {after.current_seat} is to move, expected seat {seat}"
            )

    def unique_lowest(self, totals: tuple[int, ...]) -> int | None:
        low = min(totals)
        return totals.index(low) if totals.count(low) == 1 else None

    def side_totals(self, state: GameState) -> tuple[int, ...]:
        hands = hands_of(state)
        return tuple(sum(pips(hands[s]) for s in seats) for seats in self.sides)


class PassingModel(_LineModel):
    """docs/rules.md section 2 (Passing Game)."""

    name = "passing"
    RESERVE: ClassVar[int] = 2

    def start_hand(self, state: GameState) -> None:
        self.line: list[tuple[int, int]] = []
        self.passes = 0
        assert state.current_seat >= 0, "a Passing deal is never void"
        self.expect_rotation(state.current_seat, "the starter", "docs/rules.md 2.3 (P11)")

    @property
    def ends(self) -> tuple[int, int] | None:
        return (self.line[0][0], self.line[-1][1]) if self.line else None

    def expected_legal(self, state: GameState) -> tuple[Action, ...] | None:
        hand = state.hand(state.current_seat)
        ends = self.ends
        if ends is None:
            return tuple(Play(t) for t in hand)  # docs/rules.md 2.5, P4
        actions: list[Action] = [PASS]  # docs/rules.md 2.5, P3
        for tile in hand:
            for end, shown in zip(("W", "E"), ends, strict=True):
                if tile.has(shown):
                    actions.append(Play(tile, end))
        if len(stock(state)) > self.RESERVE:  # docs/rules.md 2.2, P2
            actions.append(DRAW)
        return tuple(actions)

    def act(self, before: GameState, seat: int, action: Action, after: GameState) -> None:
        self.track_hands(before, seat, action, after)
        if isinstance(action, Play):
            self.place(action)
            self.passes = 0
        elif isinstance(action, Draw):
            self.passes = 0
        else:
            self.passes += 1
        hands = hands_of(after)
        ends = self.ends
        end: HandEnd | None = None
        if not hands[seat] and isinstance(action, Play):
            end = HandEnd.DOMINO  # docs/rules.md 2.6 a
        elif (
            ends is not None
            and len(stock(after)) <= self.RESERVE
            and not any(t.has(ends[0]) or t.has(ends[1]) for h in hands for t in h)
        ):
            end = HandEnd.BLOCKED  # docs/rules.md 2.6 b
        elif self.passes == self.players:
            end = HandEnd.PASSED_OUT  # docs/rules.md 2.6 c
        points = self.hand_points(after) if end is not None else None
        self.next_or_end(before, after, next_seat(seat, self.players), end=end, points=points)

    def place(self, action: Play) -> None:
        tile, ends = action.tile, self.ends
        if ends is None:
            assert action.end is None, "docs/rules.md X1: the opening play names no end"
            self.line = [(tile.low, tile.high)]  # docs/rules.md 2.4: l at W, h at E
        elif action.end == "W":
            assert tile.has(ends[0]), f"{tile} does not join {ends[0]} at W"
            self.line.insert(0, (tile.other(ends[0]), ends[0]))
        else:
            assert action.end == "E" and tile.has(ends[1]), f"{tile} does not join at E"
            self.line.append((ends[1], tile.other(ends[1])))

    def hand_points(self, state: GameState) -> tuple[int, ...]:
        """docs/rules.md 2.7: the unique lowest side scores (others' totals) - (own total)."""
        totals = self.side_totals(state)
        points = [0] * len(totals)
        winner = self.unique_lowest(totals)
        if winner is not None:
            others = sum(t for i, t in enumerate(totals) if i != winner)
            points[winner] = others - totals[winner]
            assert points[winner] > 0
        return tuple(points)

    def check_observation(self, obs: Observation) -> None:
        line = tuple(_field(obs, "line"))
        assert line == tuple(self.line), f"observation line {line}, the plays give {self.line}"
        for (_, right), (left, _) in pairwise(line):
            assert right == left, f"the line does not join: {line}"
        assert _field(obs, "ends") == self.ends
        assert _field(obs, "passes") == self.passes


def _check_passing_target(game: Game) -> None:
    """docs/rules.md 2.8 and P10: 101 for 2-3 players, 61 for 4 (gamerules); pagat's otherwise."""
    options = game.options()
    teams = len(game.sides) != game.num_players
    if options.get("target_rule", "gamerules") == "gamerules":
        want = 101 if game.num_players < 4 else 61
    else:
        want = 101 if game.num_players == 2 or teams else 61
    assert game.target == want, (
        f"{game.describe()}: target {game.target}, docs/rules.md 2.8: {want}"
    )


@dataclass
class _Arm:
    """A Straight spinner arm, or the line end before a spinner: the number shown at its end."""

    shows: int
    double: bool
    """Its last tile is a crosswise double (counts twice while nothing joins it)."""


class StraightModel(_LineModel):
    """docs/rules.md section 3 (Straight Dominoes)."""

    name = "straight"

    def start_hand(self, state: GameState) -> None:
        self.spinner: int | None = None
        self.arms: dict[str, _Arm | None] = {"W": None, "E": None, "N": None, "S": None}
        self.empty = True
        self.played: list[Tile] = []
        assert state.current_seat >= 0, "a Straight deal is never void"
        self.expect_rotation(state.current_seat, "the starter", "docs/rules.md 3.3 (S13)")

    def open_ends(self) -> dict[str, int]:
        """End name -> the number a tile must hold to be placed there (docs/rules.md 3.4)."""
        if self.empty:
            return {}
        if self.spinner is None:
            return {end: arm.shows for end, arm in self.arms.items() if arm is not None}
        ends = {}
        for end in ("W", "E"):
            arm = self.arms[end]
            ends[end] = self.spinner if arm is None else arm.shows
        if self.arms["W"] is not None and self.arms["E"] is not None:  # S2
            for end in ("N", "S"):
                arm = self.arms[end]
                ends[end] = self.spinner if arm is None else arm.shows
        return ends

    def plays(self, hand: tuple[Tile, ...]) -> list[Action]:
        if self.empty:
            return [Play(t) for t in hand]
        ends = self.open_ends()
        return [Play(t, end) for t in hand for end, shown in ends.items() if t.has(shown)]

    def expected_legal(self, state: GameState) -> tuple[Action, ...] | None:
        plays = self.plays(state.hand(state.current_seat))
        if plays:
            return tuple(plays)  # docs/rules.md 3.6, S6: play is compulsory
        return (DRAW,) if stock(state) else (PASS,)  # docs/rules.md 3.6, S7, S8

    def count(self) -> int:
        """docs/rules.md 3.5: the open-end total."""
        if self.spinner is None:
            return sum(arm.shows for arm in self.arms.values() if arm is not None)
        total = 2 * self.spinner if self.arms["W"] is None or self.arms["E"] is None else 0
        for arm in self.arms.values():
            if arm is not None:
                total += 2 * arm.shows if arm.double else arm.shows
        return total

    def place(self, action: Play) -> None:
        tile = action.tile
        self.played.append(tile)
        if self.empty:
            assert action.end is None, "docs/rules.md X1: the opening play names no end"
            self.empty = False
            if tile.is_double:
                self.spinner = tile.high  # S1: a double opener is the spinner
            else:
                self.arms["W"], self.arms["E"] = _Arm(tile.low, False), _Arm(tile.high, False)
            return
        ends = self.open_ends()
        assert action.end in ends, f"end {action.end} is not open ({sorted(ends)})"
        shown = ends[action.end]
        assert tile.has(shown), f"{tile} does not join {shown} at {action.end}"
        if self.spinner is None and tile.is_double:
            # S1: the first double becomes the spinner; the line becomes the opposite arm.
            self.spinner = shown
            opposite = "E" if action.end == "W" else "W"
            kept = self.arms[opposite]
            self.arms = {"W": None, "E": None, "N": None, "S": None}
            self.arms[opposite] = kept
            return
        self.arms[action.end] = _Arm(tile.other(shown), tile.is_double)

    def fits(self, hands: tuple[tuple[Tile, ...], ...]) -> bool:
        """Whether any hand holds a tile that fits an open end (the hand is not blocked)."""
        shown = set(self.open_ends().values())
        return self.empty or any(t.high in shown or t.low in shown for h in hands for t in h)

    def act(self, before: GameState, seat: int, action: Action, after: GameState) -> None:
        self.track_hands(before, seat, action, after)
        in_play = [0] * len(self.sides)
        target = TARGETS[self.name](self.game)
        side = self.side_of[seat]
        if isinstance(action, Play):
            self.place(action)
            count = self.count()
            if count > 0 and count % 5 == 0:  # docs/rules.md 3.7
                in_play[side] = count
        hands = hands_of(after)
        end: HandEnd | None = None
        points: tuple[int, ...] | None = None
        if before.scores[side] + in_play[side] >= target:
            # docs/rules.md 3.10, S12, X3: the game ends at once, nothing more is scored.
            new = after.hand_results[len(before.hand_results) :]
            assert all(r.end == HandEnd.TARGET and not any(r.points) for r in new), new
            self.expect_scores(before, after, tuple(in_play))
            self.expect_game_over_at_target(after, target)
            return
        if isinstance(action, Play) and not hands[seat]:
            end = HandEnd.DOMINO  # docs/rules.md 3.8
            totals = self.side_totals(after)
            points = tuple(
                round5(sum(totals) - totals[side]) if i == side else 0 for i in range(len(totals))
            )
        elif not stock(after) and not self.fits(hands):
            end = HandEnd.BLOCKED  # docs/rules.md 3.8, 0.7
            totals = self.side_totals(after)
            winner = self.unique_lowest(totals)
            points = tuple(
                round5(sum(totals) - totals[i]) if i == winner else 0 for i in range(len(totals))
            )  # docs/rules.md 3.9, S10
        # docs/rules.md 3.6: the drawer stays on turn until a tile fits or the boneyard is empty.
        mover = seat if isinstance(action, Draw) else next_seat(seat, self.players)
        self.next_or_end(before, after, mover, end=end, points=points, in_play=tuple(in_play))

    def check_observation(self, obs: Observation) -> None:
        """The layout shown joins tile to tile and has the model's ends, count and tiles."""
        layout = _field(obs, "layout")
        line, spinner, arms = layout.line, layout.spinner, layout.arms
        for (_, right), (left, _) in pairwise(line):
            assert right == left, f"the line does not join: {layout}"
        assert spinner == self.spinner, f"spinner {spinner}, the plays give {self.spinner}"
        if spinner is not None:
            assert not line, "once the spinner is down the line is an arm"
            for name, arm in zip(("W", "E", "N", "S"), arms, strict=True):
                joints = [spinner, *(outer for _, outer in arm)]
                for (inner, _), shown in zip(arm, joints, strict=False):
                    assert inner == shown, f"arm {name} does not join: {layout}"
                mine = self.arms[name]
                assert (mine.shows if mine else None) == (arm[-1][1] if arm else None), (
                    f"arm {name}: {layout}, model {mine}"
                )
        ends = dict(layout.ends)
        assert ends == self.open_ends(), f"open ends {ends}, model {self.open_ends()}"
        assert layout.count == (self.count() if not self.empty else 0), (
            f"count {layout.count} of {layout}, docs/rules.md 3.5 gives {self.count()}"
        )
        laid = [Tile(a, b) for a, b in line]
        if spinner is not None:
            laid += [Tile(spinner, spinner), *(Tile(a, b) for arm in arms for a, b in arm)]
        assert sorted(t.index for t in laid) == sorted(t.index for t in self.played), (
            f"the layout holds {laid}, the plays were {self.played}"
        )


class DoublesModel(_LineModel):
    """docs/rules.md section 4 (Doubles)."""

    name = "doubles"
    RESERVE: ClassVar[int] = 2

    def start_hand(self, state: GameState) -> None:
        self.ends: Counter[int] = Counter()
        self.unlocked: set[int] = set()
        self.played: list[Tile] = []
        hands = hands_of(state)
        self.opening: Tile | None = None
        for n in range(6, -1, -1):  # docs/rules.md 4.3: [6-6], [5-5], ... [0-0]
            holders = [s for s, h in enumerate(hands) if Tile(n, n) in h]
            if holders:
                self.opening = Tile(n, n)
                assert state.current_seat == holders[0], (
                    f"seat {holders[0]} holds {self.opening}, the highest double, and must open "
                    f"(docs/rules.md 4.3); seat {state.current_seat} is to move"
                )
                return
        # No double anywhere: a void deal, redealt (docs/rules.md 4.3, D8).
        assert state.current_seat == CHANCE, "no hand holds a double: the deal is void"
        last = state.hand_results[-1] if state.hand_results else None
        assert last is not None and last.end == HandEnd.VOID and not any(last.points)
        assert last.deal == state.deal_number

    def plays(self, hand: tuple[Tile, ...]) -> list[Action]:
        if self.opening is not None and not self.ends:
            return [Play(self.opening)] if self.opening in hand else []
        out: list[Action] = []
        for tile in hand:
            for shown in {tile.high, tile.low}:
                if self.ends[shown] and (shown in self.unlocked or tile.is_double):
                    out.append(Play(tile, str(shown)))  # docs/rules.md 4.5, D12: end named by digit
        return out

    def expected_legal(self, state: GameState) -> tuple[Action, ...] | None:
        plays = self.plays(state.hand(state.current_seat))
        if plays:
            return tuple(plays)  # docs/rules.md 4.6 (1), D6
        return (DRAW,) if len(stock(state)) > self.RESERVE else (PASS,)  # docs/rules.md 4.6, D7

    def place(self, action: Play) -> None:
        tile = action.tile
        self.played.append(tile)
        if not self.ends:
            assert action.end is None and tile == self.opening, "docs/rules.md 4.3, X1"
            self.ends[tile.high] = 4
            self.unlocked.add(tile.high)
            return
        assert action.end is not None
        shown = int(action.end)
        assert self.ends[shown] > 0 and tile.has(shown), f"{tile} has no open end {shown}"
        self.ends[shown] -= 1
        if tile.is_double:
            self.ends[shown] += 3  # docs/rules.md 4.4: a double is a spinner, three new ends
            self.unlocked.add(shown)
        else:
            assert shown in self.unlocked, f"{shown} is locked (docs/rules.md 4.5)"
            self.ends[tile.other(shown)] += 1
        self.ends = +self.ends

    def fits(self, hands: tuple[tuple[Tile, ...], ...]) -> bool:
        """Whether any hand holds a tile with a legal placement (docs/rules.md 4.5)."""
        free = {n for n in self.ends if n in self.unlocked}
        return any(
            t.high in free or t.low in free or (t.is_double and self.ends[t.high] > 0)
            for h in hands
            for t in h
        )

    def act(self, before: GameState, seat: int, action: Action, after: GameState) -> None:
        self.track_hands(before, seat, action, after)
        if isinstance(action, Play):
            self.place(action)
        hands = hands_of(after)
        end: HandEnd | None = None
        points: tuple[int, ...] | None = None
        totals = self.side_totals(after)  # no partnerships in Doubles (D11): a side is a seat
        if isinstance(action, Play) and not hands[seat]:
            end = HandEnd.DOMINO  # docs/rules.md 4.7
            points = tuple(
                sum(totals) - totals[seat] if i == seat else 0 for i in range(len(totals))
            )
        elif len(stock(after)) <= self.RESERVE and not self.fits(hands):
            end = HandEnd.BLOCKED  # docs/rules.md 4.7, 4.8, D9
            winner = self.unique_lowest(totals)
            points = tuple(
                sum(totals) - totals[i] if i == winner else 0 for i in range(len(totals))
            )
        if isinstance(action, Draw) and self.plays((stock(before)[0],)):
            mover = seat  # docs/rules.md 4.6 (2): a drawn tile that fits is played at once
        else:
            mover = next_seat(seat, self.players)
        self.next_or_end(before, after, mover, end=end, points=points)

    def check_observation(self, obs: Observation) -> None:
        """The layout shown: the tiles placed, open ends as a multiset (D12), unlocked numbers."""
        placed = tuple(_field(obs, "placed"))
        assert placed == tuple(self.played), f"placed {placed}, the plays were {self.played}"
        ends = _field(obs, "ends")
        assert Counter(ends) == self.ends, f"open ends {ends}, model {dict(self.ends)}"
        unlocked = _field(obs, "unlocked")
        assert set(unlocked) == self.unlocked, f"unlocked {unlocked}, model {self.unlocked}"


class MoonModel(Model):
    """docs/rules.md section 1 (Three-Player Moon), following the pseudocode of 1.11."""

    name = "moon"
    BIDS: ClassVar[tuple[int, ...]] = (4, 5, 6, 7, 21)

    def start_hand(self, state: GameState) -> None:
        first = state.current_seat
        assert 0 <= first < 3
        self.expect_rotation(first, "the first bidder", "docs/rules.md 1.4 (M4)")
        self.first_actor = first
        self.turns = 0
        self.high: tuple[int, int] | None = None  # (bid, seat)
        self.phase = "bid"
        self.trump: int | None = None
        self.trick: list[tuple[int, Tile]] = []
        self.tricks = [0, 0, 0]
        self.widow = stock(state)
        assert len(self.widow) == 1, f"the widow is one tile (docs/rules.md 1.2), got {self.widow}"
        self.bids: list[tuple[int, int | None]] = []
        self.done: list[tuple[int, tuple[tuple[int, Tile], ...], int]] = []
        self.discard: Tile | None = None

    def step(self, before: GameState, seat: int, action: Action, after: GameState) -> None:
        self.act(before, seat, action, after)

    # docs/rules.md 1.11 pseudocode.
    def is_trump(self, t: Tile) -> bool:
        if self.trump is None or self.trump == NO_TRUMP:
            return False
        if self.trump == TRUMP_DOUBLES:
            return t.is_double
        return t.has(self.trump)

    def led_suit(self, t: Tile) -> int:
        return -1 if self.is_trump(t) else t.high

    def follows(self, t: Tile, suit: int) -> bool:
        return self.is_trump(t) if suit == -1 else (not self.is_trump(t) and t.has(suit))

    def rank(self, t: Tile, suit: int) -> int:
        if suit == -1:
            if self.trump == TRUMP_DOUBLES:
                return t.high
            assert self.trump is not None
            return 100 if t.is_double else t.other(self.trump)
        return 100 if t.is_double else t.other(suit)

    def expected_legal(self, state: GameState) -> tuple[Action, ...] | None:
        hand = state.hand(state.current_seat)
        if self.phase == "bid":
            floor = self.high[0] if self.high else 0
            return (PASS, *(Bid(v) for v in self.BIDS if v > floor))  # docs/rules.md 1.5
        if self.phase == "discard":
            return tuple(Discard(t) for t in hand)  # docs/rules.md 1.6
        if self.phase == "trump":
            # docs/rules.md 1.7
            return tuple(Trump(x) for x in (*range(7), TRUMP_DOUBLES, NO_TRUMP))
        if not self.trick:
            return tuple(Play(t) for t in hand)  # docs/rules.md 1.9
        suit = self.led_suit(self.trick[0][1])
        following = [t for t in hand if self.follows(t, suit)]
        return tuple(Play(t) for t in following or hand)  # docs/rules.md 1.10

    def act(self, before: GameState, seat: int, action: Action, after: GameState) -> None:
        want = list(hands_of(before))
        if self.phase == "bid":
            self.turns += 1
            self.bids.append((seat, action.value if isinstance(action, Bid) else None))
            if isinstance(action, Bid) and (self.high is None or action.value > self.high[0]):
                self.high = (action.value, seat)
            if self.turns == 3 or (self.high is not None and self.high[0] == 21):
                if self.high is None:  # M3: everybody passed, a void deal
                    self.expect_hand_end(before, after, HandEnd.VOID, (0, 0, 0))
                    self.expect_hands(after, want)
                    self.expect_game_end(before, after, None, "void deal (M3, X5)")
                    return
                self.phase = "discard"
                want[self.high[1]] += self.widow  # docs/rules.md 1.6 (1)
                self.expect_next(after, self.high[1])
            else:
                self.expect_next(after, next_seat(seat, 3))
        elif self.phase == "discard":
            assert isinstance(action, Discard) and action.tile is not None
            want[seat] = without(want[seat], action.tile)
            self.discard = action.tile
            self.phase = "trump"
            self.expect_next(after, seat)
        elif self.phase == "trump":
            assert isinstance(action, Trump)
            self.trump = action.suit
            self.phase = "play"
            self.expect_next(after, seat)  # docs/rules.md 1.9: the bidder leads
        else:
            assert isinstance(action, Play)
            want[seat] = without(want[seat], action.tile)
            self.trick.append((seat, action.tile))
            if len(self.trick) < 3:
                self.expect_next(after, next_seat(seat, 3))
            else:
                winner = self.trick_winner()
                self.tricks[winner] += 1
                self.done.append((self.trick[0][0], tuple(self.trick), winner))
                self.trick = []
                if sum(self.tricks) == 7:
                    self.expect_hands(after, want)
                    self.score(before, after)
                    return
                self.expect_next(after, winner)
        self.expect_hands(after, want)
        self.expect_hand_end(before, after, None, None)

    def check_observation(self, obs: Observation) -> None:
        """The public auction and tricks match the log; the widow and discard only the bidder's."""
        bidder = self.high[1] if self.high and self.phase != "bid" else None
        assert _field(obs, "opener") == self.first_actor
        assert tuple(_field(obs, "bids")) == tuple(self.bids)
        assert _field(obs, "bidder") == bidder
        assert _field(obs, "contract") == (
            self.high[0] if bidder is not None and self.high else None
        )
        assert _field(obs, "trump") == self.trump
        assert tuple(_field(obs, "trick")) == tuple(self.trick)
        done = tuple((t.leader, tuple(t.plays), t.winner) for t in _field(obs, "tricks"))
        assert done == tuple(self.done), f"tricks {done}, the log gives {self.done}"
        assert tuple(_field(obs, "tricks_won")) == tuple(self.tricks)
        own = obs.seat == bidder
        assert _field(obs, "discard") == (self.discard if own else None)
        assert _field(obs, "widow") == (self.widow[0] if own else None)

    def trick_winner(self) -> int:
        lead = self.trick[0][1]
        trumps = [(seat, t) for seat, t in self.trick if self.is_trump(t)]
        if trumps:
            return max(trumps, key=lambda p: self.rank(p[1], -1))[0]
        suit = self.led_suit(lead)
        return max(
            ((seat, t) for seat, t in self.trick if self.follows(t, suit)),
            key=lambda p: self.rank(p[1], suit),
        )[0]

    def score(self, before: GameState, after: GameState) -> None:
        """docs/rules.md 1.12 and 1.13."""
        assert self.high is not None
        contract, bidder = self.high
        made = self.tricks[bidder] == 7 if contract == 21 else self.tricks[bidder] >= contract
        points = tuple(
            (contract if made else -contract) if s == bidder else self.tricks[s] for s in range(3)
        )
        self.expect_hand_end(before, after, HandEnd.TRICKS, points)
        winner = bidder if contract == 21 and made else None  # docs/rules.md 1.13 (1), M15
        self.expect_game_end(before, after, winner, f"contract {contract} by seat {bidder}")

    def expect_game_end(
        self, before: GameState, after: GameState, winner: int | None, what: str
    ) -> None:
        """docs/rules.md 1.13 at the end of a deal: no deal count ends the game (docs/rules.md 7.2).

        ``winner`` is the bidder of a made 21, who wins whatever the scores.
        """
        scores = after.scores
        top = max(scores)
        unique = scores.count(top) == 1
        if winner is None and unique and top >= 21:
            winner = scores.index(top)
        outcome = after.outcome()
        if winner is None:
            assert outcome is None and after.current_seat == CHANCE, (
                f"{what}: scores {scores}, nobody wins yet (docs/rules.md 1.13), got {outcome}"
            )
        else:
            assert outcome is not None and outcome.winner == winner, (
                f"{what}: scores {scores}, seat {winner} wins (docs/rules.md 1.13), got {outcome}"
            )
            assert after.current_seat == TERMINAL

    def expect_next(self, after: GameState, seat: int) -> None:
        assert after.current_seat == seat, f"seat {after.current_seat} to move, expected {seat}"

    def expect_hands(self, after: GameState, want: list[tuple[Tile, ...]]) -> None:
        if not self.strict:
            return
        got = hands_of(after)
        for s in range(3):
            assert same_tiles(got[s], want[s]), f"seat {s} holds {got[s]}, expect {want[s]}"


MODELS: Final[dict[str, type[Model]]] = {
    m.name: m for m in (PassingModel, StraightModel, DoublesModel, MoonModel)
}


# -- the driver ---------------------------------------------------------------------------------


@dataclass
class Table:
    """What has left the hands this deal: played tiles (public) and discards (the bidder's)."""

    played: list[Tile] = dataclasses.field(default_factory=list)
    discards: dict[int, list[Tile]] = dataclasses.field(default_factory=dict)

    def record(self, seat: int, action: Action) -> None:
        if isinstance(action, Play):
            self.played.append(action.tile)
        elif isinstance(action, Discard) and action.tile is not None:
            self.discards.setdefault(seat, []).append(action.tile)


_INDICES: Final = {name: {t.index for t in TILE_SETS.get(name, DOUBLE_SIX)} for name in HAND_SIZES}


def check_tiles(config: Config, state: GameState, table: Table) -> None:
    """Every tile of the set is in exactly one place (conservation)."""
    places = [t for hand in hands_of(state) for t in hand]
    places += stock(state)
    places += table.played
    for tiles in table.discards.values():
        places += tiles
    want = TILE_SETS.get(config.name, DOUBLE_SIX)
    if len(places) != len(want) or set(map(_INDEX, places)) != _INDICES[config.name]:
        counts = Counter(places)
        twice = [str(t) for t, n in counts.items() if n > 1]
        missing = [str(t) for t in want if t not in counts]
        raise AssertionError(
            f"deal {state.deal_number}: tiles not conserved; twice: {twice}, missing: {missing}, "
            f"foreign: {[str(t) for t in counts if t not in want]}"
        )


def check_legal(state: GameState, model: Model | None) -> tuple[Action, ...]:
    """Check the legal actions' form, and against ``model`` if one is given; return them."""
    legal = state.legal_actions()
    assert isinstance(legal, tuple)
    keys = [a.sort_key for a in legal]  # one key per action: comparing keys compares actions
    assert keys == sorted(keys), f"legal actions not in canonical order: {legal}"
    assert len(set(keys)) == len(keys), f"legal actions repeat: {legal}"
    seat = state.current_seat
    if seat == TERMINAL:
        assert legal == (), "a finished game has no legal actions"
        assert state.outcome() is not None
    elif seat == CHANCE:
        assert legal == (DEAL,), f"between hands only the deal is legal, got {legal}"
    else:
        assert 0 <= seat < state.game.num_players
        assert legal, "a seat to move has at least one legal action"
        assert DEAL not in legal
        want = model.expected_legal(state) if model is not None else None
        if want is not None:
            assert sorted(a.sort_key for a in want) == keys, (
                f"legal actions {[str(a) for a in legal]}, the rules allow "
                f"{sorted(str(a) for a in set(want))}"
            )
    return legal


def check_observations(state: GameState, table: Table, model: Model) -> None:
    """Each seat sees exactly its own hand and nothing hidden (docs/rules.md 'What each player
    sees')."""
    public = set(table.played)
    current = state.current_seat
    for seat in range(state.game.num_players):
        obs = state.observe(seat)
        hand = state.hand(seat)
        assert obs.seat == seat
        assert tuple(obs.hand) == tuple(sorted(hand)), f"seat {seat} sees {obs.hand}, holds {hand}"
        assert obs.current_seat == current
        assert obs.legal_actions == (state.legal_actions() if seat == current else ())
        assert obs.hand_sizes == tuple(len(h) for h in hands_of(state))
        assert obs.scores == state.scores
        assert obs.deal == state.deal_number
        allowed = public | set(hand) | set(table.discards.get(seat, ()))
        seen: list[Tile] = []
        _tiles_fast(obs, seen)
        if not allowed.issuperset(seen):
            leaks = [f"{t} at {where}" for t, where in walk_tiles(obs) if t not in allowed]
            raise AssertionError(f"seat {seat}'s observation shows hidden tiles: {leaks}")
        model.check_observation(obs)


def check_immutable(state: GameState) -> None:
    """Every field of the state is an immutable value (hashable all the way down)."""
    for name, value in state_fields(state).items():
        if name != "_log":  # a linked list of the whole log: hashing it would walk it all
            try:
                hash(value)
            except TypeError:
                raise AssertionError(f"state field {name} is mutable: {value!r}") from None


class Level(enum.Enum):
    """How much of the checking runs at every step of a game (see the module docstring)."""

    FULL = "full"
    """Everything, every step: every seat's observation and every state field included."""
    STRICT = "strict"
    """Every step: all but the observations (checked at hand ends) and the field types."""
    LIGHT = "light"
    """Every step: the legal actions' order and uniqueness, that apply mutates nothing, and the
    model's bookkeeping (turn order, hand ends, points). At the start and end of every hand:
    tile conservation and every seat's observation."""


def play_game(config: Config, seed: int, *, level: Level, replay: bool) -> GameState:
    """Play one random game from ``seed``, checking it at ``level``; return the final state.

    Args:
        replay: replay the game from its log at the end.
    """
    game = config.game
    full, light = level is Level.FULL, level is Level.LIGHT
    rng = random.Random(f"invariants/{config.id}/{seed}")
    state = game.new_game(seed)
    model = MODELS[config.name](game)
    model.strict = not light
    table = Table()
    model.on_deal(state)
    check_tiles(config, state, table)
    check_observations(state, table, model)
    check_immutable(state)
    applied: list[LogEntry] = []
    steps = 0
    while True:
        legal = check_legal(state, None if light else model)
        if not legal or (state.is_chance() and state.deal_number >= DEAL_CAP):
            break
        steps += 1
        assert steps <= STEP_CAP, f"seed {seed}: no end after {STEP_CAP} steps"
        seat = state.current_seat
        action = legal[rng.randrange(len(legal))]
        if full:
            check_immutable(state)
        before = snapshot(state)
        after = state.apply(action)
        if snapshot(state) != before:
            changed = [
                n
                for n, v in zip(slot_names(state), before, strict=True)
                if v is not _field(state, n)
            ]
            raise AssertionError(f"apply('{action}') changed fields {changed} of the old state")
        applied.append(LogEntry(seat, action))
        hand_over = len(after.hand_results) > len(state.hand_results) or after.is_terminal()
        if action == DEAL:
            assert after.deal_number == state.deal_number + 1
            table = Table()
            model.on_deal(after)
        else:
            assert after.deal_number == state.deal_number
            table.record(seat, action)
            model.step(state, seat, action, after)
        if not light or hand_over or action == DEAL:
            check_tiles(config, after, table)
        if full or hand_over:
            check_observations(after, table, model)
        state = after
    check_immutable(state)
    check_end(config, seed, state, applied, replay=replay)
    return state


def check_end(
    config: Config, seed: int, final: GameState, applied: list[LogEntry], *, replay: bool
) -> None:
    """The game is over with an outcome (or stopped at ``DEAL_CAP`` with nobody alone at the
    target), its log is what was played, and the log replays."""
    outcome = final.outcome()
    if outcome is None:
        assert final.is_chance() and final.deal_number >= DEAL_CAP, f"seed {seed}: no outcome"
        top = max(final.scores)
        assert top < config.game.target or final.scores.count(top) > 1, (
            f"seed {seed}: scores {final.scores} stopped at the cap, but someone had won"
        )
    else:
        assert outcome.scores == final.scores
        assert outcome.sides == config.game.sides
    history = final.history
    assert list(history) == applied, "the log differs from the actions applied"
    if not replay:
        return
    again = config.game.new_game(seed)
    for i, entry in enumerate(history):
        assert again.current_seat == entry.seat, f"replay step {i}: {entry} out of turn"
        again = again.apply(entry.action)
    assert again.outcome() == outcome
    a, b = state_fields(final), state_fields(again)
    a.pop("_legal", None)
    b.pop("_legal", None)
    log_a, log_b = a.pop("_log", None), b.pop("_log", None)
    assert a == b, f"seed {seed}: the replay ends in another state"
    assert (log_a is None) == (log_b is None)
    assert again.history == history


# -- the tests ----------------------------------------------------------------------------------


def test_configurations_cover_the_registry() -> None:
    """Each registered game yields at least one configuration, with the players docs/rules.md
    fixes."""
    assert {c.name for c in CONFIGS} == set(GAMES)
    for config in CONFIGS:
        assert config.name in MODELS, f"no model of {config.name} in this test module"
        assert config.game.num_players in HAND_SIZES[config.name]
        if config.name == "passing":
            _check_passing_target(config.game)
        else:
            assert config.game.target == TARGETS[config.name](config.game)
    for name in GAMES:
        counts = sorted({c.game.num_players for c in CONFIGS if c.name == name})
        assert counts == sorted(HAND_SIZES[name]), f"{name}: player counts {counts}"
    teams = {c.name for c in CONFIGS if len(c.game.sides) != c.game.num_players}
    # docs/rules.md 2.1 and 3.1 allow partnerships; D11: Doubles has none; Moon is 3 players alone.
    assert teams == {"passing", "straight"} & set(GAMES), f"partnership games: {teams}"
    for config in CONFIGS:
        if len(config.game.sides) != config.game.num_players:
            assert config.game.sides == ((0, 2), (1, 3)), "docs/rules.md 0.2: A+C against B+D"


@pytest.mark.slow
@pytest.mark.parametrize(("config", "start"), CHUNKS)
def test_random_games(config: Config, start: int) -> None:
    steps = 0
    for seed in range(start, start + CHUNK):
        if steps < FULL_CHECK_STEPS:
            level = Level.FULL
        elif steps < STRICT_CHECK_STEPS:
            level = Level.STRICT
        else:
            level = Level.LIGHT
        replay = level is Level.FULL or seed % REPLAY_EVERY == 0
        steps += len(play_game(config, seed, level=level, replay=replay).history)


@pytest.mark.parametrize("config", CONFIGS, ids=[c.id for c in CONFIGS])
@settings(max_examples=HYPOTHESIS_EXAMPLES)
@given(seed=st.integers(min_value=0, max_value=2**63 - 1))
def test_random_games_any_seed(config: Config, seed: int) -> None:
    """Property form: any seed, every check at every step."""
    play_game(config, seed, level=Level.FULL, replay=True)


def _passing_config() -> Config:
    return next(c for c in CONFIGS if c.name == "passing" and c.game.num_players == 2)


class _LeakyPassingState(PassingState):
    """A broken engine for the meta-tests: every observation shows seat 1's first tile."""

    __slots__ = ()

    def observe(self, seat: int) -> PassingObservation:
        peek = LogEntry(1, Play(self.hands[1][0], "E"))
        return dataclasses.replace(super().observe(seat), history=(peek,))


def test_observation_check_catches_a_leak() -> None:
    state = _passing_config().game.new_game(3, first_seat=0)
    leaky = _LeakyPassingState.__new__(_LeakyPassingState)
    for name, value in state_fields(state).items():
        object.__setattr__(leaky, name, value)
    with pytest.raises(AssertionError, match=f"hidden tiles.*{state.hand(1)[0]}"):
        check_observations(leaky, Table(), Model.__new__(Model))
    with pytest.raises(AssertionError, match="plain data"):
        list(walk_tiles(state))


def test_conservation_check_catches_a_lost_tile() -> None:
    config = _passing_config()
    state = config.game.new_game(3)
    check_tiles(config, state, Table())
    with pytest.raises(AssertionError, match="not conserved"):
        check_tiles(config, state, Table(played=[state.hand(0)[0]]))


def test_score_check_catches_a_wrong_formula() -> None:
    """Seat 0 goes out against 1-0 and 2-0: docs/rules.md 2.7 gives it 3 - 0 = 3 points."""
    config = _passing_config()
    rest = [t for t in DOUBLE_SIX if str(t) not in ("6-5", "1-0", "2-0", "6-4")]
    before = config.game.from_position(
        hands=[["6-5"], ["1-0", "2-0"]], boneyard=[str(t) for t in rest], line=["4-6"], seat=0
    )
    after = before.apply(Play(Tile(6, 5), "E"))
    model = PassingModel(config.game)
    assert model.hand_points(after) == (3, 0)
    model.expect_hand_end(before, after, HandEnd.DOMINO, (3, 0))
    with pytest.raises(AssertionError, match="formula gives"):
        model.expect_hand_end(before, after, HandEnd.DOMINO, (4, 0))
