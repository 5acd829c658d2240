"""The simulator of Straight Dominoes (docs/rules.md 3): a spinner layout and All-Fives counts.

The layout is kept as the few numbers play depends on (:data:`Layout`), each interned once as a
:class:`Spot` with its open ends, count and the layouts each play leads to, so a play in a
search that revisits a deal's layouts is a dictionary lookup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Final

from ..actions import DRAW, PASS, Action, Draw, Play
from ..state import Game, Observation
from ..straight import StraightObservation, StraightState
from ..straight_layout import StraightLayout
from ..tiles import DOUBLE_SIX, Tile
from .base import remove_tile, unique_lowest
from .line import OPENING, PLAYS, LineSim

Layout = tuple[Any, ...] | None
"""Straight's layout as play needs it: None before the opening; ``(-1, west, east)`` for a line;
``(n, outer W, E, N, S, double W, E, N, S)`` with a spinner n, ``-1`` for an empty arm, each
flag whether the arm ends in a crosswise double."""

_ARM: Final = {"W": 0, "E": 1, "N": 2, "S": 3}
_END_CODE: Final = {None: 0, "W": 1, "E": 2, "N": 3, "S": 4}
_NUMBERS_MASK: Final = tuple((1 << t.high) | (1 << t.low) for t in DOUBLE_SIX)


class Spot:
    """One Straight layout, interned: its open ends, count, and the layouts each play leads to.

    A game's layouts repeat across playouts, so the geometry and the count of each are worked
    out once and every later play is one dictionary lookup.
    """

    __slots__ = ("_after", "count", "ends", "key", "mask", "plays")

    key: Layout
    ends: tuple[tuple[str, int], ...]
    """The open ends as (name, number), sorted by name: the order of legal actions."""
    count: int
    """The open-end total of docs/rules.md 3.5."""
    mask: int
    """The numbers the open ends show, as bits."""
    plays: tuple[tuple[tuple[Play, ...], int], ...]
    """``ends`` with each name replaced by its row of :data:`.line.PLAYS`."""
    _after: dict[int, Spot]

    def __init__(self, key: Layout) -> None:
        self.key = key
        self.ends, self.count = ends, _ = info(key)
        self.plays = tuple((PLAYS[name], number) for name, number in ends)
        mask = 0
        for _, number in ends:
            mask |= 1 << number
        self.mask = mask
        self._after = {}

    def place(self, tile: Tile, end: str | None) -> Spot:
        """Return the layout after ``tile`` is laid on ``end``."""
        code = tile.index * 5 + _END_CODE[end]
        found = self._after.get(code)
        if found is None:
            found = self._after[code] = spot(place(self.key, tile, end))
        return found


_SPOTS: dict[Layout, Spot] = {}
SPOT_CACHE: Final = 5_000
"""Layouts kept; past this the cache starts again, so a long-lived bot's memory stays bounded
(about 6 MiB) while one search, which revisits the layouts of one deal, still hits it."""


def spot(layout: Layout) -> Spot:
    """Return the :class:`Spot` of ``layout`` (one per layout while the cache holds it)."""
    found = _SPOTS.get(layout)
    if found is None:
        if len(_SPOTS) >= SPOT_CACHE:
            _SPOTS.clear()
        found = _SPOTS[layout] = Spot(layout)
    return found


def place(layout: Layout, tile: Tile, end: str | None) -> Layout:
    """Return the layout after ``tile`` is laid on ``end`` (the geometry of docs/rules.md 3.4)."""
    double = tile.is_double
    if layout is None:
        if double:
            return (tile.high, -1, -1, -1, -1, False, False, False, False)
        return (-1, tile.low, tile.high)
    if layout[0] < 0:
        _, west, east = layout
        if end == "W":
            if double:
                return (west, -1, east, -1, -1, False, False, False, False)
            return (-1, tile.other(west), east)
        if double:
            return (east, west, -1, -1, -1, False, False, False, False)
        return (-1, west, tile.other(east))
    arm = _ARM[end or ""]
    values = list(layout)
    outer = values[1 + arm]
    shown = layout[0] if outer < 0 else outer
    values[1 + arm] = tile.other(shown)
    values[5 + arm] = double
    return tuple(values)


def info(layout: Layout) -> tuple[tuple[tuple[str, int], ...], int]:
    """Return the open ends of ``layout`` sorted by name, and its count (docs/rules.md 3.5)."""
    if layout is None:
        return (), 0
    if layout[0] < 0:
        _, west, east = layout
        return (("E", east), ("W", west)), west + east
    n, out_w, out_e, out_n, out_s, dbl_w, dbl_e, dbl_n, dbl_s = layout
    west = n if out_w < 0 else out_w
    east = n if out_e < 0 else out_e
    count = (out_w + out_w if dbl_w else out_w) if out_w >= 0 else 0
    if out_e >= 0:
        count += out_e + out_e if dbl_e else out_e
    if out_w < 0 or out_e < 0:
        # N and S are not open yet; the spinner counts both its halves (3.5).
        return (("E", east), ("W", west)), count + n + n
    if out_n >= 0:
        count += out_n + out_n if dbl_n else out_n
    if out_s >= 0:
        count += out_s + out_s if dbl_s else out_s
    north = n if out_n < 0 else out_n
    south = n if out_s < 0 else out_s
    return (("E", east), ("N", north), ("S", south), ("W", west)), count


def layout_of(layout: StraightLayout) -> Layout:
    """Return the :data:`Layout` of the engine's ``StraightLayout``."""
    if layout.spinner is None:
        line = layout.line
        return (-1, line[0][0], line[-1][1]) if line else None
    arms = layout.arms
    outers = tuple(arm[-1][1] if arm else -1 for arm in arms)
    doubles = tuple(bool(arm) and arm[-1][0] == arm[-1][1] for arm in arms)
    return (layout.spinner, *outers, *doubles)


class StraightSim(LineSim):
    """Straight Dominoes: compulsory play, draws until a tile fits, All-Fives counts in play."""

    __slots__ = ("spot",)

    game_name: ClassVar[str] = "straight"
    spot: Spot

    def __init__(self, state: StraightState) -> None:
        self._init_line(state)
        self.spot = spot(layout_of(state.layout))

    @classmethod
    def from_parts(
        cls,
        game: Game,
        *,
        seat: int,
        hands: Sequence[Sequence[Tile]],
        scores: Sequence[int],
        boneyard: Sequence[Tile],
        layout: StraightLayout,
    ) -> StraightSim:
        """A position mid-deal from its parts (a search's sampled deal), as the engine's
        ``from_position`` would build it, without its checks."""
        sim = cls._line_parts(game, seat, hands, scores, boneyard)
        sim.spot = spot(layout_of(layout))
        return sim

    @classmethod
    def from_observation(
        cls, observation: Observation, hands: Sequence[Sequence[Tile]], stock: Sequence[Tile]
    ) -> StraightSim:
        obs = observation
        assert isinstance(obs, StraightObservation)
        return cls.from_parts(
            obs.game,
            seat=obs.current_seat,
            hands=hands,
            scores=obs.scores,
            boneyard=stock,
            layout=obs.layout,
        )

    @staticmethod
    def snapshot_of(state: StraightState) -> tuple[Any, ...]:
        ends = tuple(sorted(state.layout.ends))
        layout = layout_of(state.layout), (ends, state.layout.count)
        return (*LineSim._engine_line(state), *layout)

    @property
    def layout(self) -> Layout:
        return self.spot.key

    @property
    def count(self) -> int:
        """The open-end total of docs/rules.md 3.5."""
        return self.spot.count

    def count_after(self, tile: Tile, end: str | None) -> int:
        """The count once ``tile`` is laid on ``end`` (what the greedy bot weighs)."""
        return self.spot.place(tile, end).count

    def _compute_legal(self) -> tuple[Action, ...]:
        seat = self.seat
        if seat < 0:
            return ()
        hand = self.hands[seat]
        if self.spot.key is None:
            return tuple(OPENING[t.index] for t in hand)
        ends = self.spot.plays
        plays = tuple(row[t.index] for t in hand for row, v in ends if t.high == v or t.low == v)
        if plays:
            return plays
        return (DRAW,) if self.top < len(self.stock) else (PASS,)

    def push(self, action: Action) -> None:
        seat = self.seat
        hand = self.hands[seat]
        record = [action, seat, self.spot, self.scores, self.winner, self._legal, -1]
        self._undo.append(record)
        self._legal = None
        if type(action) is Play:
            tile = action.tile
            record[6] = remove_tile(hand, tile)
            after = self.spot = self.spot.place(tile, action.end)
            count = after.count
            if count and count % 5 == 0:
                self._add_points(self.side[seat], count)
                if self.winner is not None:
                    return  # docs/rules.md 3.10, S12: the game ends at once.
            if not hand:
                self._score_domino()
                return
        elif type(action) is Draw:
            self._draw(hand)
            if self.top < len(self.stock) or not self._blocked():
                return  # docs/rules.md 3.6: the seat keeps its turn after a draw.
            self._score_block()
            return
        if self.top == len(self.stock) and self._blocked():
            self._score_block()
        else:
            self.seat = (seat + 1) % self.players

    def pop(self) -> Action:
        action, seat, before, scores, winner, legal, at = self._undo.pop()
        self.seat = seat
        self.spot = before
        self.scores = scores
        self.winner = winner
        self._legal = legal
        if type(action) is Play:
            self.hands[seat].insert(at, action.tile)
        elif type(action) is Draw:
            self.top -= 1
            self.hands[seat].remove(self.stock[self.top])
        action_: Action = action
        return action_

    def _blocked(self) -> bool:
        """docs/rules.md 3.8: nobody holds a tile that fits (the caller checks the boneyard)."""
        mask = self.spot.mask
        return not any(_NUMBERS_MASK[t.index] & mask for hand in self.hands for t in hand)

    def _score_domino(self) -> None:
        """docs/rules.md 3.9: the side going out scores round5 of the opponents' pips."""
        side = self.side[self.seat]
        totals = self._side_totals()
        self._end_hand(side, _round5(sum(totals) - totals[side]))

    def _score_block(self) -> None:
        """docs/rules.md 3.9: the unique lowest side scores round5 of the others' pips."""
        totals = self._side_totals()
        winner = unique_lowest(totals)
        if winner is None:
            self._end_hand(None, 0)
        else:
            self._end_hand(winner, _round5(sum(totals) - totals[winner]))

    def snapshot(self) -> tuple[Any, ...]:
        return (
            self.seat,
            tuple(map(tuple, self.hands)),
            self.boneyard,
            self.scores,
            self.winner,
            self.spot.key,
            (self.spot.ends, self.spot.count),
        )


def _round5(n: int) -> int:
    """docs/rules.md 0.6: the nearest multiple of 5, halfway up (``n >= 0``)."""
    return 5 * ((n + 2) // 5)
