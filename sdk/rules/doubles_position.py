"""Explicit Doubles positions: the fields of ``DoublesGame.from_position``, each checked.

A layout is given either as the plays so far, replayed under docs/rules.md 4.4-4.5, or as its tiles
and open ends, checked for whether they could arise in play.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from .errors import PositionError
from .tiles import MAX_PIP, Tile, parse_tile, parse_tiles

if TYPE_CHECKING:
    from .doubles import DoublesGame, DoublesState

_NUMBERS: Final = range(MAX_PIP + 1)


def build_position(
    cls: type[DoublesState],
    game: DoublesGame,
    *,
    hands: Sequence[str | Sequence[str | Tile]],
    boneyard: str | Sequence[str | Tile],
    placed: Sequence[str] | None = None,
    laid: Sequence[str | Tile] | None = None,
    ends: Sequence[int] | None = None,
    unlocked: Sequence[int] | None = None,
    seat: int | None = None,
    drawn: str | Tile | None = None,
    scores: Sequence[int] | None = None,
    opener: int | None = None,
    seed: int = 0,
    deal: int = 1,
    deals: Sequence[str | Sequence[str | Tile]] | None = None,
) -> DoublesState:
    """Build the position of ``DoublesGame.from_position`` (its docstring lists the fields)."""
    layout = cls.__new__(cls)
    layout._start_layout()
    if placed is not None:
        if laid is not None or ends is not None or unlocked is not None:
            raise PositionError(
                "placed: give the layout either as 'placed' or as 'laid' + 'ends', not both"
            )
        _replay(layout, placed)
    else:
        _check_layout(layout, laid or (), ends or (), unlocked)
    opening = not layout.placed
    if seat is None and not opening:
        raise PositionError("seat: required once tiles are laid")
    state = cls._position_common(
        game,
        hands,
        boneyard,
        layout.placed,
        seat=0 if seat is None else seat,
        opener=opener,
        scores=scores,
        seed=seed,
        deal=deal,
        deals=deals,
    )
    state.placed = layout.placed
    state.counts = layout.counts
    state.open_mask = layout.open_mask
    state.unlocked_mask = layout.unlocked_mask
    state.drawn = None
    for i, hand in enumerate(state.hands):
        if not hand:
            raise PositionError(f"hands[{i}]: empty, so the hand is already over (domino)")
    for side, score in enumerate(state.side_scores):
        if score >= game.target:
            raise PositionError(
                f"scores: seat {side} has {score}, the target is {game.target}, so the game is over"
            )
    if opening:
        holder = state._first_to_act()
        if holder is None:
            raise PositionError("hands: nobody holds a double, so the deal is void (4.3)")
        if seat is None:
            state.seat = holder
            state.opener = holder if opener is None else opener
        elif seat != holder:
            double = state.highest_double(state.hands[holder])
            raise PositionError(
                f"seat: {double}, the highest double, is in hands[{holder}], "
                f"so seat {holder} opens (4.3), not seat {seat}"
            )
    if drawn is not None:
        state.drawn = _check_drawn(state, drawn)
    if not opening and state._is_blocked():
        raise PositionError(
            "hands: nobody can play and the boneyard holds 2 or fewer, "
            "so the hand is already over (blocked, 4.7)"
        )
    return state


def _replay(self: DoublesState, placed: Sequence[str]) -> None:
    """Lay the plays ``placed`` (``"6-6"``, ``"6-4 6"``, ...) in order, checking each."""
    for i, text in enumerate(placed):
        field = f"placed[{i}]"
        words = str(text).split()
        if words and words[0].lower() == "play":
            words = words[1:]
        if len(words) not in (1, 2):
            raise PositionError(f"{field}: expected 'TILE' or 'TILE END', got '{text}'")
        tile = parse_tile(words[0], field)
        end = words[1] if len(words) == 2 else None
        if tile in self.placed:
            raise PositionError(f"{field}: {tile} is already laid")
        if i == 0:
            if end is not None or not tile.is_double:
                raise PositionError(
                    f"{field}: a hand opens with a double that names no end (4.3, X1), got '{text}'"
                )
        else:
            why = self._placement_error(tile, end)
            if why:
                raise PositionError(f"{field}: {why}")
        self._place(tile, end)


def _check_layout(
    self: DoublesState,
    laid: Sequence[str | Tile],
    ends: Sequence[int],
    unlocked: Sequence[int] | None,
) -> None:
    """Take a layout given as its tiles and open ends, if it could arise in play."""
    tiles = parse_tiles(laid, "laid")
    for end in ends:
        if type(end) is not int or end not in _NUMBERS:
            raise PositionError(f"ends: {end!r} is not a number from 0 to {MAX_PIP}")
    if not tiles:
        if ends or unlocked:
            raise PositionError("laid: no tile is laid, so no end is open or unlocked")
        return
    doubles = {t.high for t in tiles if t.is_double}
    if not doubles:
        raise PositionError("laid: no double is laid, but every hand opens with one (4.3)")
    if unlocked is not None and set(unlocked) != doubles:
        raise PositionError(
            f"unlocked: must be the numbers whose double is laid (4.5): {sorted(doubles)}"
        )
    for tile in tiles:
        if not tile.is_double and tile.high not in doubles and tile.low not in doubles:
            raise PositionError(
                f"laid: {tile} could not have been placed, {tile.high} and {tile.low} "
                "are both locked (4.5)"
            )
    expected = 2 * len(doubles) + 2
    if len(ends) != expected:
        raise PositionError(
            f"ends: {len(doubles)} laid doubles leave {expected} open ends (4.4), got {len(ends)}"
        )
    counts = [0] * len(_NUMBERS)
    for n in _NUMBERS:
        halves = 4 * (n in doubles) + sum(1 for t in tiles if not t.is_double and t.has(n))
        shown = sum(1 for e in ends if e == n)
        if n not in doubles and shown != halves:
            raise PositionError(
                f"ends: {n} is locked, so each of the {halves} laid halves showing {n} "
                f"is still an open end (4.5), got {shown}"
            )
        if shown > halves or (halves - shown) % 2:
            raise PositionError(
                f"ends: {shown} ends showing {n} cannot come from the laid tiles (4.4)"
            )
        counts[n] = shown
    self.placed = tiles
    self.counts = tuple(counts)
    self.open_mask = sum(1 << n for n in _NUMBERS if counts[n])
    self.unlocked_mask = sum(1 << n for n in doubles)


def _check_drawn(self: DoublesState, drawn: str | Tile) -> Tile:
    tile = parse_tile(drawn, "drawn")
    if tile not in self.hands[self.seat]:
        raise PositionError(f"drawn: {tile} is not in hands[{self.seat}], the seat to move")
    if not self.placed:
        raise PositionError("drawn: nobody draws before the opening double (4.3)")
    if not self.can_place(tile):
        raise PositionError(f"drawn: {tile} fits no end, so the turn would have ended (4.6)")
    return tile
