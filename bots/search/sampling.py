"""Determinization: deal the tiles a seat cannot see, consistently with what it has seen.

A :class:`Determinizer` is built from one :class:`~domino_arena.sdk.rules.Observation` and
nothing else, so it cannot peek at the referee's state. It works out the *unseen* tiles (the
full set minus the seat's own hand and every tile on the table, played or discarded by the seat)
and, each time :meth:`Determinizer.sample` is called, deals them at random to the other hands
(with the sizes in ``hand_sizes``) and to the *stock*: the boneyard of a line game in draw
order, the widow during Moon's bidding, or the bidder's hidden discard afterwards.

The deal respects inferences that are sound under the rules, whatever the other bots' policies:

- **Moon** (docs/rules.md 1.10): a seat that did not follow the suit led holds no tile of that suit.
- **Straight** and **Doubles** (docs/rules.md 3.6, 4.6): a draw or a pass is legal only when nothing
  fits, so every tile the seat held then fits none of the ends of that moment. A tile it holds
  now that does fit them must have come from a later draw, so such tiles number at most its
  later draws that brought a tile to keep, less the fitting tiles it has played since. With
  none left this is a plain ban; otherwise it is a limit checked by rejection.
- **Doubles** (docs/rules.md 4.3): the hand opened with the highest double dealt, so every higher
  double was in the boneyard; a seat holds at most as many of them as it has drawn tiles.

The Passing Game has no such inference: passing and drawing are voluntary there (docs/rules.md 2.5),
so neither says anything about the hand.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from domino_arena.sdk.rules import (
    DOUBLE_SIX,
    DoublesObservation,
    GameState,
    LogEntry,
    MoonObservation,
    Observation,
    PassingObservation,
    StraightLayout,
    StraightObservation,
    Tile,
)
from domino_arena.sdk.rules.actions import PASS, Draw, Pass, Play
from domino_arena.sdk.rules.moon import MOON_TILES, Phase, follows, led_suit

STOCK: Final = -1
"""The destination of tiles in no hand: the boneyard, the widow or the Moon discard."""

REJECTION_TRIES: Final = 12
"""Deals tried to satisfy the soft limits before the least-violating one is taken."""


class SamplingError(ValueError):
    """No deal satisfies the constraints (they should always be satisfiable)."""


@dataclass(frozen=True, slots=True)
class Limit:
    """At most ``at_most`` of ``tiles`` are in the hand of ``seat``."""

    seat: int
    tiles: frozenset[Tile]
    at_most: int


@dataclass(frozen=True, slots=True)
class Hidden:
    """One guess at the hidden tiles: every hand (the observer's own as it is) and the stock."""

    hands: tuple[tuple[Tile, ...], ...]
    stock: tuple[Tile, ...]
    """Boneyard in draw order; in Moon the widow (bidding) or the bidder's discard, if unseen."""


class Determinizer(ABC):
    """Samples complete positions that agree with one observation."""

    def __init__(self, observation: Observation) -> None:
        self.observation = observation
        self.seat = observation.seat
        table = set(self._seen_elsewhere(observation))
        own = set(observation.hand)
        self.unseen: tuple[Tile, ...] = tuple(
            t for t in self._tile_set() if t not in own and t not in table
        )
        sizes = {s: n for s, n in enumerate(observation.hand_sizes) if s != self.seat}
        stock = len(self.unseen) - sum(sizes.values())
        if stock < 0:
            raise SamplingError(
                f"{len(self.unseen)} unseen tiles cannot fill hands of sizes {sizes}"
            )
        self.capacity: dict[int, int] = {**sizes, STOCK: stock}
        limits = list(self._limits(observation))
        banned: dict[int, set[Tile]] = {}
        self.soft: list[Limit] = []
        for limit in limits:
            if limit.seat == self.seat or limit.seat not in sizes:
                continue
            relevant = limit.tiles.intersection(self.unseen)
            if limit.at_most >= min(len(relevant), sizes[limit.seat]):
                continue
            if limit.at_most == 0:
                banned.setdefault(limit.seat, set()).update(relevant)
            else:
                self.soft.append(Limit(limit.seat, frozenset(relevant), limit.at_most))
        self.banned: dict[int, frozenset[Tile]] = {s: frozenset(b) for s, b in banned.items()}

    # -- what each game supplies ----------------------------------------------------------

    @staticmethod
    @abstractmethod
    def _tile_set() -> tuple[Tile, ...]:
        """Every tile of the game's set."""

    @abstractmethod
    def _seen_elsewhere(self, observation: Observation) -> Iterable[Tile]:
        """Tiles the observer has seen outside its hand: the table, its own discard."""

    @abstractmethod
    def _limits(self, observation: Observation) -> Iterable[Limit]:
        """The sound inferences about the other hands."""

    @abstractmethod
    def build(self, hidden: Hidden) -> GameState:
        """Return the full position of the observation with ``hidden`` filled in."""

    # -- sampling ---------------------------------------------------------------------------

    def sample(self, rng: random.Random) -> Hidden:
        """Deal the unseen tiles at random, within the bans, trying to meet the soft limits."""
        best: dict[int, list[Tile]] | None = None
        best_excess = 0
        for _ in range(REJECTION_TRIES if self.soft else 1):
            try:
                dealt = _assign(self.unseen, self.capacity, self.banned, rng)
            except SamplingError:
                # The bans are sound, so this should not happen; never let it stop play.
                dealt = _assign(self.unseen, self.capacity, {}, rng)
            excess = sum(
                max(0, sum(1 for t in dealt[limit.seat] if t in limit.tiles) - limit.at_most)
                for limit in self.soft
            )
            if best is None or excess < best_excess:
                best, best_excess = dealt, excess
            if excess == 0:
                break
        assert best is not None
        obs = self.observation
        hands = tuple(
            obs.hand if s == self.seat else tuple(sorted(best[s]))
            for s in range(len(obs.hand_sizes))
        )
        return Hidden(hands, tuple(best[STOCK]))

    def determinize(self, rng: random.Random) -> GameState:
        """Return one full position consistent with the observation."""
        return self.build(self.sample(rng))


def _assign(
    tiles: Sequence[Tile],
    capacity: dict[int, int],
    banned: dict[int, frozenset[Tile]],
    rng: random.Random,
) -> dict[int, list[Tile]]:
    """Deal ``tiles`` to destinations with exactly ``capacity`` each, never into a ban.

    Restricted tiles go first, one at a time, to a destination picked with weight equal to its
    room left, among those that keep a complete deal possible (Hall's condition, checked over
    the few destinations); the free tiles then fill the room left in shuffled order.
    """
    dests = list(capacity)
    index = {d: i for i, d in enumerate(dests)}
    full = (1 << len(dests)) - 1
    masks: dict[Tile, int] = {}
    for dest, tiles_banned in banned.items():
        bit = 1 << index[dest]
        for tile in tiles_banned:
            masks[tile] = masks.get(tile, full) & ~bit
    room = [capacity[d] for d in dests]
    out: dict[int, list[Tile]] = {d: [] for d in dests}
    restricted = [t for t in tiles if t in masks]
    free = [t for t in tiles if t not in masks]
    rng.shuffle(restricted)
    pending = Counter(masks[t] for t in restricted)
    if not _feasible(pending, room):
        raise SamplingError("no deal of the unseen tiles meets the bans")
    for tile in restricted:
        mask = masks[tile]
        pending[mask] -= 1
        options: list[int] = []
        weights: list[int] = []
        for i in range(len(dests)):
            if mask >> i & 1 and room[i] > 0:
                room[i] -= 1
                if _feasible(pending, room):
                    options.append(i)
                    weights.append(room[i] + 1)
                room[i] += 1
        if not options:
            raise SamplingError(f"no destination left for {tile}")
        pick = options[0] if len(options) == 1 else rng.choices(options, weights)[0]
        room[pick] -= 1
        out[dests[pick]].append(tile)
    rng.shuffle(free)
    at = 0
    for i, dest in enumerate(dests):
        out[dest].extend(free[at : at + room[i]])
        at += room[i]
    if at != len(free):
        raise SamplingError("the unseen tiles do not match the hand sizes")
    return out


def _feasible(pending: Counter[int], room: list[int]) -> bool:
    """Hall's condition: every set of destinations has room for the tiles confined to it."""
    masks = [(m, n) for m, n in pending.items() if n > 0]
    if not masks:
        return True
    for subset in range(1, 1 << len(room)):
        need = sum(n for m, n in masks if m & ~subset == 0)
        if need and need > sum(room[i] for i in range(len(room)) if subset >> i & 1):
            return False
    return True


# -- line games ---------------------------------------------------------------------------


def _draw_limits(
    history: Sequence[LogEntry], fitting: Sequence[frozenset[Tile] | None]
) -> Iterable[Limit]:
    """Limits from forced draws and passes (Straight, Doubles).

    ``fitting[i]`` is the set of tiles that would have fitted the layout just before step
    ``i`` of the deal. A seat that drew or passed at step ``i`` held none of them, so any of
    them it has held since came from a later draw: the ones it still holds, and the ones it
    played other than straight after drawing them. A draw whose tile fits is played at once
    (docs/rules.md 3.6, 4.6), so such a draw brings no tile to keep; every other draw brings one.
    """
    for i, entry in enumerate(history):
        if not isinstance(entry.action, Draw | Pass):
            continue
        fits = fitting[i]
        if fits is None:
            continue
        seat = entry.seat
        # The tile drawn at step i fitted nothing if the seat then did anything but play it;
        # when the draw is the last step, the seat is still to play and it may fit.
        kept = 1 if i + 1 == len(history) and isinstance(entry.action, Draw) else 0
        for j in range(i + 1, len(history)):
            step = history[j]
            if step.seat != seat:
                continue
            if isinstance(step.action, Draw):
                if not _played_next(history, j):
                    kept += 1
            elif isinstance(step.action, Play) and step.action.tile in fits:
                drew_it = history[j - 1].seat == seat and isinstance(history[j - 1].action, Draw)
                if not drew_it:
                    kept -= 1
        yield Limit(seat, fits, max(kept, 0))


def _played_next(history: Sequence[LogEntry], j: int) -> bool:
    """Whether the seat that drew at step ``j`` played (the drawn tile) at step ``j + 1``."""
    if j + 1 >= len(history):
        return False
    step = history[j + 1]
    return step.seat == history[j].seat and isinstance(step.action, Play)


class PassingDeterminizer(Determinizer):
    """The Passing Game: no inference, passing and drawing are voluntary (docs/rules.md 2.5)."""

    observation: PassingObservation

    @staticmethod
    def _tile_set() -> tuple[Tile, ...]:
        return DOUBLE_SIX

    def _seen_elsewhere(self, observation: Observation) -> Iterable[Tile]:
        assert isinstance(observation, PassingObservation)
        return (Tile(w, e) for w, e in observation.line)

    def _limits(self, observation: Observation) -> Iterable[Limit]:
        return ()

    def build(self, hidden: Hidden) -> GameState:
        obs = self.observation
        return obs.game.from_position(
            hands=hidden.hands,
            boneyard=hidden.stock,
            line=[f"{w}-{e}" for w, e in obs.line],
            seat=obs.current_seat,
            passes=obs.passes,
            scores=list(obs.scores),
            opener=obs.opener,
            deal=obs.deal,
        )


class StraightDeterminizer(Determinizer):
    """Straight Dominoes: forced draws and passes mean nothing fitted (docs/rules.md 3.6)."""

    observation: StraightObservation

    @staticmethod
    def _tile_set() -> tuple[Tile, ...]:
        return DOUBLE_SIX

    def _seen_elsewhere(self, observation: Observation) -> Iterable[Tile]:
        assert isinstance(observation, StraightObservation)
        return observation.layout.tiles()

    def _limits(self, observation: Observation) -> Iterable[Limit]:
        assert isinstance(observation, StraightObservation)
        layout = StraightLayout()
        fitting: list[frozenset[Tile] | None] = []
        for entry in observation.history:
            numbers = {end.number for end in layout.open_ends}
            fitting.append(
                frozenset(t for t in DOUBLE_SIX if t.high in numbers or t.low in numbers)
                if numbers
                else None
            )
            action = entry.action
            if isinstance(action, Play):
                layout = layout.place(action.tile, action.end)
        return _draw_limits(observation.history, fitting)

    def build(self, hidden: Hidden) -> GameState:
        obs = self.observation
        layout = obs.layout
        if layout.spinner is None:
            return obs.game.from_position(
                hands=hidden.hands,
                boneyard=hidden.stock,
                line=[f"{w}-{e}" for w, e in layout.line],
                seat=obs.current_seat,
                scores=list(obs.scores),
                opener=obs.opener,
                deal=obs.deal,
            )
        arms = zip(("W", "E", "N", "S"), layout.arms, strict=True)
        return obs.game.from_position(
            hands=hidden.hands,
            boneyard=hidden.stock,
            spinner=layout.spinner,
            arms={name: [f"{i}-{o}" for i, o in arm] for name, arm in arms},
            seat=obs.current_seat,
            scores=list(obs.scores),
            opener=obs.opener,
            deal=obs.deal,
        )


class DoublesDeterminizer(Determinizer):
    """Doubles: forced draws and passes (4.6), and the opening double was the highest (4.3)."""

    observation: DoublesObservation

    @staticmethod
    def _tile_set() -> tuple[Tile, ...]:
        return DOUBLE_SIX

    def _seen_elsewhere(self, observation: Observation) -> Iterable[Tile]:
        assert isinstance(observation, DoublesObservation)
        return observation.placed

    def _limits(self, observation: Observation) -> Iterable[Limit]:
        assert isinstance(observation, DoublesObservation)
        history = observation.history
        counts = [0] * 7
        unlocked: set[int] = set()
        fitting: list[frozenset[Tile] | None] = []
        for entry in history:
            if any(counts):
                fitting.append(
                    frozenset(t for t in DOUBLE_SIX if _doubles_fits(t, counts, unlocked))
                )
            else:
                fitting.append(None)
            action = entry.action
            if isinstance(action, Play):
                _doubles_place(action, counts, unlocked)
        yield from _draw_limits(history, fitting)
        opening = next((e.action for e in history if isinstance(e.action, Play)), None)
        if opening is None and observation.current_seat == observation.seat:
            # This seat opens, so it holds the highest double dealt (docs/rules.md 4.3).
            top = max((t.high for t in observation.hand if t.is_double), default=-1)
            higher = frozenset(Tile(n, n) for n in range(top + 1, 7))
            for seat in range(len(observation.hand_sizes)):
                yield Limit(seat, higher, 0)
        elif isinstance(opening, Play):
            higher = frozenset(Tile(n, n) for n in range(opening.tile.high + 1, 7))
            # Every higher double was in the boneyard when the hand was dealt (docs/rules.md 4.3):
            # treat the deal itself as the event before all of each seat's draws.
            start = [LogEntry(s, PASS) for s in range(len(observation.hand_sizes))]
            before: list[frozenset[Tile] | None] = [higher] * len(start)
            before.extend([None] * len(history))
            yield from _draw_limits([*start, *history], before)

    def build(self, hidden: Hidden) -> GameState:
        obs = self.observation
        return obs.game.from_position(
            hands=hidden.hands,
            boneyard=hidden.stock,
            laid=list(obs.placed),
            ends=[end.number for end in obs.open_ends],
            unlocked=sorted(obs.unlocked),
            seat=obs.current_seat,
            drawn=obs.drawn,
            scores=list(obs.scores),
            opener=obs.opener,
            deal=obs.deal,
        )


def _doubles_fits(tile: Tile, counts: list[int], unlocked: set[int]) -> bool:
    """docs/rules.md 4.5: a double needs an end showing its number; others an unlocked end."""
    if tile.is_double:
        return counts[tile.high] > 0
    return any(counts[n] > 0 and n in unlocked for n in (tile.high, tile.low))


def _doubles_place(play: Play, counts: list[int], unlocked: set[int]) -> None:
    """Lay a tile as docs/rules.md 4.4 does, on ``counts`` (open ends per number)."""
    tile = play.tile
    if play.end is None:
        counts[tile.high] = 4
        unlocked.add(tile.high)
        return
    shown = int(play.end)
    if tile.is_double:
        counts[shown] += 2
        unlocked.add(shown)
    else:
        counts[shown] -= 1
        counts[tile.other(shown)] += 1


# -- Moon -----------------------------------------------------------------------------------


class MoonDeterminizer(Determinizer):
    """Three-Player Moon: a seat that did not follow suit is void in it (docs/rules.md 1.10)."""

    observation: MoonObservation

    @staticmethod
    def _tile_set() -> tuple[Tile, ...]:
        return MOON_TILES

    def _seen_elsewhere(self, observation: Observation) -> Iterable[Tile]:
        assert isinstance(observation, MoonObservation)
        for trick in observation.tricks:
            yield from (t for _, t in trick.plays)
        yield from (t for _, t in observation.trick)
        if observation.discard is not None:
            yield observation.discard

    def _limits(self, observation: Observation) -> Iterable[Limit]:
        assert isinstance(observation, MoonObservation)
        trump = observation.trump
        if trump is None:
            return
        plays_by_trick = [tr.plays for tr in observation.tricks]
        if observation.trick:
            plays_by_trick.append(observation.trick)
        for plays in plays_by_trick:
            suit = led_suit(plays[0][1], trump)
            for seat, tile in plays[1:]:
                if not follows(tile, suit, trump):
                    void = frozenset(t for t in MOON_TILES if follows(t, suit, trump))
                    yield Limit(seat, void, 0)

    def build(self, hidden: Hidden) -> GameState:
        obs = self.observation
        mine = obs.bidder == obs.seat
        widow = obs.widow if mine else None
        discard = obs.discard if mine else None
        if obs.phase is Phase.BIDDING:
            widow = hidden.stock[0]
        elif not mine and obs.phase is not Phase.DISCARD:
            discard = hidden.stock[0]
        return obs.game.from_position(
            hands=hidden.hands,
            boneyard=None if widow is None else [widow],
            opener=obs.opener,
            bids=[v for _, v in obs.bids],
            discard=discard,
            trump=obs.trump,
            tricks=list(obs.tricks) if obs.phase is Phase.PLAYING else None,
            trick=[t for _, t in obs.trick],
            scores=list(obs.scores),
            deal=obs.deal,
        )


DETERMINIZERS: Final[dict[str, type[Determinizer]]] = {
    "passing": PassingDeterminizer,
    "straight": StraightDeterminizer,
    "doubles": DoublesDeterminizer,
    "moon": MoonDeterminizer,
}
"""Registry name of each game -> its determinizer."""


def determinizer(observation: Observation) -> Determinizer:
    """Return the determinizer for the game of ``observation``, built from it alone.

    Raises:
        KeyError: the game has no determinizer.
    """
    return DETERMINIZERS[observation.game.name](observation)
