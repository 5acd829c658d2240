"""Straight Dominoes: All-Fives scoring on a spinner layout, to 250 (RULES.md section 3).

Decisions taken in RULES.md and followed here: the spinner is the first double played, as opener
or later (S1); its long sides W and E come first, N and S open once W and E each hold a tile (S2);
the count follows 3.5 exactly, empty arms adding nothing but the 2n term (S3, X2); a count above
0 that is a multiple of 5 scores itself at once, the opening and the last tile included (S4, S5);
play is compulsory (S6); a seat that cannot play draws one tile per ``draw`` action until a drawn
tile fits, which it must then play, or the boneyard is empty (S7), and every tile can be drawn
(S8); pass only when nothing fits and the boneyard is empty; a block ends the hand at once (0.7);
hands are scored with :func:`round5` of the opponents' pips, never subtracting (S9-S11); the game
ends the moment a side reaches 250, mid-hand included (S12, X3); later hands rotate the starter
(S13).

>>> game = StraightGame(players=2)
>>> state = game.new_game(seed=7)
>>> state = state.apply(state.legal_actions()[0])
>>> StraightLayout().place(Tile(5, 5), None).place(Tile(5, 3), "W").count
13
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import pairwise
from math import floor
from typing import Any, ClassVar, Final

from .actions import DEAL, DRAW, LINE_ENDS, PASS, Action, Deal, Draw, Pass, Play
from .errors import InvalidActionError, PositionError
from .linegame import LineGame, LineGameState, LineObservation
from .state import HandEnd, HandResult
from .tiles import DOUBLE_SIX, Tile

TARGET: Final = 250
"""RULES.md 3.10: the first side to reach 250 or more wins."""

Pair = tuple[int, int]
"""A laid tile as the two numbers it shows, in the order the layout is read."""

Arm = tuple[Pair, ...]
"""One arm of the spinner, from the spinner outward, each tile as (inner, outer)."""

_W, _E, _N, _S = 0, 1, 2, 3
_NO_ARMS: Final[tuple[Arm, Arm, Arm, Arm]] = ((), (), (), ())

_PLAYS: Final[tuple[dict[str | None, Play], ...]] = tuple(
    {end: Play(tile, end) for end in (None, *LINE_ENDS)} for tile in DOUBLE_SIX
)
"""Every play of every tile, built once so move generation allocates nothing."""


def round5(n: int | float | Fraction) -> int:
    """Round ``n >= 0`` to the nearest multiple of 5, a halfway value up (RULES.md 0.6, S9).

    >>> [round5(n) for n in (2, 3, 7, 8, 12, 13)], round5(Fraction(5, 2))
    ([0, 5, 5, 10, 10, 15], 5)
    """
    if isinstance(n, int):
        return 5 * ((n + 2) // 5)
    return 5 * floor(n / 5 + Fraction(1, 2))


# -- the layout --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StraightLayout:
    """The public layout of a Straight hand: a line, then a spinner with four arms (RULES.md 3.4).

    Before the first double is played the layout is ``line``; the first double becomes the
    spinner and the line so far becomes the arm opposite the end it was played on. The values
    are immutable, so a bot may try :meth:`place` freely to see what a play would score.
    """

    line: tuple[Pair, ...] = ()
    """Before a spinner: the tiles from W to E, each as (its west number, its east number)."""
    spinner: int | None = None
    """The spinner's number n once the first double ``[n-n]`` is down, else None."""
    arms: tuple[Arm, Arm, Arm, Arm] = _NO_ARMS
    """With a spinner: arms W, E, N and S, each from the spinner outward as (inner, outer)."""
    ends: tuple[tuple[str, int], ...] = field(init=False, repr=False, compare=False)
    """The open ends as (name, number showing), in the order W, E, N, S; empty before a tile."""
    count: int = field(init=False, repr=False, compare=False)
    """The open-end total of RULES.md 3.5."""

    def __post_init__(self) -> None:
        line, n, arms = self.line, self.spinner, self.arms
        ends: tuple[tuple[str, int], ...]
        if n is None:
            if line:
                ends = (("W", line[0][0]), ("E", line[-1][1]))
                count = line[0][0] + line[-1][1]
            else:
                ends, count = (), 0
        else:
            west, east, north, south = arms
            w = west[-1][1] if west else n
            e = east[-1][1] if east else n
            if west and east:
                ends = (("W", w), ("E", e), ("N", north[-1][1] if north else n))
                ends = (*ends, ("S", south[-1][1] if south else n))
                count = 0
            else:
                ends = (("W", w), ("E", e))
                count = n + n
            for arm in arms:
                if arm:
                    inner, outer = arm[-1]
                    count += outer + outer if inner == outer else outer
        object.__setattr__(self, "ends", ends)
        object.__setattr__(self, "count", count)

    @property
    def is_empty(self) -> bool:
        """Whether no tile has been played yet (the next play is the opening, RULES.md 3.3)."""
        return not self.line and self.spinner is None

    @property
    def north_south_open(self) -> bool:
        """Whether arms N and S take tiles: only once W and E each hold one (RULES.md 3.4, S2)."""
        return self.spinner is not None and bool(self.arms[_W]) and bool(self.arms[_E])

    def showing(self, end: str) -> int | None:
        """Return the number showing at open end ``end``, or None if it is not open."""
        for name, value in self.ends:
            if name == end:
                return value
        return None

    def fits(self, tile: Tile) -> tuple[str | None, ...]:
        """Return the ends ``tile`` may be played on: ``(None,)`` for the opening tile."""
        if self.is_empty:
            return (None,)
        return tuple(name for name, v in self.ends if tile.high == v or tile.low == v)

    def place(self, tile: Tile, end: str | None) -> StraightLayout:
        """Return the layout after ``tile`` is laid on ``end`` (None for the opening tile).

        The caller makes sure the play fits; this only does the geometry of RULES.md 3.4.
        """
        line, n = self.line, self.spinner
        if n is None:
            if not line:
                if tile.is_double:
                    return StraightLayout(spinner=tile.high)
                return StraightLayout(line=((tile.low, tile.high),))
            if end == "W":
                shown = line[0][0]
                if tile.is_double:
                    # The first double: the line now runs east from the spinner (RULES.md 3.4).
                    return StraightLayout(spinner=shown, arms=((), line, (), ()))
                return StraightLayout(line=((tile.other(shown), shown), *line))
            shown = line[-1][1]
            if tile.is_double:
                west = tuple((e, w) for w, e in reversed(line))
                return StraightLayout(spinner=shown, arms=(west, (), (), ()))
            return StraightLayout(line=(*line, (shown, tile.other(shown))))
        index = LINE_ENDS.index(end or "")
        arm = self.arms[index]
        shown = arm[-1][1] if arm else n
        arms = list(self.arms)
        arms[index] = (*arm, (shown, tile.other(shown)))
        return StraightLayout(spinner=n, arms=(arms[0], arms[1], arms[2], arms[3]))

    def tiles(self) -> tuple[Tile, ...]:
        """Return every tile on the table."""
        laid = [Tile(a, b) for a, b in self.line]
        if self.spinner is not None:
            laid.append(Tile(self.spinner, self.spinner))
            laid.extend(Tile(a, b) for arm in self.arms for a, b in arm)
        return tuple(laid)

    def __str__(self) -> str:
        """E.g. ``"1-4 4-6"``, or ``"3-1 1-5 [5-5] 5-2 | N: 5-0 | S: -"``, read W to E."""
        if self.spinner is None:
            return " ".join(f"{w}-{e}" for w, e in self.line) or "(empty)"
        west, east, north, south = self.arms
        row = [f"{o}-{i}" for i, o in reversed(west)]
        row.append(f"[{self.spinner}-{self.spinner}]")
        row.extend(f"{i}-{o}" for i, o in east)
        text = " ".join(row)
        if self.north_south_open:
            for name, arm in (("N", north), ("S", south)):
                text += f" | {name}: " + (" ".join(f"{i}-{o}" for i, o in arm) or "-")
        return text


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
            raise InvalidActionError(f"straight: players must be 2, 3 or 4, got {self.players}")
        if self.partnerships and self.players != 4:
            raise InvalidActionError(f"straight: partnerships need 4 players, got {self.players}")

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

        Fields:
            hands: one list of tiles per seat, e.g. ``[["6-4", "5-5"], ["2-1"]]``.
            boneyard: the undrawn tiles in draw order (the first is drawn next).
            line: before any double is down, the tiles from W to E, each written as laid,
                west number first: ``["1-4", "4-6"]`` means W shows 1 and E shows 6.
            spinner: once a double is down, the spinner's number (``5``) or tile (``"5-5"``).
            arms: with ``spinner``, a mapping from ``"W"``, ``"E"``, ``"N"``, ``"S"`` to the
                tiles of that arm from the spinner outward, inner number first:
                ``{"W": ["5-3", "3-3"], "E": ["5-1"]}``; missing arms are empty.
            seat: the seat to move (0 by default).
            scores: the score of every side (all 0 by default).
            starter: the seat that opened this deal (``seat`` by default).
            seed: fixes the shuffles of later deals (0 by default).
            deal: the 1-based number of this deal (1 by default).

        Omit ``line`` and ``spinner`` for a hand whose opening tile is still to be played.

        Raises:
            PositionError: the position is inconsistent; the message names the field.
        """
        return StraightState._from_position(self, **position)


@dataclass(frozen=True, slots=True)
class StraightObservation(LineObservation):
    """A seat's view: the public layout, besides the common fields (RULES.md 3.11)."""

    layout: StraightLayout
    """The tiles on the table; ``layout.ends`` and ``layout.count`` give the open ends and count."""


class StraightState(LineGameState):
    """A position of Straight Dominoes."""

    __slots__ = ("layout",)

    game: StraightGame
    layout: StraightLayout

    def _start_layout(self) -> None:
        self.layout = _EMPTY

    def _first_to_act(self) -> int:
        return self.starter

    def _compute_legal(self) -> list[Action]:
        seat = self.seat
        if seat < 0:
            return [] if self.winner is not None else [DEAL]
        hand = self.hands[seat]
        ends = self.layout.ends
        if not ends:
            return [_PLAYS[t.index][None] for t in hand]
        plays: list[Action] = [
            _PLAYS[t.index][name] for t in hand for name, v in ends if t.high == v or t.low == v
        ]
        if plays:
            return plays
        return [DRAW] if self.boneyard else [PASS]

    def _why_illegal(self, action: Action) -> str:
        if self.seat < 0:
            return "RULES.md X6: between hands only the 'deal' step is legal"
        if isinstance(action, Deal):
            return "RULES.md X6: 'deal' is the chance step between hands, never a seat's action"
        layout = self.layout
        if isinstance(action, Play):
            why = self._why_not_play(action, True)
            if why:
                return f"RULES.md 3.6: {why}"
            if layout.is_empty:
                return "RULES.md X1: the opening tile names no end"
            if action.end is None:
                return "RULES.md 0.4: every play after the opening names its end"
            if action.end not in LINE_ENDS:
                return f"RULES.md 3.4: there is no end {action.end}; ends are W, E, N and S"
            if action.end in ("N", "S"):
                if layout.spinner is None:
                    return (
                        f"RULES.md 3.4: there is no spinner yet, so no end {action.end}; "
                        "the line has only the ends W and E"
                    )
                if not layout.north_south_open:
                    return "RULES.md 3.4: N and S open only after W and E each hold a tile"
            shown = layout.showing(action.end)
            return f"RULES.md 3.4: {action.tile} does not match the {shown} showing at {action.end}"
        if layout.is_empty:
            return "RULES.md 3.3: the starter must open the hand with any tile"
        if not isinstance(action, Draw | Pass):
            return "RULES.md 0.4: only play, draw and pass are actions of Straight Dominoes"
        for tile in self.hands[self.seat]:
            where = layout.fits(tile)
            if where:
                return f"RULES.md 3.6 (S6): you hold {tile}, which fits {where[0]}; you must play"
        if isinstance(action, Draw):
            return "RULES.md 3.6: nothing fits and the boneyard is empty; you must pass"
        return (
            f"RULES.md 3.6 (S7): nothing fits and the boneyard holds {len(self.boneyard)} "
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
                if self.winner is not None:
                    # RULES.md 3.10, S12, X3: the game ends at once; nothing more is scored.
                    self.results = (
                        *self.results,
                        HandResult(
                            self.deal_number,
                            HandEnd.TARGET,
                            (0,) * len(self.side_scores),
                            f"seat {seat} scored {count} in play: side {side} reached "
                            f"{self.side_scores[side]} and the game ends at once",
                        ),
                    )
                    return
            if not left:
                self._score_domino()
                return
        elif isinstance(action, Draw):
            self._draw_into_hand()
            if self.boneyard or not self._blocked():
                return  # RULES.md 3.6: the seat keeps its turn after a draw.
            self._score_block()
            return
        if not self.boneyard and self._blocked():
            self._score_block()
        else:
            self._advance()

    def _side(self, seat: int) -> int:
        return seat & 1 if self.game.partnerships else seat

    def _blocked(self) -> bool:
        """RULES.md 3.8: nobody holds a tile that fits (the caller checks the boneyard)."""
        mask = 0
        for _, v in self.layout.ends:
            mask |= 1 << v
        return not any(_MASKS[t.index] & mask for hand in self.hands for t in hand)

    def _score_domino(self) -> None:
        """RULES.md 3.9: the side going out scores round5 of the opponents' pips (S9, S11)."""
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
        """RULES.md 3.9: the unique lowest side scores round5 of the others' pips (S10, S11)."""
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
        return StraightObservation(**self._base_observation(seat), layout=self.layout)

    @classmethod
    def _from_position(
        cls,
        game: StraightGame,
        *,
        hands: Sequence[Sequence[str | Tile]],
        boneyard: Sequence[str | Tile] = (),
        line: Sequence[str] = (),
        spinner: int | str | None = None,
        arms: Mapping[str, Sequence[str]] | None = None,
        seat: int = 0,
        scores: Sequence[int] | None = None,
        starter: int | None = None,
        seed: int = 0,
        deal: int = 1,
    ) -> StraightState:
        layout = _layout_from(line, spinner, arms)
        state = cls._position_common(
            game,
            hands,
            boneyard,
            layout.tiles(),
            seat=seat,
            starter=starter,
            scores=None if scores is None else tuple(scores),
            seed=seed,
            deal=deal,
        )
        n = game.num_players
        if not 0 <= state.starter < n:
            raise PositionError(f"starter: {state.starter} is not a seat of a {n}-player game")
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


_EMPTY: Final = StraightLayout()
_new_state: Final = object.__new__

_MASKS: Final[tuple[int, ...]] = tuple((1 << t.high) | (1 << t.low) for t in DOUBLE_SIX)
"""The numbers on each tile as a bit set, for the block check."""


def _layout_from(
    line: Sequence[str], spinner: int | str | None, arms: Mapping[str, Sequence[str]] | None
) -> StraightLayout:
    """Build and check the layout fields of a position."""
    if spinner is None:
        if arms:
            raise PositionError("arms: arms need a spinner; give 'spinner' too")
        laid = [_pair(text, "line") for text in line]
        for a, b in laid:
            if a == b:
                raise PositionError(
                    f"line: {a}-{b} is a double, and the first double played is the spinner "
                    "(RULES.md 3.4, S1); give 'spinner' and 'arms' instead"
                )
        for (_, right), (left, _) in pairwise(laid):
            if right != left:
                raise PositionError(f"line: the tiles do not join ({right} next to {left})")
        return StraightLayout(line=tuple(laid))
    if line:
        raise PositionError(
            "line: a layout with a spinner is given as 'spinner' and 'arms' only; "
            "the line before the spinner is one of its arms"
        )
    if isinstance(spinner, str):
        try:
            double = Tile.parse(spinner)
        except ValueError as exc:
            raise PositionError(f"spinner: {exc}") from None
        if not double.is_double:
            raise PositionError(f"spinner: {spinner} is not a double (RULES.md 3.4)")
        n = double.high
    elif isinstance(spinner, int) and not isinstance(spinner, bool) and 0 <= spinner <= 6:
        n = spinner
    else:
        raise PositionError(f"spinner: expected a number 0-6 or a double like '5-5', got {spinner}")
    given = dict(arms or {})
    unknown = [name for name in given if name not in LINE_ENDS]
    if unknown:
        raise PositionError(f"arms: unknown arm {unknown[0]!r}; arms are W, E, N and S")
    built: list[Arm] = []
    for name in LINE_ENDS:
        arm = tuple(_pair(text, f"arms[{name}]") for text in given.get(name, ()))
        shown = n
        for a, b in arm:
            if a != shown:
                raise PositionError(
                    f"arms[{name}]: {a}-{b} does not join the {shown} showing there "
                    "(write each tile inner number first)"
                )
            shown = b
        built.append(arm)
    west, east, north, south = built
    if (north or south) and not (west and east):
        raise PositionError(
            "arms: N and S open only after W and E each hold a tile (RULES.md 3.4, S2)"
        )
    return StraightLayout(spinner=n, arms=(west, east, north, south))


def _pair(text: str, field_name: str) -> Pair:
    """Parse a laid tile written in reading order, e.g. ``"4-6"``."""
    try:
        Tile.parse(text)
    except ValueError as exc:
        raise PositionError(f"{field_name}: {exc}") from None
    left, right = text.strip("[] ").split("-")
    return int(left), int(right)
