"""The Passing Game: a line game with voluntary passing and drawing (docs/rules.md section 2).

Decisions taken in docs/rules.md and followed here: a draw takes one tile and ends the turn (P1);
``draw`` is legal only while 3+ tiles remain (P2); pass and draw are allowed even holding a
playable tile (P3); the opening turn must place a tile (P4); N passes in a row end the hand (P5);
a dead position ends the hand at once (P6); the unique lowest total scores (others - own), a tie
scores nothing (P7, P8); partnerships compare team totals (P9); targets 101/61 or pagat's (P10);
later hands rotate the opener (the starter of 2.3) clockwise (P11).

>>> game = PassingGame(players=2)
>>> state = game.new_game(seed=7)
>>> state = state.apply(state.legal_actions()[0])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, ClassVar, Final

from .actions import DEAL, DRAW, PASS, Action, Draw, Play
from .errors import GameOptionError, PositionError
from .linegame import LineGame, LineGameState, LineObservation, OpenEnd, line_ends
from .slots import slot_setter
from .state import HandEnd
from .tiles import DOUBLE_SIX, Tile, parse_laid

TARGET_RULES: Final = ("gamerules", "pagat")
_OPENINGS: Final = tuple(Play(t) for t in DOUBLE_SIX)
_ON_EAST: Final = tuple(Play(t, "E") for t in DOUBLE_SIX)
_ON_WEST: Final = tuple(Play(t, "W") for t in DOUBLE_SIX)


def _fitting(west: int, east: int) -> tuple[tuple[Play, ...], ...]:
    """Return each tile's plays (by tile index) with ``west`` and ``east`` showing, E before W."""
    return tuple(
        (
            *((_ON_EAST[t.index],) if t.has(east) else ()),
            *((_ON_WEST[t.index],) if t.has(west) else ()),
        )
        for t in DOUBLE_SIX
    )


_FITTING: Final = tuple(tuple(_fitting(west, east) for east in range(7)) for west in range(7))
"""``_FITTING[west][east][tile.index]``: every play made once, as legal actions list them."""
RESERVE: Final = 2
"""The last two tiles of the boneyard can never be drawn (docs/rules.md 2.2)."""


@dataclass(frozen=True, slots=True)
class PassingGame(LineGame):
    """Passing Game for 2-4 players; 4 may play as partnerships A+C against B+D."""

    name: ClassVar[str] = "passing"
    title: ClassVar[str] = "Passing Game"
    HAND_SIZES: ClassVar[dict[int, int]] = {2: 7, 3: 7, 4: 6}

    players: int = 2
    partnerships: bool = False
    target_rule: str = "gamerules"

    def __post_init__(self) -> None:
        if self.players not in (2, 3, 4):
            raise GameOptionError(f"passing: players must be 2, 3 or 4, got {self.players}")
        if self.partnerships and self.players != 4:
            raise GameOptionError(f"passing: partnerships need 4 players, got {self.players}")
        if self.target_rule not in TARGET_RULES:
            raise GameOptionError(
                f"passing: target_rule must be one of {', '.join(TARGET_RULES)}, "
                f"got '{self.target_rule}'"
            )

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
        if self.target_rule == "pagat":
            return 101 if self.players == 2 or self.partnerships else 61
        return 101 if self.players < 4 else 61

    def options(self) -> dict[str, Any]:
        return {
            "players": self.players,
            "partnerships": self.partnerships,
            "target_rule": self.target_rule,
        }

    def new_game(self, seed: int, *, first_seat: int | None = None) -> PassingState:
        return PassingState._initial(self, seed, first_seat)

    def from_position(self, **position: Any) -> PassingState:
        """Build a position.

        The fields every line game shares: ``hands`` (one list of tiles per seat), ``boneyard``
        (its tiles in draw order), ``seat`` (to move, 0 by default), ``opener`` (the seat that
        opened this deal, ``seat`` by default), ``scores`` (per side), ``seed``, ``deal`` (the
        1-based number of this deal) and ``deals`` (the shuffles of the next deals, docs/rules.md
        0.3; later ones come from ``seed``). Tiles are :class:`Tile` values or text, and a list
        of tiles may be one text, ``"6-6 5-4"`` (:func:`~.tiles.parse_tiles`).

        Passing's own fields: ``line`` (the tiles placed so far from W to E, each oriented as
        laid, e.g. ``["1-4", "4-4", "4-6"]`` meaning W shows 1 and E shows 6) and ``passes``
        (passes in a row so far).
        """
        return PassingState._from_position(self, **position)


@dataclass(frozen=True, slots=True)
class PassingObservation(LineObservation):
    """A seat's view: the line, its ends and the passes in a row, besides the common fields."""

    @property
    def open_ends(self) -> tuple[OpenEnd, ...]:
        return line_ends(self.line)

    line: tuple[tuple[int, int], ...]
    """The tiles of the line from W to E, each as (its west number, its east number)."""
    ends: tuple[int, int] | None
    """The numbers showing at W and E; None before the opening tile."""
    passes: int
    """Passes in a row since the last play or draw."""


class PassingState(LineGameState):
    """A position of the Passing Game."""

    __slots__ = ("ends", "line", "passes")

    _builds_sorted = True

    game: PassingGame
    line: tuple[tuple[int, int], ...]
    ends: tuple[int, int] | None
    passes: int

    @property
    def open_ends(self) -> tuple[OpenEnd, ...]:
        return line_ends(self.line)

    def _start_layout(self) -> None:
        self.line = ()
        self.ends = None
        self.passes = 0

    def _first_to_act(self) -> int:
        return self.opener

    def _compute_legal(self) -> list[Action]:
        if self.seat < 0:
            return [] if self.winner is not None else [DEAL]
        hand = self.hands[self.seat]
        ends = self.ends
        if ends is None:
            return [_OPENINGS[t.index] for t in hand]
        # Built in the canonical order (plays by tile, "E" before "W"; draw; pass): no sort.
        fitting = _FITTING[ends[0]][ends[1]]
        actions: list[Action] = [play for tile in hand for play in fitting[tile.index]]
        if len(self.boneyard) > RESERVE:
            actions.append(DRAW)
        actions.append(PASS)
        return actions

    def _why_illegal(self, action: Action) -> str:
        if self.seat < 0:
            return "docs/rules.md X6: between hands only the 'deal' step is legal"
        if isinstance(action, Play):
            why = self._why_not_play(action, True)
            if why:
                return f"docs/rules.md 2.5: {why}"
            if self.ends is None:
                return "docs/rules.md X1: the opening tile names no end"
            if action.end not in ("W", "E"):
                return "docs/rules.md 2.4: the line has only the ends W and E"
            shown = self.ends[0 if action.end == "W" else 1]
            return (
                f"docs/rules.md 2.5: {action.tile} does not match {shown} showing at {action.end}"
            )
        if self.ends is None:
            return "docs/rules.md 2.5 (P4): the opening turn must place a tile"
        if isinstance(action, Draw):
            return (
                f"docs/rules.md 2.2: draw needs 3 or more tiles in the boneyard, "
                f"it holds {len(self.boneyard)}"
            )
        return "docs/rules.md 2.5: only play, draw or pass are actions of the Passing Game"

    def _act(self, action: Action) -> None:
        if isinstance(action, Play):
            self._place(action.tile, action.end)
            self.passes = 0
            if not self._remove_from_hand(action.tile):
                self._score_hand(HandEnd.DOMINO, f"seat {self.seat} went out")
                return
        elif isinstance(action, Draw):
            self._draw_into_hand()
            self.passes = 0
        else:
            self.passes += 1
        if self._is_dead():
            self._score_hand(HandEnd.BLOCKED, "nobody can play and nothing can be drawn")
        elif self.passes == self.game.players:
            self._score_hand(HandEnd.PASSED_OUT, f"{self.passes} passes in a row")
        else:
            self._advance()

    def _place(self, tile: Tile, end: str | None) -> None:
        if self.ends is None:
            self.line = ((tile.low, tile.high),)
            self.ends = (tile.low, tile.high)
        elif end == "W":
            shown = self.ends[0]
            self.line = ((tile.other(shown), shown), *self.line)
            self.ends = (tile.other(shown), self.ends[1])
        else:
            shown = self.ends[1]
            self.line = (*self.line, (shown, tile.other(shown)))
            self.ends = (self.ends[0], tile.other(shown))

    def _is_dead(self) -> bool:
        """docs/rules.md 2.6 b: nobody holds a match and the boneyard holds 2 or fewer tiles."""
        if len(self.boneyard) > RESERVE or self.ends is None:
            return False
        west, east = self.ends
        return self._nobody_holds(1 << west | 1 << east)

    def _score_hand(self, end: HandEnd, how: str) -> None:
        """docs/rules.md 2.7: the unique lowest side scores (others' total) - (own total)."""
        totals = self.side_totals()
        winner = self._unique_lowest_side()
        if winner is None:
            self._end_hand(
                end, None, 0, f"{how}; pip totals {_show(totals)} tie for lowest: nobody scores"
            )
            return
        points = sum(totals) - 2 * totals[winner]
        self._end_hand(
            end, winner, points, f"{how}; pip totals {_show(totals)}: side {winner} scores {points}"
        )

    def observe(self, seat: int) -> PassingObservation:
        made = self._observation(PassingObservation, seat)
        _SET_LINE(made, self.line)
        _SET_ENDS(made, self.ends)
        _SET_PASSES(made, self.passes)
        return made

    def _copy_own(self, copy: PassingState) -> None:
        copy.boneyard = self.boneyard
        copy.held = self.held
        copy.play_points = self.play_points
        copy.line = self.line
        copy.ends = self.ends
        copy.passes = self.passes

    @classmethod
    def _from_position(
        cls,
        game: PassingGame,
        *,
        hands: Sequence[str | Sequence[str | Tile]],
        boneyard: str | Sequence[str | Tile],
        line: Sequence[str] = (),
        seat: int = 0,
        passes: int = 0,
        scores: Sequence[int] | None = None,
        opener: int | None = None,
        seed: int = 0,
        deal: int = 1,
        deals: Sequence[str | Sequence[str | Tile]] | None = None,
    ) -> PassingState:
        laid = tuple((Tile(*pair), *pair) for pair in (parse_laid(t, "line") for t in line))
        state = cls._position_common(
            game,
            hands,
            boneyard,
            tuple(t for t, _, _ in laid),
            seat=seat,
            opener=opener,
            scores=scores,
            seed=seed,
            deal=deal,
            deals=deals,
        )
        for (_, _, right), (_, left, _) in pairwise(laid):
            if right != left:
                raise PositionError(f"line: the tiles do not join ({right} next to {left})")
        state.line = tuple((left, right) for _, left, right in laid)
        state.ends = (laid[0][1], laid[-1][2]) if laid else None
        if not 0 <= passes < game.players:
            raise PositionError(
                f"passes: expected 0 to {game.players - 1} passes in a row "
                f"({game.players} end the hand, docs/rules.md 2.6 c), got {passes}"
            )
        state.passes = passes
        return state


_SET_LINE: Final = slot_setter(PassingObservation, "line")
_SET_ENDS: Final = slot_setter(PassingObservation, "ends")
_SET_PASSES: Final = slot_setter(PassingObservation, "passes")


def _show(totals: tuple[int, ...]) -> str:
    return "/".join(str(t) for t in totals)
