"""Straight Dominoes: All-Fives scoring on a spinner layout, to 250 (docs/rules.md section 3).

Decisions taken in docs/rules.md and followed here: the spinner is the first double played, as
opener or later (S1); its long sides W and E come first, N and S open once W and E each hold a tile
(S2); the count follows 3.5 exactly, empty arms adding nothing but the 2n term (S3, X2); a count
above 0 that is a multiple of 5 scores itself at once, the opening and the last tile included (S4,
S5); play is compulsory (S6); a seat that cannot play draws one tile per ``draw`` action until a
drawn tile fits, which it must then play, or the boneyard is empty (S7), and every tile can be drawn
(S8); pass only when nothing fits and the boneyard is empty; a block ends the hand at once (0.7);
hands are scored with :func:`round5` of the opponents' pips, never subtracting (S9-S11); the game
ends the moment a side reaches 250, mid-hand included (S12, X3); later hands rotate the opener
(the starter of 3.3, S13).

>>> game = StraightGame(players=2)
>>> state = game.new_game(seed=7)
>>> state = state.apply(state.legal_actions()[0])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import floor
from typing import Any, ClassVar, Final

from .actions import DEAL, DRAW, LINE_ENDS, PASS, Action, Deal, Draw, Pass, Play
from .errors import GameOptionError, PositionError
from .linegame import LineGame, LineGameState, LineObservation, OpenEnd
from .slots import slot_setter
from .state import HandEnd
from .straight_layout import StraightLayout, layout_from
from .tiles import DOUBLE_SIX, Tile

TARGET: Final = 250
"""docs/rules.md 3.10: the first side to reach 250 or more wins."""

_PLAYS: Final[tuple[dict[str | None, Play], ...]] = tuple(
    {end: Play(tile, end) for end in (None, *LINE_ENDS)} for tile in DOUBLE_SIX
)
"""Every play of every tile, built once so move generation allocates nothing."""


def round5(n: int | float | Fraction) -> int:
    """Round ``n >= 0`` to the nearest multiple of 5, a halfway value up (docs/rules.md 0.6, S9).

    >>> [round5(n) for n in (2, 3, 7, 8, 12, 13)], round5(Fraction(5, 2))
    ([0, 5, 5, 10, 10, 15], 5)
    """
    if isinstance(n, int):
        return 5 * ((n + 2) // 5)
    return 5 * floor(n / 5 + Fraction(1, 2))


# -- the game ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StraightGame(LineGame):
    """Straight Dominoes for 2-4 players; 4 may play as partnerships A+C against B+D."""

    name: ClassVar[str] = "straight"
    title: ClassVar[str] = "Straight Dominoes"
    HAND_SIZES: ClassVar[dict[int, int]] = {2: 7, 3: 7, 4: 7}

    players: int = 2
    partnerships: bool = False

    def __post_init__(self) -> None:
        if self.players not in (2, 3, 4):
            raise GameOptionError(f"straight: players must be 2, 3 or 4, got {self.players}")
        if self.partnerships and self.players != 4:
            raise GameOptionError(f"straight: partnerships need 4 players, got {self.players}")

    @property
    def num_players(self) -> int:
        return self.players

    @property
    def sides(self) -> tuple[tuple[int, ...], ...]:
        if self.partnerships:
            return ((0, 2), (1, 3))
        return tuple((s,) for s in range(self.players))

    @property
    def target(self) -> int:
        return TARGET

    def options(self) -> dict[str, Any]:
        return {"players": self.players, "partnerships": self.partnerships}

    def new_game(self, seed: int, *, first_seat: int | None = None) -> StraightState:
        return StraightState._initial(self, seed, first_seat)

    def from_position(self, **position: Any) -> StraightState:
        """Build a position.

        The fields every line game shares: ``hands`` (one list of tiles per seat, e.g.
        ``[["6-4", "5-5"], ["2-1"]]``), ``boneyard`` (the undrawn tiles in draw order, the first
        drawn next; empty by default), ``seat`` (to move, 0 by default), ``opener`` (the seat
        that opened this deal, ``seat`` by default), ``scores`` (per side, zeros by default),
        ``seed`` (fixes the shuffles of later deals), ``deal`` (the 1-based number of this deal)
        and ``deals`` (the shuffles S of the next deals, docs/rules.md 0.3, each every tile once;
        deals past the list come from ``seed``).

        Straight's own fields:
            line: before any double is down, the tiles from W to E, each written as laid,
                west number first: ``["1-4", "4-6"]`` means W shows 1 and E shows 6.
            spinner: once a double is down, the spinner's number (``5``) or tile (``"5-5"``).
            arms: with ``spinner``, a mapping from ``"W"``, ``"E"``, ``"N"``, ``"S"`` to the
                tiles of that arm from the spinner outward, inner number first:
                ``{"W": ["5-3", "3-3"], "E": ["5-1"]}``; missing arms are empty.

        Omit ``line`` and ``spinner`` for a hand whose opening tile is still to be played. In-play
        points of the hand so far are not part of a position: its :class:`HandResult` counts
        those scored from the position on.

        Raises:
            PositionError: the position is inconsistent; the message names the field.
        """
        return StraightState._from_position(self, **position)


@dataclass(frozen=True, slots=True)
class StraightObservation(LineObservation):
    """A seat's view: the public layout, besides the common fields (docs/rules.md 3.11)."""

    layout: StraightLayout
    """The tiles on the table; ``layout.count`` is the count of docs/rules.md 3.5."""

    @property
    def open_ends(self) -> tuple[OpenEnd, ...]:
        return self.layout.open_ends


class StraightState(LineGameState):
    """A position of Straight Dominoes."""

    __slots__ = ("layout",)

    _builds_sorted = True
    """Hands are sorted and :func:`_fitting` lists each tile's plays by end name."""

    game: StraightGame
    layout: StraightLayout

    @property
    def open_ends(self) -> tuple[OpenEnd, ...]:
        return self.layout.open_ends

    def _start_layout(self) -> None:
        self.layout = _EMPTY

    def _first_to_act(self) -> int:
        return self.opener

    def _compute_legal(self) -> list[Action]:
        seat = self.seat
        if seat < 0:
            return [] if self.winner is not None else [DEAL]
        hand = self.hands[seat]
        ends = self.layout.ends
        if not ends:
            return [_PLAYS[t.index][None] for t in hand]
        try:
            fitting = _FITTING[ends]
        except KeyError:
            fitting = _FITTING[ends] = _fitting(ends)
        plays: list[Action] = [play for t in hand for play in fitting[t.index]]
        if plays:
            return plays
        return [DRAW] if self.boneyard else [PASS]

    def _why_illegal(self, action: Action) -> str:
        if self.seat < 0:
            return "docs/rules.md X6: between hands only the 'deal' step is legal"
        if isinstance(action, Deal):
            return (
                "docs/rules.md X6: 'deal' is the chance step between hands, never a seat's action"
            )
        layout = self.layout
        if isinstance(action, Play):
            why = self._why_not_play(action, True)
            if why:
                return f"docs/rules.md 3.6: {why}"
            if layout.is_empty:
                return "docs/rules.md X1: the opening tile names no end"
            if action.end is None:
                return "docs/rules.md 0.4: every play after the opening names its end"
            if action.end not in LINE_ENDS:
                return f"docs/rules.md 3.4: there is no end {action.end}; ends are W, E, N and S"
            if action.end in ("N", "S"):
                if layout.spinner is None:
                    return (
                        f"docs/rules.md 3.4: there is no spinner yet, so no end {action.end}; "
                        "the line has only the ends W and E"
                    )
                if not layout.north_south_open:
                    return "docs/rules.md 3.4: N and S open only after W and E each hold a tile"
            shown = layout.showing(action.end)
            return (
                f"docs/rules.md 3.4: {action.tile} does not match the {shown} "
                f"showing at {action.end}"
            )
        if layout.is_empty:
            return "docs/rules.md 3.3: the starter must open the hand with any tile"
        if not isinstance(action, Draw | Pass):
            return "docs/rules.md 0.4: only play, draw and pass are actions of Straight Dominoes"
        for tile in self.hands[self.seat]:
            where = layout.fits(tile)
            if where:
                return (
                    f"docs/rules.md 3.6 (S6): you hold {tile}, which fits {where[0]}; you must play"
                )
        if isinstance(action, Draw):
            return "docs/rules.md 3.6: nothing fits and the boneyard is empty; you must pass"
        return (
            f"docs/rules.md 3.6 (S7): nothing fits and the boneyard holds {len(self.boneyard)} "
            "tiles; you must draw"
        )

    def _act(self, action: Action) -> None:
        if isinstance(action, Play):
            tile = action.tile
            layout = self.layout = self.layout.place(tile, action.end)
            left = self._remove_from_hand(tile)
            count = layout.count
            if count and count % 5 == 0:
                seat = self.seat
                side = self._side(seat)
                self._add_points(side, count)
                in_play = list(self.play_points)
                in_play[side] += count
                self.play_points = tuple(in_play)
                if self.winner is not None:
                    # docs/rules.md 3.10, S12, X3: the game ends at once; nothing more is scored.
                    self._record(
                        HandEnd.TARGET,
                        None,
                        0,
                        f"seat {seat} scored {count} in play: side {side} reached "
                        f"{self.side_scores[side]} and the game ends at once",
                        winners=(side,),
                    )
                    return
            if not left:
                self._score_domino()
                return
        elif isinstance(action, Draw):
            self._draw_into_hand()
            if self.boneyard or not self._blocked():
                return  # docs/rules.md 3.6: the seat keeps its turn after a draw.
            self._score_block()
            return
        if not self.boneyard and self._blocked():
            self._score_block()
        else:
            self._advance()

    def _side(self, seat: int) -> int:
        return seat & 1 if self.game.partnerships else seat

    def _blocked(self) -> bool:
        """docs/rules.md 3.8: nobody holds a tile that fits (the caller checks the boneyard)."""
        numbers = 0
        for _, v in self.layout.ends:
            numbers |= 1 << v
        return self._nobody_holds(numbers)

    def _score_domino(self) -> None:
        """docs/rules.md 3.9: the side going out scores round5 of the opponents' pips (S9, S11)."""
        side = self._side(self.seat)
        totals = self.side_totals()
        pips = sum(totals) - totals[side]
        points = round5(pips)
        self._end_hand(
            HandEnd.DOMINO,
            side,
            points,
            f"seat {self.seat} went out; {pips} pips in opponents' hands: "
            f"side {side} scores {points}",
        )

    def _score_block(self) -> None:
        """docs/rules.md 3.9: the unique lowest side scores round5 of the others' pips (S10,
        S11)."""
        totals = self.side_totals()
        shown = "/".join(str(t) for t in totals)
        winner = self._unique_lowest_side()
        if winner is None:
            self._end_hand(
                HandEnd.BLOCKED, None, 0, f"blocked; pip totals {shown} tie: nobody scores"
            )
            return
        pips = sum(totals) - totals[winner]
        points = round5(pips)
        self._end_hand(
            HandEnd.BLOCKED,
            winner,
            points,
            f"blocked; pip totals {shown}: side {winner} scores {points}",
        )

    def observe(self, seat: int) -> StraightObservation:
        made = self._observation(StraightObservation, seat)
        _SET_LAYOUT(made, self.layout)
        return made

    def _copy_own(self, copy: StraightState) -> None:
        copy.boneyard = self.boneyard
        copy.held = self.held
        copy.play_points = self.play_points
        copy.layout = self.layout

    @classmethod
    def _from_position(
        cls,
        game: StraightGame,
        *,
        hands: Sequence[str | Sequence[str | Tile]],
        boneyard: str | Sequence[str | Tile] = (),
        line: Sequence[str] = (),
        spinner: int | str | None = None,
        arms: Mapping[str, Sequence[str]] | None = None,
        seat: int = 0,
        scores: Sequence[int] | None = None,
        opener: int | None = None,
        seed: int = 0,
        deal: int = 1,
        deals: Sequence[str | Sequence[str | Tile]] | None = None,
    ) -> StraightState:
        layout = layout_from(line, spinner, arms)
        state = cls._position_common(
            game,
            hands,
            boneyard,
            layout.tiles(),
            seat=seat,
            opener=opener,
            scores=scores,
            seed=seed,
            deal=deal,
            deals=deals,
        )
        for side, score in enumerate(state.side_scores):
            if score >= TARGET:
                raise PositionError(
                    f"scores: side {side} has {score}, so the game would be over (target {TARGET})"
                )
        for i, hand in enumerate(state.hands):
            if not hand:
                raise PositionError(f"hands[{i}]: an empty hand means the hand has ended")
        state.layout = layout
        return state


def _fitting(ends: tuple[tuple[str, int], ...]) -> tuple[tuple[Play, ...], ...]:
    """Return, for each tile by index, its plays on ``ends`` in the canonical order (by end
    name: E, N, S, W)."""
    plays: list[list[Play]] = [[] for _ in DOUBLE_SIX]
    for name, number in sorted(ends):
        for index in _HOLDING[number]:
            plays[index].append(_PLAYS[index][name])
    return tuple(map(tuple, plays))


_HOLDING: Final = tuple(tuple(t.index for t in DOUBLE_SIX if t.has(n)) for n in range(7))
"""The indices of the tiles holding each number."""
_FITTING: Final[dict[tuple[tuple[str, int], ...], tuple[tuple[Play, ...], ...]]] = {}
""":func:`_fitting` of each tuple of open ends seen: at most 7**4 + 7**2, the plays are shared."""
_EMPTY: Final = StraightLayout()
_SET_LAYOUT: Final = slot_setter(StraightObservation, "layout")
