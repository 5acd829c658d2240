"""What the memorizer keeps of every deal it has played, and how it recognizes one dealt again.

A deal (one hand of a match) is remembered as the tiles known to have been in each seat's
initial hand and the boneyard's tiles at the draw positions it saw: its own whole hand, the
tiles every other seat played before its first draw (they can only have come from its hand),
and the tiles it drew itself. With duplicate deals the same seed deals every rotation of a
table, so seat ``j`` gets the same hand in every rotation while the bots move round: in a later
rotation the memorizer holds a hand it saw another seat play from, and, in its old seat, an
opponent holds the hand it knew whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from domino_arena.sdk.rules import Game, LogEntry, Observation, Tile
from domino_arena.sdk.rules.actions import Draw, Play

MIN_EVIDENCE: Final = 2
"""Tiles a new hand must share with what a remembered seat played, to be taken for its deal."""


@dataclass(slots=True)
class DealMemory:
    """One deal as far as the memorizer has seen it, over every rotation it played of it."""

    game: Game
    deal: int
    """The deal's number in its match (1-based): the same seed deals the same hand number."""
    hands: dict[int, set[Tile]] = field(default_factory=dict)
    """Seat -> tiles known to have been in its initial hand."""
    boneyard: dict[int, Tile] = field(default_factory=dict)
    """Draw position (0 = the first tile drawn in the deal) -> the tile drawn there."""
    whole: set[int] = field(default_factory=set)
    """Seats whose initial hand is known whole (the memorizer sat there)."""

    def learn(self, observation: Observation, initial_hand: tuple[Tile, ...]) -> None:
        """Add what ``observation`` shows: the observer's initial hand and others' early plays."""
        self.hands.setdefault(observation.seat, set()).update(initial_hand)
        self.whole.add(observation.seat)
        drew: set[int] = set()
        for entry in observation.history:
            if isinstance(entry.action, Draw):
                drew.add(entry.seat)
            elif isinstance(entry.action, Play) and entry.seat not in drew:
                self.hands.setdefault(entry.seat, set()).add(entry.action.tile)

    def evidence(self, observation: Observation) -> int:
        """How many tiles say a new hand of ``observation`` is this deal dealt again; 0: it is not.

        The hand must hold every tile known in its seat's initial hand and none known in
        another seat's, the seat must be one it has not held in this deal (a rotation), and it
        must share at least :data:`MIN_EVIDENCE` tiles with what was seen played from its seat.
        """
        if observation.game != self.game or observation.deal != self.deal:
            return 0
        seat = observation.seat
        if seat in self.whole or not self.whole:
            return 0
        hand = set(observation.hand)
        mine = self.hands.get(seat, set())
        if not mine <= hand or len(mine) < MIN_EVIDENCE:
            return 0
        if any(not hand.isdisjoint(tiles) for s, tiles in self.hands.items() if s != seat):
            return 0
        return len(mine)

    def contradicted_by(self, observation: Observation) -> bool:
        """Whether ``observation`` shows this is not the deal: a seat played a tile remembered
        in another seat's initial hand, or the observer holds one."""
        owner = {t: s for s, tiles in self.hands.items() for t in tiles}
        if any(owner.get(t, observation.seat) != observation.seat for t in observation.hand):
            # A tile of another seat's initial hand is never drawn, so it cannot be ours.
            return True
        return any(
            isinstance(e.action, Play) and owner.get(e.action.tile, e.seat) != e.seat
            for e in observation.history
        )


@dataclass(slots=True)
class HandTracker:
    """The hand being played now: its memory, and the observer's hand at its last decision."""

    memory: DealMemory
    recognized: bool
    """The deal was remembered from an earlier game (the memorizer plays on that knowledge)."""
    initial_hand: tuple[Tile, ...]
    last_hand: tuple[Tile, ...]
    history: tuple[LogEntry, ...]

    def continues(self, observation: Observation) -> bool:
        """Whether ``observation`` is a later decision of this same hand."""
        return (
            observation.game == self.memory.game
            and observation.deal == self.memory.deal
            and observation.history[: len(self.history)] == self.history
            and len(observation.history) > len(self.history)
        )

    def follow(self, observation: Observation) -> None:
        """Take in a later decision: the tile the observer drew, if it drew, at its position."""
        steps = observation.history
        seat = observation.seat
        draws = [
            i
            for i in range(len(self.history), len(steps))
            if steps[i].seat == seat and isinstance(steps[i].action, Draw)
        ]
        # A drawn tile is in the hand now, or it was played since without being held before.
        came = set(observation.hand) - set(self.last_hand)
        for step in steps[len(self.history) :]:
            action = step.action
            if step.seat == seat and isinstance(action, Play) and action.tile not in self.last_hand:
                came.add(action.tile)
        if len(draws) == 1 and len(came) == 1:
            position = sum(1 for e in steps[: draws[0]] if isinstance(e.action, Draw))
            self.memory.boneyard[position] = came.pop()
        self.last_hand = observation.hand
        self.history = steps
        self.memory.learn(observation, self.initial_hand)
