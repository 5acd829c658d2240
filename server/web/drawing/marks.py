"""Legal-action marks for human play: where each ``play`` would put its tile.

The play page passes the viewer's legal actions as ``str(action)`` prints them (``play 6-4 E``,
``play 6-4 6`` in Doubles, ``play 6-4`` for an opening tile or a Moon trick, ``discard 6-4``).
Each play that names an end becomes a ghost tile at that end; an opening play, a ghost in the
middle of the table. The viewer's own hand marks its playable tiles (seats.py). Other actions
(bid, trump, draw, pass) are the play page's buttons, not marks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .line import END_WORDS, STEP, Walker
from .svg import Drawing
from .tiles import Spot, ghost


@dataclass(frozen=True, slots=True)
class Move:
    """A ``play`` or ``discard`` the viewer may make."""

    action: str
    verb: str
    high: int
    low: int
    end: str | None

    @property
    def tile(self) -> str:
        return f"{self.high}-{self.low}"

    def other(self, number: int) -> int:
        """The tile's number that is not ``number`` (the one left open)."""
        return self.low if number == self.high else self.high


def moves(legal: Sequence[str]) -> list[Move]:
    """The plays and discards among ``legal``; anything else is left to the play page."""
    found = []
    for action in legal:
        words = action.split()
        if len(words) not in (2, 3) or words[0] not in ("play", "discard"):
            continue
        numbers = words[1].split("-")
        if len(numbers) != 2 or not all(n.isdigit() for n in numbers):
            continue
        a, b = int(numbers[0]), int(numbers[1])
        end = words[2] if len(words) == 3 else None
        found.append(Move(action, words[0], max(a, b), min(a, b), end))
    return found


def end_ghosts(
    walker: Walker, number: int, here: Sequence[Move], where: str | None = None
) -> list[Drawing]:
    """Ghosts of the plays ``here`` at the open end ``walker`` stands on, which shows
    ``number``: each as it would lie, side by side across the chain when there are several."""
    drawings = []
    dx, dy = STEP[walker.direction]
    shift = before = 0.0
    for i, move in enumerate(here):
        spot, _, _ = walker.spot((number, move.other(number)))
        across = 2 * walker.short if move.high == move.low else walker.short
        shift += (before + across) / 2 + 4 if i else 0.0
        before = across
        spot = Spot(spot.x - dy * shift, spot.y + dx * shift, spot.angle, spot.short)
        end = where or f"the {END_WORDS.get(move.end or '', 'open')} end"
        label = f"play {move.tile} on {end}"
        drawings.append(ghost(number, move.other(number), spot, action=move.action, label=label))
    return drawings


def opening_ghosts(here: Sequence[Move], short: float) -> list[Drawing]:
    """Ghosts of opening plays: a row in the middle of the empty table."""
    gap = 6.0
    widths = [short if m.high == m.low else 2 * short for m in here]
    x = -(sum(widths) + gap * (len(here) - 1)) / 2
    drawings = []
    for move, width in zip(here, widths, strict=True):
        angle = 90 if move.high == move.low else 0
        spot = Spot(x + width / 2, 0.0, angle, short)
        label = f"play {move.tile} to open the hand"
        drawings.append(ghost(move.high, move.low, spot, action=move.action, label=label))
        x += width + gap
    return drawings
