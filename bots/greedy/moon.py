"""A greedy Three-Player Moon player: one-ply rules of thumb, no search.

It counts likely tricks to bid (sure top trumps, half a trick for lesser trumps, most of a trick
for each double that stays master of its suit), keeps the eight tiles that count best when it
discards, names the trump that counts best, and in play leads its masters (trumps first) or its
weakest tile, and follows with the cheapest tile that takes the trick, else its weakest tile.
It sees only its observation and always answers with one of its legal actions.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from domino_arena.sdk.rules.actions import (
    NO_TRUMP,
    Action,
    Bid,
    Discard,
    Pass,
    Play,
    Trump,
)
from domino_arena.sdk.rules.moon import (
    MOON_TILES,
    TRUMP_CHOICES,
    TRUMP_LED,
    MoonObservation,
    Phase,
    is_trump,
    led_suit,
    rank,
    trick_winner,
)
from domino_arena.sdk.rules.tiles import Tile

WIDOW_HOPE = 0.5
"""Tricks a bidder expects to gain from picking up the widow and discarding its worst tile."""


def _trumps_best_first(trump: int) -> tuple[Tile, ...]:
    trumps = [t for t in MOON_TILES if is_trump(t, trump)]
    return tuple(sorted(trumps, key=lambda t: -rank(t, TRUMP_LED, trump)))


_TRUMP_ORDER: dict[int, tuple[Tile, ...]] = {t: _trumps_best_first(t) for t in TRUMP_CHOICES}
"""Every trump tile of each trump choice, best first."""


def choose(observation: MoonObservation, rng: random.Random) -> Action:
    """Return one of ``observation.legal_actions``."""
    return choose_from(
        observation.legal_actions,
        observation.hand,
        rng,
        phase=observation.phase,
        seat=observation.seat,
        trump=observation.trump,
        trick=observation.trick,
        played=(t for done in observation.tricks for _, t in done.plays),
    )


def choose_from(
    legal: Sequence[Action],
    hand: Sequence[Tile],
    rng: random.Random,
    *,
    phase: Phase,
    seat: int,
    trump: int | None,
    trick: Sequence[tuple[int, Tile]],
    played: Iterable[Tile],
) -> Action:
    """:func:`choose` from the parts of a position it reads: the mover's legal actions, hand
    and seat, the phase, trumps, the current trick and the tiles of the tricks done, so search
    can play the same rule on its simulator."""
    if len(legal) == 1:
        return legal[0]
    if phase is Phase.BIDDING:
        return _bid(hand, legal)
    if phase is Phase.DISCARD:
        return _discard(hand, legal)
    if phase is Phase.TRUMP:
        return _trump(hand, legal)
    if phase is Phase.PLAYING:
        assert trump is not None
        return _play(hand, legal, seat=seat, trump=trump, trick=trick, played=played)
    return rng.choice(legal)


# -- counting tricks ----------------------------------------------------------------------------


def estimate(hand: Iterable[Tile], trump: int) -> float:
    """Return a rough count of the tricks ``hand`` takes with ``trump`` as trumps."""
    held = frozenset(hand)
    tricks = 0.0
    master = True
    for tile in _TRUMP_ORDER[trump]:
        if tile in held:
            tricks += 1.0 if master else 0.5
        else:
            master = False
    for tile in held:
        if tile.is_double and not is_trump(tile, trump):
            # Master of its suit; with trumps about it can still be ruffed.
            tricks += 0.9 if trump == NO_TRUMP else 0.6
    return tricks


def _best_trump(hand: Sequence[Tile]) -> tuple[float, int]:
    return max((estimate(hand, trump), -trump) for trump in TRUMP_CHOICES)


def _bid(hand: Sequence[Tile], legal: Sequence[Action]) -> Action:
    tricks, _ = _best_trump(hand)
    hope = int(tricks + WIDOW_HOPE)
    bids = [a for a in legal if isinstance(a, Bid) and a.value <= min(hope, 7)]
    if hope >= 7 and tricks >= 6.5:
        bids += [a for a in legal if isinstance(a, Bid) and a.value == 21]
    if not bids:
        return next(a for a in legal if isinstance(a, Pass))
    return max(bids, key=lambda a: a.value if isinstance(a, Bid) else 0)


def _discard(hand: Sequence[Tile], legal: Sequence[Action]) -> Action:
    def kept_value(action: Action) -> tuple[float, int]:
        assert isinstance(action, Discard) and action.tile is not None
        rest = [t for t in hand if t is not action.tile]
        return (_best_trump(rest)[0], -action.tile.pips)

    return max(legal, key=kept_value)


def _trump(hand: Sequence[Tile], legal: Sequence[Action]) -> Action:
    _, best = _best_trump(hand)
    return next(a for a in legal if isinstance(a, Trump) and a.suit == -best)


# -- playing tricks -----------------------------------------------------------------------------


def _strength(tile: Tile, trump: int) -> int:
    """Order tiles from weakest to strongest to keep the strong ones for later."""
    if is_trump(tile, trump):
        return 1000 + rank(tile, TRUMP_LED, trump)
    return (100 if tile.is_double else 0) + tile.pips


def _play(
    hand: Sequence[Tile],
    legal: Sequence[Action],
    *,
    seat: int,
    trump: int,
    trick: Sequence[tuple[int, Tile]],
    played: Iterable[Tile],
) -> Action:
    tiles = [a.tile for a in legal if isinstance(a, Play)]
    if not trick:
        return Play(_lead(hand, played, tiles, trump))
    winners = [t for t in tiles if trick_winner([*trick, (seat, t)], trump) == seat]
    if winners:
        return Play(min(winners, key=lambda t: _strength(t, trump)))
    return Play(min(tiles, key=lambda t: _strength(t, trump)))


def _lead(hand: Sequence[Tile], played: Iterable[Tile], tiles: Sequence[Tile], trump: int) -> Tile:
    """Lead a master tile, trumps first; with none, the weakest tile."""
    seen = set(hand)
    seen.update(played)
    unseen = [t for t in MOON_TILES if t not in seen]
    masters = []
    for tile in tiles:
        suit = led_suit(tile, trump)
        if all(trick_winner([(0, tile), (1, other)], trump) == 0 for other in unseen):
            masters.append((suit == TRUMP_LED, _strength(tile, trump), tile))
        elif suit != TRUMP_LED and _beaten_only_by_trumps(tile, unseen, trump):
            masters.append((False, _strength(tile, trump) - 2000, tile))
    if masters:
        return max(masters, key=lambda m: (m[0], m[1]))[2]
    return min(tiles, key=lambda t: _strength(t, trump))


def _beaten_only_by_trumps(tile: Tile, unseen: Sequence[Tile], trump: int) -> bool:
    return all(
        is_trump(other, trump) or trick_winner([(0, tile), (1, other)], trump) == 0
        for other in unseen
    )
