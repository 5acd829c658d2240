"""The memorizer: a house bot that CHEATS ON PURPOSE, to test the referee's repeat-deal check.

It must never be entered in a real tournament. It breaks the rule every bot author agrees to
(docs/writing-a-bot.md: a bot must not use what it saw in other games): one bot object lives
across matches, as a remote bot's process does, and it remembers every deal it played
(:mod:`.memory`). When a new hand is a deal it has seen under another seat rotation, it knows
the hand its old seat now holds, the tiles the others played early and the boneyard's tiles at
the positions it drew; it then searches positions with all of that pinned (:class:`Pinned`)
instead of the honest guesses. Otherwise it plays as the honest greedy bot (or, with
``honest="search"``, the search bot), so that what memory buys stands out.

The referee's check (``server/stats/repeat_deals.py``) must flag it; ``bench/repeat_deals.py``
measures how often it does.

>>> from domino_arena.sdk.rules import make_game
>>> state = make_game("straight").new_game(seed=3)
>>> bot = MemorizerBot(seed=1, max_time=None, max_samples=4)
>>> bot.choose(state.observe(state.current_seat)) in state.legal_actions()
True
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Final

from domino_arena.bots.greedy import GreedyBot
from domino_arena.bots.random_bot import RandomBot
from domino_arena.bots.search import SearchBot
from domino_arena.bots.search.sampling import STOCK, Determinizer, Hidden, determinizer
from domino_arena.bots.seeded import SeededBot
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.rules import Action, GameState, Observation, Tile
from domino_arena.sdk.rules.actions import Draw, Play

from .memory import DealMemory, HandTracker

__all__ = ["MemorizerBot", "Pinned"]

HONEST: Final = ("greedy", "random", "search")
"""How it may play the deals it does not recognize."""

LINE_GAMES: Final = frozenset({"straight", "doubles", "passing"})
"""The games it cheats in. In Moon the bidder takes the widow into its hand, so a seat's early
plays need not come from its dealt hand: it plays Moon honestly."""

MAX_DEALS_REMEMBERED: Final = 4096
"""The oldest deals are forgotten past this many (a tournament's worth, for a long process)."""


class Pinned:
    """Positions of one observation with what a remembered deal says pinned, the rest random.

    Each other seat holds the tiles known from its initial hand that it has not played, and
    the tiles it drew at boneyard positions the memory knows; the boneyard keeps its known
    tiles at their positions. The tiles still unknown fill the room left, at random.

    Raises:
        ValueError: the memory does not fit the observation (then it was not this deal).
    """

    def __init__(self, observation: Observation, memory: DealMemory) -> None:
        self.base: Determinizer = determinizer(observation)
        unseen = set(self.base.unseen)
        drawn = 0
        held: dict[int, set[Tile]] = {s: set() for s in self.base.capacity if s != STOCK}
        for seat, tiles in memory.hands.items():
            if seat in held:
                held[seat].update(t for t in tiles if t in unseen)
        for entry in observation.history:
            if isinstance(entry.action, Draw):
                tile = memory.boneyard.get(drawn)
                if tile is not None and tile in unseen and entry.seat in held:
                    held[entry.seat].add(tile)
                drawn += 1
        stock_size = self.base.capacity[STOCK]
        self.stock: list[Tile | None] = [
            t if (t := memory.boneyard.get(drawn + i)) in unseen else None
            for i in range(stock_size)
        ]
        placed = [t for tiles in held.values() for t in tiles] + [
            t for t in self.stock if t is not None
        ]
        if len(placed) != len(set(placed)):
            raise ValueError("the remembered deal puts one tile in two places")
        for seat, tiles in held.items():
            if len(tiles) > self.base.capacity[seat]:
                raise ValueError(f"the remembered deal gives seat {seat} too many tiles")
        self.held = held
        self.free = sorted(unseen - set(placed))

    def sample(self, rng: random.Random) -> Hidden:
        """Fill the room left with the unknown tiles, at random."""
        free = list(self.free)
        rng.shuffle(free)
        obs = self.base.observation
        hands: list[tuple[Tile, ...]] = []
        for seat in range(len(obs.hand_sizes)):
            if seat == obs.seat:
                hands.append(obs.hand)
                continue
            tiles = list(self.held[seat])
            while len(tiles) < self.base.capacity[seat]:
                tiles.append(free.pop())
            hands.append(tuple(sorted(tiles)))
        stock = [t if t is not None else free.pop() for t in self.stock]
        return Hidden(tuple(hands), tuple(stock))

    def determinize(self, rng: random.Random) -> GameState:
        """Return one full position: the remembered tiles where they are, the rest guessed."""
        return self.base.build(self.sample(rng))


class MemorizerBot(SearchBot):
    """The search bot with a memory of every deal it played (cheats; see the module doc).

    Args are the search bot's (``prior_z`` 0 by default: on a remembered deal the samples are
    close to the truth, so the best mean is taken), and ``honest``: how it plays a deal it does
    not recognize, ``"greedy"`` (the default), ``"search"`` or ``"random"`` (a cheat that
    hides its strength on fresh deals, and gains the most on remembered ones).

    Raises:
        ValueError: as the search bot, or an unknown ``honest``.
    """

    name = "memorizer"

    def __init__(
        self,
        seed: int,
        max_time: float | None = 0.2,
        max_samples: int | None = None,
        *,
        policy: str = "greedy",
        prior_z: float = 0.0,
        timer: Callable[[], float] = time.perf_counter,
        honest: str = "greedy",
    ) -> None:
        super().__init__(seed, max_time, max_samples, policy=policy, prior_z=prior_z, timer=timer)
        if honest not in HONEST:
            raise ValueError(
                f"memorizer: honest must be one of {', '.join(HONEST)}, got {honest!r}"
            )
        fallback = {"greedy": GreedyBot, "random": RandomBot}.get(honest)
        self.honest: Bot | None = None if fallback is None else fallback(seed)
        self.memories: list[DealMemory] = []
        self.tracking: HandTracker | None = None
        self.recognized_moves = 0
        """Decisions taken on a remembered deal (for tests and the bench)."""

    def reseed(self, seed: int) -> None:
        """Its honest play draws from the match's seed too."""
        super().reseed(seed)
        if isinstance(self.honest, SeededBot):
            self.honest.reseed(seed)

    def choose(self, observation: Observation) -> Action:
        if observation.game.name not in LINE_GAMES:
            return self._honest(observation)
        tracker = self._track(observation)
        if tracker.recognized and tracker.memory.contradicted_by(observation):
            tracker.recognized = False  # a look-alike: play the rest of the hand honestly
        if tracker.recognized and len(observation.legal_actions) > 1:
            try:
                pinned = Pinned(observation, tracker.memory)
            except ValueError:
                tracker.recognized = False  # it was not the deal it looked like
            else:
                self.recognized_moves += 1
                return self.choose_with(observation, pinned)
        return self._honest(observation)

    def _honest(self, observation: Observation) -> Action:
        if self.honest is not None:
            return self.honest.choose(observation)
        return super().choose(observation)

    def _track(self, observation: Observation) -> HandTracker:
        """Follow the hand being played, or start on a new one (recognized or not)."""
        tracker = self.tracking
        if tracker is not None and tracker.continues(observation):
            tracker.follow(observation)
            return tracker
        initial = _initial_hand(observation)
        # The remembered deal with the most evidence; the latest of equals.
        scored = [(m.evidence(observation), i) for i, m in enumerate(self.memories)]
        best = max(scored, default=(0, -1))
        memory = self.memories[best[1]] if best[0] > 0 else None
        recognized = memory is not None
        if memory is None:
            memory = DealMemory(observation.game, observation.deal)
            self.memories.append(memory)
            del self.memories[:-MAX_DEALS_REMEMBERED]
        memory.learn(observation, initial)
        tracker = HandTracker(memory, recognized, initial, observation.hand, observation.history)
        self.tracking = tracker
        return tracker


def _initial_hand(observation: Observation) -> tuple[Tile, ...]:
    """The observer's hand at the start of the deal, as far as it can tell now: its hand and
    the tiles it played (its first decision comes before it could draw)."""
    played = [
        e.action.tile
        for e in observation.history
        if e.seat == observation.seat and isinstance(e.action, Play)
    ]
    return tuple(sorted({*observation.hand, *played}))
