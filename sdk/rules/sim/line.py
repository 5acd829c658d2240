"""Simulators of the line games: what they share, Passing (docs/rules.md 2) and Doubles (4).

Straight's (3) is in :mod:`.straight`. Each keeps its layout as the few numbers play depends
on, changed in place, and records on the undo stack what :meth:`~.base.Sim.pop` needs: the
small immutable values it replaced (the ends, the scores, the cached legal actions) and where a
tile left or entered a hand. The boneyard is the engine's list with a cursor, so a draw and its
undo move the cursor only.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, Final, Self

from ..actions import DRAW, PASS, Action, Draw, Play
from ..doubles import DoublesObservation, DoublesState
from ..linegame import LineGameState
from ..passing import PassingObservation, PassingState
from ..state import Game, Observation
from ..tiles import DOUBLE_SIX, Tile
from .base import Sim, engine_common, insert_tile, remove_tile, unique_lowest

_ENDS: Final = (None, "W", "E", "N", "S", *(str(n) for n in range(7)))
PLAYS: Final[dict[str | None, tuple[Play, ...]]] = {
    end: tuple(Play(t, end) for t in DOUBLE_SIX) for end in _ENDS
}
"""``PLAYS[end][tile.index]``: every play made once, so move generation allocates no action."""
OPENING: Final = PLAYS[None]

RESERVE: Final = 2
"""Passing and Doubles never draw the last two tiles of the boneyard (docs/rules.md 2.2, 4.2)."""


class LineSim(Sim):
    """What the line games share: the boneyard with its cursor, going round the table."""

    __slots__ = ("stock", "top")

    stock: tuple[Tile, ...]
    top: int
    """Tiles drawn from ``stock`` since the simulation began."""

    def _init_line(self, state: LineGameState) -> None:
        self._init_common(state)
        self.stock = state.boneyard
        self.top = 0

    @classmethod
    def _line_parts(
        cls,
        game: Game,
        seat: int,
        hands: Sequence[Sequence[Tile]],
        scores: Sequence[int],
        boneyard: Sequence[Tile],
    ) -> Self:
        """A simulator with the common fields set, for ``from_parts``."""
        sim = cls.__new__(cls)
        sim._set_common(game, seat, hands, scores)
        sim.stock = tuple(boneyard)
        sim.top = 0
        return sim

    @staticmethod
    def _engine_line(state: LineGameState) -> tuple[Any, ...]:
        """The start of a line game's snapshot from the engine's fields."""
        seat, hands, scores, winner = engine_common(state)
        return seat, hands, state.boneyard, scores, winner

    @property
    def boneyard(self) -> tuple[Tile, ...]:
        """The undrawn tiles, the next one drawn first."""
        return self.stock[self.top :]

    def _draw(self, hand: list[Tile]) -> Tile:
        tile = self.stock[self.top]
        self.top += 1
        insert_tile(hand, tile)
        return tile


# -- the Passing Game --------------------------------------------------------------------------


class PassingSim(LineSim):
    """The Passing Game: voluntary draws and passes; a hand ends by domino, block or passes."""

    __slots__ = ("ends", "line", "passes")

    game_name: ClassVar[str] = "passing"
    ends: tuple[int, int] | None
    line: deque[tuple[int, int]]
    passes: int

    def __init__(self, state: PassingState) -> None:
        self._init_line(state)
        self.ends = state.ends
        self.line = deque(state.line)
        self.passes = state.passes

    @classmethod
    def from_parts(
        cls,
        game: Game,
        *,
        seat: int,
        hands: Sequence[Sequence[Tile]],
        scores: Sequence[int],
        boneyard: Sequence[Tile],
        line: Sequence[tuple[int, int]],
        passes: int,
    ) -> PassingSim:
        """A position mid-deal from its parts (a search's sampled deal), as the engine's
        ``from_position`` would build it, without its checks."""
        sim = cls._line_parts(game, seat, hands, scores, boneyard)
        sim.line = deque(line)
        sim.ends = (line[0][0], line[-1][1]) if line else None
        sim.passes = passes
        return sim

    @classmethod
    def from_observation(
        cls, observation: Observation, hands: Sequence[Sequence[Tile]], stock: Sequence[Tile]
    ) -> PassingSim:
        obs = observation
        assert isinstance(obs, PassingObservation)
        return cls.from_parts(
            obs.game,
            seat=obs.current_seat,
            hands=hands,
            scores=obs.scores,
            boneyard=stock,
            line=obs.line,
            passes=obs.passes,
        )

    @staticmethod
    def snapshot_of(state: PassingState) -> tuple[Any, ...]:
        return (*LineSim._engine_line(state), state.line, state.ends, state.passes)

    def _compute_legal(self) -> tuple[Action, ...]:
        seat = self.seat
        if seat < 0:
            return ()
        hand = self.hands[seat]
        ends = self.ends
        if ends is None:
            return tuple(OPENING[t.index] for t in hand)
        west, east = ends
        actions: list[Action] = []
        on_east, on_west = PLAYS["E"], PLAYS["W"]
        for t in hand:
            high, low = t.high, t.low
            if high == east or low == east:
                actions.append(on_east[t.index])
            if high == west or low == west:
                actions.append(on_west[t.index])
        if len(self.stock) - self.top > RESERVE:
            actions.append(DRAW)
        actions.append(PASS)
        return tuple(actions)

    def push(self, action: Action) -> None:
        seat = self.seat
        hand = self.hands[seat]
        record = [action, seat, self.passes, self.ends, self.scores, self.winner, self._legal, -1]
        self._undo.append(record)
        self._legal = None
        if type(action) is Play:
            tile = action.tile
            record[7] = remove_tile(hand, tile)
            ends = self.ends
            if ends is None:
                self.line.append((tile.low, tile.high))
                self.ends = (tile.low, tile.high)
            elif action.end == "W":
                shown = ends[0]
                other = tile.low if tile.high == shown else tile.high
                self.line.appendleft((other, shown))
                self.ends = (other, ends[1])
            else:
                shown = ends[1]
                other = tile.low if tile.high == shown else tile.high
                self.line.append((shown, other))
                self.ends = (ends[0], other)
            self.passes = 0
            if not hand:
                self._score()
                return
        elif type(action) is Draw:
            self._draw(hand)
            self.passes = 0
        else:
            self.passes += 1
        if self._is_dead() or self.passes == self.players:
            self._score()
        else:
            self.seat = (seat + 1) % self.players

    def pop(self) -> Action:
        action, seat, passes, ends, scores, winner, legal, at = self._undo.pop()
        self.seat = seat
        self.passes = passes
        self.scores = scores
        self.winner = winner
        self._legal = legal
        if type(action) is Play:
            self.hands[seat].insert(at, action.tile)
            if ends is not None and action.end == "W":
                self.line.popleft()
            else:
                self.line.pop()
        elif type(action) is Draw:
            self.top -= 1
            self.hands[seat].remove(self.stock[self.top])
        self.ends = ends
        action_: Action = action
        return action_

    def _is_dead(self) -> bool:
        """docs/rules.md 2.6 b: nobody holds a match and the boneyard holds 2 or fewer tiles."""
        ends = self.ends
        if ends is None or len(self.stock) - self.top > RESERVE:
            return False
        west, east = ends
        return not any(t.has(west) or t.has(east) for hand in self.hands for t in hand)

    def _score(self) -> None:
        """docs/rules.md 2.7: the unique lowest side scores (others' total) - (own total)."""
        totals = self._side_totals()
        winner = unique_lowest(totals)
        if winner is None:
            self._end_hand(None, 0)
        else:
            self._end_hand(winner, sum(totals) - 2 * totals[winner])

    def snapshot(self) -> tuple[Any, ...]:
        return (
            self.seat,
            tuple(map(tuple, self.hands)),
            self.boneyard,
            self.scores,
            self.winner,
            tuple(self.line),
            self.ends,
            self.passes,
        )


# -- Doubles -----------------------------------------------------------------------------------


class DoublesSim(LineSim):
    """Doubles: every double a spinner, numbers locked until their double is laid."""

    __slots__ = ("counts", "drawn", "open_mask", "placed", "unlocked_mask")

    game_name: ClassVar[str] = "doubles"
    counts: tuple[int, ...]
    """Open ends showing each number 0-6."""
    open_mask: int
    unlocked_mask: int
    placed: list[Tile]
    drawn: Tile | None
    """A tile the mover just drew and must play at once (docs/rules.md D5)."""

    def __init__(self, state: DoublesState) -> None:
        self._init_line(state)
        self._set_layout(state.placed, state.ends, state.unlocked, state.drawn)

    @classmethod
    def from_parts(
        cls,
        game: Game,
        *,
        seat: int,
        hands: Sequence[Sequence[Tile]],
        scores: Sequence[int],
        boneyard: Sequence[Tile],
        placed: Sequence[Tile],
        ends: Sequence[int],
        unlocked: Iterable[int],
        drawn: Tile | None,
    ) -> DoublesSim:
        """A position mid-deal from its parts (a search's sampled deal), as the engine's
        ``from_position`` would build it, without its checks."""
        sim = cls._line_parts(game, seat, hands, scores, boneyard)
        sim._set_layout(placed, ends, unlocked, drawn)
        return sim

    @classmethod
    def from_observation(
        cls, observation: Observation, hands: Sequence[Sequence[Tile]], stock: Sequence[Tile]
    ) -> DoublesSim:
        obs = observation
        assert isinstance(obs, DoublesObservation)
        return cls.from_parts(
            obs.game,
            seat=obs.current_seat,
            hands=hands,
            scores=obs.scores,
            boneyard=stock,
            placed=obs.placed,
            ends=obs.ends,
            unlocked=obs.unlocked,
            drawn=obs.drawn,
        )

    @staticmethod
    def snapshot_of(state: DoublesState) -> tuple[Any, ...]:
        layout = (state.placed, state.ends, state.unlocked, state.drawn)
        return (*LineSim._engine_line(state), *layout)

    def _set_layout(
        self,
        placed: Sequence[Tile],
        ends: Sequence[int],
        unlocked: Iterable[int],
        drawn: Tile | None,
    ) -> None:
        self.placed = list(placed)
        self.counts = tuple(ends.count(n) for n in range(7))
        self.open_mask = sum(1 << n for n in set(ends))
        self.unlocked_mask = sum(1 << n for n in unlocked)
        self.drawn = drawn

    @property
    def ends(self) -> tuple[int, ...]:
        """The numbers the open ends show, sorted."""
        return tuple(n for n in range(7) for _ in range(self.counts[n]))

    @property
    def unlocked(self) -> frozenset[int]:
        """The numbers whose double is laid (docs/rules.md 4.5)."""
        return frozenset(n for n in range(7) if self.unlocked_mask >> n & 1)

    def _compute_legal(self) -> tuple[Action, ...]:
        seat = self.seat
        if seat < 0:
            return ()
        hand = self.hands[seat]
        if not self.placed:
            top = next(t for t in reversed(hand) if t.is_double)
            return (OPENING[top.index],)
        opened = self.open_mask
        free = opened & self.unlocked_mask
        actions: list[Action] = []
        for t in (self.drawn,) if self.drawn is not None else hand:
            high, low = t.high, t.low
            if high == low:
                if opened >> high & 1:
                    actions.append(_ON_NUMBER[high][t.index])
            else:
                if free >> low & 1:
                    actions.append(_ON_NUMBER[low][t.index])
                if free >> high & 1:
                    actions.append(_ON_NUMBER[high][t.index])
        if actions:
            return tuple(actions)
        return (DRAW,) if len(self.stock) - self.top > RESERVE else (PASS,)

    def push(self, action: Action) -> None:
        seat = self.seat
        hand = self.hands[seat]
        record = [
            action,
            seat,
            self.counts,
            self.open_mask,
            self.unlocked_mask,
            self.drawn,
            self.scores,
            self.winner,
            self._legal,
            -1,
        ]
        self._undo.append(record)
        self._legal = None
        if type(action) is Play:
            tile = action.tile
            record[9] = remove_tile(hand, tile)
            self._place(tile, action.end)
            self.drawn = None
            if not hand:
                # docs/rules.md 4.8, D10: going out scores every other hand's pips.
                self._end_hand(seat, sum(t.pips for h in self.hands for t in h))
                return
        elif type(action) is Draw:
            tile = self._draw(hand)
            if self._can_place(tile):
                self.drawn = tile
                return
        if self._blocked():
            totals = self._side_totals()
            winner = unique_lowest(totals)
            self._end_hand(winner, 0 if winner is None else sum(totals) - totals[winner])
        else:
            self.seat = (seat + 1) % self.players

    def pop(self) -> Action:
        (action, seat, counts, opened, unlocked, drawn, scores, winner, legal, at) = (
            self._undo.pop()
        )
        self.seat = seat
        self.counts = counts
        self.open_mask = opened
        self.unlocked_mask = unlocked
        self.drawn = drawn
        self.scores = scores
        self.winner = winner
        self._legal = legal
        if type(action) is Play:
            self.hands[seat].insert(at, action.tile)
            self.placed.pop()
        elif type(action) is Draw:
            self.top -= 1
            self.hands[seat].remove(self.stock[self.top])
        action_: Action = action
        return action_

    def _place(self, tile: Tile, end: str | None) -> None:
        """Lay ``tile`` (docs/rules.md 4.4): on the end showing ``end``, or as the opening
        double."""
        counts = list(self.counts)
        number = tile.high
        if end is None:
            counts[number] = 4
            self.open_mask = self.unlocked_mask = 1 << number
        else:
            shown = int(end)
            if tile.is_double:
                counts[shown] += 2
                self.unlocked_mask |= 1 << shown
            else:
                counts[shown] -= 1
                other = tile.low if number == shown else number
                counts[other] += 1
                self.open_mask |= 1 << other
                if not counts[shown]:
                    self.open_mask &= ~(1 << shown)
        self.counts = tuple(counts)
        self.placed.append(tile)

    def _can_place(self, tile: Tile) -> bool:
        if tile.is_double:
            return bool(self.open_mask >> tile.high & 1)
        free = self.open_mask & self.unlocked_mask
        return bool((free >> tile.high | free >> tile.low) & 1)

    def _blocked(self) -> bool:
        """docs/rules.md 4.7: the boneyard holds 2 or fewer and nobody has a legal play."""
        if len(self.stock) - self.top > RESERVE:
            return False
        return not any(self._can_place(t) for hand in self.hands for t in hand)

    def snapshot(self) -> tuple[Any, ...]:
        return (
            self.seat,
            tuple(map(tuple, self.hands)),
            self.boneyard,
            self.scores,
            self.winner,
            tuple(self.placed),
            self.ends,
            self.unlocked,
            self.drawn,
        )


_ON_NUMBER: Final = tuple(PLAYS[str(n)] for n in range(7))
"""``_ON_NUMBER[n][tile.index]``: Doubles' play of the tile on an end showing n (D12)."""
