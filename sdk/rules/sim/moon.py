"""The simulator of Three-Player Moon (docs/rules.md 1): bidding, discard, trumps and seven tricks.

The phases run as in the engine (``BIDDING -> DISCARD -> TRUMP -> PLAYING``, then ``DEAL`` or
``OVER``). Suits, following and trick winners come from tables built here once per trump choice
from the engine's public rule functions (:func:`~..moon.is_trump`, :func:`~..moon.follows`,
:func:`~..moon.rank`), so the hot path is a few tuple lookups.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Final

from ..actions import NO_TRUMP, PASS, Action, Bid, Discard, Play, Trump
from ..moon import (
    BID_VALUES,
    MOON_BID,
    PLAYERS,
    TARGET,
    TRICKS,
    TRUMP_CHOICES,
    TRUMP_LED,
    MoonObservation,
    MoonState,
    Phase,
    Trick,
    follows,
    is_trump,
    led_suit,
    rank,
)
from ..state import CHANCE, TERMINAL, Game, Observation
from ..tiles import DOUBLE_SIX, Tile
from .base import Sim, engine_common, remove_tile

_PLAY: Final = tuple(Play(t) for t in DOUBLE_SIX)
_DISCARD: Final = tuple(Discard(t) for t in DOUBLE_SIX)
_BIDS_ABOVE: Final[dict[int, tuple[Action, ...]]] = {
    high: (*(Bid(v) for v in BID_VALUES if v > high), PASS) for high in (0, *BID_VALUES)
}
"""The legal bidding turns after each highest bid so far (after a 7, only 21 or pass)."""
_TRUMPS: Final[tuple[Action, ...]] = tuple(Trump(x) for x in TRUMP_CHOICES)

_SUITS: Final = range(TRUMP_LED + 1)
_LED: Final = tuple(tuple(led_suit(t, tr) for t in DOUBLE_SIX) for tr in range(NO_TRUMP + 1))
"""``_LED[trump][tile.index]``: the suit a lead of the tile calls for (docs/rules.md 1.9)."""
_FOLLOWS: Final = tuple(
    tuple(tuple(follows(t, s, tr) for t in DOUBLE_SIX) for s in _SUITS)
    for tr in range(NO_TRUMP + 1)
)
"""``_FOLLOWS[trump][suit][tile.index]`` (docs/rules.md 1.10)."""


def _power(tile: Tile, suit: int, trump: int) -> int:
    """Trick-taking power (docs/rules.md 1.11): a trump beats the suit led, which beats the rest."""
    if is_trump(tile, trump):
        return 1000 + rank(tile, TRUMP_LED, trump)
    return rank(tile, suit, trump) if follows(tile, suit, trump) else -1


_POWER: Final = tuple(
    tuple(tuple(_power(t, s, tr) for t in DOUBLE_SIX) for s in _SUITS) for tr in range(NO_TRUMP + 1)
)


class MoonSim(Sim):
    """Three-Player Moon, one deal."""

    __slots__ = (
        "bidder",
        "bids",
        "contract",
        "discard",
        "leader",
        "phase",
        "played",
        "trick",
        "trump",
        "widow",
        "won",
    )

    game_name: ClassVar[str] = "moon"
    phase: Phase
    widow: Tile | None
    discard: Tile | None
    bids: tuple[tuple[int, int | None], ...]
    bidder: int | None
    contract: int | None
    trump: int | None
    leader: int | None
    trick: tuple[tuple[int, Tile], ...]
    won: tuple[int, ...]
    played: list[Tile]
    """The tiles of the completed tricks of this deal, in play order."""

    def __init__(self, state: MoonState) -> None:
        self._init_common(state)
        self._set_deal(state.phase, state.widow, state.discard, state.bids, state.tricks)
        self.bidder = state.bidder
        self.contract = state.contract
        self.trump = state.trump
        self.leader = state.leader
        self.trick = state.trick
        self.won = state.won

    @classmethod
    def from_parts(
        cls,
        game: Game,
        *,
        seat: int,
        hands: Sequence[Sequence[Tile]],
        scores: Sequence[int],
        phase: Phase,
        widow: Tile | None,
        discard: Tile | None,
        bids: tuple[tuple[int, int | None], ...],
        bidder: int | None,
        contract: int | None,
        trump: int | None,
        leader: int | None,
        trick: tuple[tuple[int, Tile], ...],
        tricks: Sequence[Trick],
        won: tuple[int, ...],
    ) -> MoonSim:
        """A position mid-deal from its parts (a search's sampled deal), as the engine's
        ``from_position`` would build it, without its checks."""
        sim = cls.__new__(cls)
        sim._set_common(game, seat, hands, scores)
        sim._set_deal(phase, widow, discard, bids, tricks)
        sim.bidder = bidder
        sim.contract = contract
        sim.trump = trump
        sim.leader = leader
        sim.trick = trick
        sim.won = won
        return sim

    @classmethod
    def from_observation(
        cls, observation: Observation, hands: Sequence[Sequence[Tile]], stock: Sequence[Tile]
    ) -> MoonSim:
        obs = observation
        assert isinstance(obs, MoonObservation)
        mine = obs.bidder == obs.seat
        widow = obs.widow if mine else None
        discard = obs.discard if mine else None
        if obs.phase is Phase.BIDDING:
            widow = stock[0]
        elif not mine and obs.phase is not Phase.DISCARD:
            discard = stock[0]
        return cls.from_parts(
            obs.game,
            seat=obs.current_seat,
            hands=hands,
            scores=obs.scores,
            phase=obs.phase,
            widow=widow,
            discard=discard,
            bids=obs.bids,
            bidder=obs.bidder,
            contract=obs.contract,
            trump=obs.trump,
            leader=obs.leader,
            trick=obs.trick,
            tricks=obs.tricks,
            won=obs.tricks_won,
        )

    @staticmethod
    def snapshot_of(state: MoonState) -> tuple[Any, ...]:
        seat, hands, scores, winner = engine_common(state)
        deal = (state.phase, state.widow, state.discard, state.bids, state.bidder, state.contract)
        play = (state.trump, state.leader, state.trick, state.won)
        played = tuple(t for trick in state.tricks for _, t in trick.plays)
        return (seat, hands, scores, winner, *deal, *play, played)

    def _set_deal(
        self,
        phase: Phase,
        widow: Tile | None,
        discard: Tile | None,
        bids: tuple[tuple[int, int | None], ...],
        tricks: Sequence[Trick],
    ) -> None:
        self.phase = phase
        self.widow = widow
        self.discard = discard
        self.bids = bids
        self.played = [t for trick in tricks for _, t in trick.plays]

    def _compute_legal(self) -> tuple[Action, ...]:
        phase = self.phase
        if phase is Phase.PLAYING:
            hand = self.hands[self.seat]
            trick = self.trick
            if trick:
                trump = self.trump
                assert trump is not None
                fits = _FOLLOWS[trump][_LED[trump][trick[0][1].index]]
                legal = tuple(_PLAY[t.index] for t in hand if fits[t.index])
                if legal:
                    return legal
            return tuple(_PLAY[t.index] for t in hand)
        if phase is Phase.BIDDING:
            high = 0
            for _, value in self.bids:
                if value is not None and value > high:
                    high = value
            return _BIDS_ABOVE[high]
        if phase is Phase.DISCARD:
            return tuple(_DISCARD[t.index] for t in self.hands[self.seat])
        if phase is Phase.TRUMP:
            return _TRUMPS
        return ()

    def push(self, action: Action) -> None:
        seat = self.seat
        self._undo.append(
            (
                action,
                seat,
                self.phase,
                self.bids,
                self.bidder,
                self.contract,
                self.trump,
                self.leader,
                self.trick,
                self.won,
                self.discard,
                self.scores,
                self.winner,
                self._legal,
                len(self.played),
                self._push(action, seat),
            )
        )
        self._legal = None

    def _push(self, action: Action, seat: int) -> int:
        """Apply ``action``; return where a tile left the mover's hand (-1 if none did)."""
        phase = self.phase
        if phase is Phase.PLAYING:
            assert isinstance(action, Play)
            return self._play(action.tile, seat)
        if phase is Phase.BIDDING:
            self._bid(action.value if type(action) is Bid else None, seat)
            return -1
        if phase is Phase.DISCARD:
            assert isinstance(action, Discard) and action.tile is not None
            self.discard = action.tile
            self.phase = Phase.TRUMP
            return remove_tile(self.hands[seat], action.tile)
        assert isinstance(action, Trump)
        self.trump = action.suit
        self.phase = Phase.PLAYING
        self.leader = seat
        return -1

    def pop(self) -> Action:
        (
            action,
            seat,
            phase,
            self.bids,
            bidder,
            self.contract,
            self.trump,
            self.leader,
            self.trick,
            self.won,
            self.discard,
            self.scores,
            self.winner,
            self._legal,
            played,
            at,
        ) = self._undo.pop()
        if at >= 0:
            self.hands[seat].insert(at, action.tile)
        elif phase is Phase.BIDDING and self.bidder is not None and bidder is None:
            # The last bid picked up the widow into the bidder's hand.
            assert self.widow is not None
            self.hands[self.bidder].remove(self.widow)
        del self.played[played:]
        self.seat = seat
        self.phase = phase
        self.bidder = bidder
        action_: Action = action
        return action_

    def _bid(self, value: int | None, seat: int) -> None:
        """docs/rules.md 1.5: one turn each; 21 ends the bidding; three passes void the deal."""
        self.bids = bids = (*self.bids, (seat, value))
        if value != MOON_BID and len(bids) < PLAYERS:
            self.seat = (seat + 1) % PLAYERS
            return
        best: tuple[int, int] | None = None
        for who, bid in bids:
            if bid is not None and (best is None or bid > best[1]):
                best = (who, bid)
        if best is None:
            self.phase = Phase.DEAL
            self.seat = CHANCE
            return
        self.bidder, self.contract = best
        self.seat = best[0]
        self.phase = Phase.DISCARD
        widow = self.widow
        assert widow is not None
        hand = self.hands[best[0]]
        at = 0
        while at < len(hand) and hand[at].index < widow.index:
            at += 1
        hand.insert(at, widow)

    def _play(self, tile: Tile, seat: int) -> int:
        at = remove_tile(self.hands[seat], tile)
        trick = self.trick = (*self.trick, (seat, tile))
        if len(trick) < PLAYERS:
            self.seat = (seat + 1) % PLAYERS
            return at
        trump = self.trump
        assert trump is not None
        power = _POWER[trump][_LED[trump][trick[0][1].index]]
        winner, best = trick[0][0], -2
        for who, played in trick:
            if power[played.index] > best:
                winner, best = who, power[played.index]
        won = list(self.won)
        won[winner] += 1
        self.won = tuple(won)
        self.played.extend(t for _, t in trick)
        self.trick = ()
        if sum(won) < TRICKS:
            self.leader = self.seat = winner
        else:
            self._score_hand()
        return at

    def _score_hand(self) -> None:
        """docs/rules.md 1.12 scores the hand; 1.13 checks for the end of the game."""
        bidder, contract = self.bidder, self.contract
        assert bidder is not None and contract is not None
        took = self.won[bidder]
        made = took == TRICKS if contract == MOON_BID else took >= contract
        points = list(self.won)
        points[bidder] = contract if made else -contract
        scores = self.scores = tuple(s + p for s, p in zip(self.scores, points, strict=True))
        self.leader = None
        top = max(scores)
        if made and contract == MOON_BID:
            self.winner = bidder
        elif top >= TARGET and scores.count(top) == 1:
            self.winner = scores.index(top)
        if self.winner is None:
            self.phase, self.seat = Phase.DEAL, CHANCE
        else:
            self.phase, self.seat = Phase.OVER, TERMINAL

    def snapshot(self) -> tuple[Any, ...]:
        return (
            self.seat,
            tuple(map(tuple, self.hands)),
            self.scores,
            self.winner,
            self.phase,
            self.widow,
            self.discard,
            self.bids,
            self.bidder,
            self.contract,
            self.trump,
            self.leader,
            self.trick,
            self.won,
            tuple(self.played),
        )
