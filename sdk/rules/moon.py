"""Three-Player Moon: an auction, a widow, trumps and seven tricks (docs/rules.md section 1).

Decisions of docs/rules.md 5.1 followed here: the bidder always picks up the widow and discards one
of eight tiles, possibly the widow itself (M1), before naming trumps (M2); three passes void the
deal and the first bidder still moves on one seat (M3, M4); 21 may be bid at any turn and is the
only bid left after a 7 (M5); a non-trump lead's suit is its higher end, a double's its number (M6);
any non-trump tile holding the suit's number follows it (M7); a suit runs double first, then by
the other end (M8); doubles as trumps run 6-6 down to 0-0 (M9); DOUBLES and 0 are legal trumps
(M10, M11); with no trump the doubles stay high (M12); all seven tricks are played (M13); the
opponents always score their tricks (M14); a made 21 wins at once, a failed one costs 21 (M15);
the game ends after a hand with a unique highest score of 21 or more (M16); scores may go
negative (M17); any tile may be led (M19).

A hand is a phase machine, as in OpenSpiel's hearts: ``BIDDING -> DISCARD -> TRUMP -> PLAYING``,
then ``DEAL`` (the chance step between hands, docs/rules.md X6) or ``OVER``. Each phase has its own
``_legal_<phase>`` method. Suits, following and who wins a trick live in :mod:`.moon_tricks`;
explicit positions are checked in :mod:`.moon_position`.

>>> state = MoonGame().new_game(seed=3, first_seat=0)
>>> [str(a) for a in state.legal_actions()]
['bid 4', 'bid 5', 'bid 6', 'bid 7', 'bid 21', 'pass']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Final

from .actions import (
    DEAL,
    PASS,
    Action,
    Bid,
    Deal,
    Discard,
    Pass,
    Play,
    Trump,
)
from .dealing import deal_round_robin
from .moon_position import PositionBuilder
from .moon_tricks import (
    BID_VALUES,
    FOLLOWS_SUIT,
    HAND_SIZE,
    LED_SUIT,
    MOON_BID,
    MOON_TILES,
    PLAYERS,
    TARGET,
    TRICKS,
    TRUMP_CHOICES,
    TRUMP_LED,
    Trick,
    follows,
    is_trump,
    led_suit,
    new_trick,
    rank,
    suit_name,
    trick_winner,
)
from .moon_view import MoonObservation, moon_observation
from .state import (
    CHANCE,
    TERMINAL,
    Game,
    GameState,
    HandEnd,
    HandResult,
    Outcome,
    Phase,
)
from .tiles import DOUBLE_SIX, TILE_KEY, Tile

__all__ = [
    "BID_VALUES",
    "HAND_SIZE",
    "MOON_BID",
    "MOON_TILES",
    "PLAYERS",
    "TARGET",
    "TRICKS",
    "TRUMP_CHOICES",
    "TRUMP_LED",
    "MoonGame",
    "MoonObservation",
    "MoonState",
    "Phase",
    "Trick",
    "follows",
    "is_trump",
    "led_suit",
    "rank",
    "suit_name",
    "trick_winner",
]
"""Moon's public names, those of :mod:`.moon_tricks` included, so ``rules.moon`` is one place."""


# -- interned actions: legal_actions hands out the same objects every time --------------------

_PLAY: Final = tuple(Play(t) for t in DOUBLE_SIX)
_DISCARD: Final = tuple(Discard(t) for t in DOUBLE_SIX)
_BID: Final = {v: Bid(v) for v in BID_VALUES}
_BIDS_ABOVE: Final = {
    high: tuple(_BID[v] for v in BID_VALUES if v > high) for high in (0, *BID_VALUES)
}
_TRUMPS: Final[tuple[Action, ...]] = tuple(Trump(x) for x in TRUMP_CHOICES)


@dataclass(frozen=True, slots=True)
class MoonGame(Game):
    """Three-Player Moon: three players, each alone, to 21 points.

    No options: the game plays on by the rules until one score is alone at 21 or more, or a bid
    of 21 is made (docs/rules.md 1.13), however many deals that takes. Failed contracts drive scores
    down, and reckless bidders (a random bot bids 21 on half the deals) can play for thousands
    of deals; a cap on deals is the referee's policy (``max_deals``, docs/rules.md 1.5's safety
    cap), never a rule of the game (docs/rules.md 7.2).
    """

    name: ClassVar[str] = "moon"
    title: ClassVar[str] = "Three-Player Moon"

    @property
    def num_players(self) -> int:
        return PLAYERS

    @property
    def sides(self) -> tuple[tuple[int, ...], ...]:
        return ((0,), (1,), (2,))

    @property
    def target(self) -> int:
        return TARGET

    def options(self) -> dict[str, Any]:
        return {}

    def new_game(self, seed: int, *, first_seat: int | None = None) -> MoonState:
        return MoonState._initial(self, seed, first_seat)

    def from_position(self, **position: Any) -> MoonState:
        """Build a position in any phase of a deal.

        Tiles are given as text (``"6-4"``) or :class:`Tile`. The phase follows from the fields:
        bidding until the bids are over, then the discard (while ``discard`` is missing), then
        trump (while ``trump`` is missing), then the tricks.

        The fields every game shares: ``hands`` (three lists of tiles, seats 0-2; while the
        bidder has picked up the widow and not yet discarded, its hand holds 8 tiles),
        ``boneyard`` (the one undealt tile, the widow, docs/rules.md 0.3: required while bidding;
        later optional, naming which of the bidder's tiles, in hand, discarded or played, came
        from the widow), ``opener`` (the seat that bid first in this deal, 0 by default),
        ``seat`` (the seat to move; optional, checked against the rules when given), ``scores``
        (the three scores, zeros by default), ``seed``, ``deal`` (the 1-based number of this
        deal) and ``deals`` (the shuffles S of the next deals, each the 22 tiles once; deals past
        the list come from ``seed``).

        Moon's own fields:
            bids: the bidding turns so far, in order from ``opener``: a number, or ``None`` /
                ``"pass"`` for a pass. Once bidding is over it fixes the bidder and the
                contract.
            bidder, contract: the winner of the auction and its bid, for positions that leave
                out ``bids``; if ``bids`` is given as well they must agree with it.
            discard: the tile the bidder laid aside (required after the discard).
            trump: ``0``-``6``, ``"doubles"``/``TRUMP_DOUBLES``, ``"none"``/``NO_TRUMP``.
            tricks: the completed tricks of this deal, each ``{"leader": seat, "plays": [tiles in
                play order]}`` (or a :class:`Trick`); the winners are worked out.
            tricks_won, played: instead of ``tricks``: tricks taken per seat, and the tiles of
                those tricks in any order (then ``leader`` is required once a trick is done).
            trick: tiles played so far to the current trick, in order from its leader.
            leader: the current trick's leader; worked out from ``tricks`` when omitted.

        Raises:
            PositionError: the fields are inconsistent; the message names the field.
        """
        return PositionBuilder(MoonState, self).build(**position)


_PLAYING: Final = Phase.PLAYING
_BIDDING: Final = Phase.BIDDING
_DISCARD_PHASE: Final = Phase.DISCARD
_TRUMP_PHASE: Final = Phase.TRUMP
_DEAL_PHASE: Final = Phase.DEAL
"""The phases as module constants: an enum member read through its class costs a lookup."""


def _without(hand: tuple[Tile, ...], tile: Tile) -> tuple[Tile, ...]:
    """Return ``hand`` without ``tile`` (which it holds; tiles are interned, found by identity)."""
    at = hand.index(tile)
    return hand[:at] + hand[at + 1 :]


class MoonState(GameState):
    """A position of Three-Player Moon."""

    _hides_steps = True

    __slots__ = (
        "bidder",
        "bids",
        "contract",
        "discard",
        "leader",
        "phase",
        "trick",
        "tricks",
        "trump",
        "widow",
        "won",
    )

    _builds_sorted = True
    """Each ``_legal_<phase>`` builds its list in the canonical order (hands are kept sorted)."""
    TILES = MOON_TILES

    game: MoonGame
    phase: Phase
    widow: Tile | None
    discard: Tile | None
    bids: tuple[tuple[int, int | None], ...]
    bidder: int | None
    contract: int | None
    trump: int | None
    leader: int | None
    trick: tuple[tuple[int, Tile], ...]
    tricks: tuple[Trick, ...]
    won: tuple[int, ...]

    def outcome(self) -> Outcome | None:
        if self.winner is None:
            return None
        w = self.winner
        if self._moon_made():
            detail = f"seat {w} made a bid of 21 and wins at once (docs/rules.md 1.13)"
        else:
            detail = f"seat {w} has the unique highest score, {self.side_scores[w]} (target 21)"
        return Outcome(winner=w, scores=self.side_scores, sides=self.game.sides, detail=detail)

    def observe(self, seat: int) -> MoonObservation:
        return moon_observation(self, seat)

    def _copy_own(self, copy: MoonState) -> None:
        copy.bidder = self.bidder
        copy.bids = self.bids
        copy.contract = self.contract
        copy.discard = self.discard
        copy.leader = self.leader
        copy.phase = self.phase
        copy.trick = self.trick
        copy.tricks = self.tricks
        copy.trump = self.trump
        copy.widow = self.widow
        copy.won = self.won

    # -- legal actions, one method per phase --------------------------------------------------

    def _compute_legal(self) -> list[Action]:
        phase = self.phase
        if phase is _PLAYING:
            return self._legal_playing()
        if phase is _BIDDING:
            return self._legal_bidding()
        if phase is _DISCARD_PHASE:
            return self._legal_discard()
        if phase is _TRUMP_PHASE:
            return self._legal_trump()
        if phase is _DEAL_PHASE:
            return [DEAL]
        return []

    def _high_bid(self) -> int:
        high = 0
        for _, value in self.bids:
            if value is not None and value > high:
                high = value
        return high

    def _legal_bidding(self) -> list[Action]:
        """docs/rules.md 1.5: pass, or bid higher than every bid so far (after a 7 only 21)."""
        return [*_BIDS_ABOVE[self._high_bid()], PASS]

    def _legal_discard(self) -> list[Action]:
        """docs/rules.md 1.6: discard any of the 8 tiles, the widow included."""
        return [_DISCARD[t.index] for t in self.hands[self.seat]]

    def _legal_trump(self) -> list[Action]:
        """docs/rules.md 1.7: any number 0-6, doubles or no trump."""
        return list(_TRUMPS)

    def _legal_playing(self) -> list[Action]:
        """docs/rules.md 1.9-1.10: lead anything; follow the suit led if you can."""
        hand = self.hands[self.seat]
        if self.trick:
            trump = self.trump
            assert trump is not None
            fits = FOLLOWS_SUIT[trump][LED_SUIT[trump][self.trick[0][1].index]]
            legal: list[Action] = [_PLAY[t.index] for t in hand if fits[t.index]]
            if legal:
                return legal
        return [_PLAY[t.index] for t in hand]

    def _why_illegal(self, action: Action) -> str:
        phase = self.phase
        if phase is Phase.DEAL:
            return "docs/rules.md X6: between hands only the 'deal' step is legal"
        if isinstance(action, Deal):
            return (
                f"docs/rules.md X6: 'deal' is the chance step between hands; "
                f"seat {self.seat} is to move"
            )
        if phase is Phase.BIDDING:
            return self._why_not_bid(action)
        if isinstance(action, Bid | Pass):
            return "docs/rules.md 1.5: the bidding is over; each player bids or passes once"
        if phase is Phase.DISCARD:
            if not isinstance(action, Discard):
                return f"docs/rules.md 1.6: seat {self.seat} must first discard one of its 8 tiles"
            if action.tile is None:
                return "docs/rules.md 1.6: name the tile to discard"
            return (
                f"docs/rules.md 1.6: seat {self.seat} holds no {action.tile}; discard one of its 8"
            )
        if phase is Phase.TRUMP:
            if not isinstance(action, Trump):
                return f"docs/rules.md 1.7: seat {self.seat} must now name trumps"
            return "docs/rules.md 1.7: trumps are a number 0-6, 'doubles' or 'none'"
        if not isinstance(action, Play):
            return "docs/rules.md 1.10: during the tricks the only action is 'play TILE'"
        return self._why_not_play(action)

    def _why_not_bid(self, action: Action) -> str:
        if not isinstance(action, Bid):
            return "docs/rules.md 1.5: during the bidding the only actions are 'bid V' and 'pass'"
        if action.value not in BID_VALUES:
            return f"docs/rules.md 1.5: a bid is 4, 5, 6, 7 or 21, not {action.value}"
        high = self._high_bid()
        if high == 7:
            return "docs/rules.md 1.5: after a 7 the only bid left is 21"
        return f"docs/rules.md 1.5: bids must be higher than {high}"

    def _why_not_play(self, action: Play) -> str:
        if action.end is not None:
            return "docs/rules.md 0.4: a Moon play names only the tile, no end"
        tile = action.tile
        hand = self.hands[self.seat]
        if tile not in hand:
            return f"docs/rules.md 1.10: seat {self.seat} does not hold {tile}"
        trump = self.trump
        assert trump is not None and self.trick
        lead = self.trick[0][1]
        suit = LED_SUIT[trump][lead.index]
        fit = next(t for t in hand if FOLLOWS_SUIT[trump][suit][t.index])
        why = (
            f"docs/rules.md 1.10: {suit_name(suit)} was led and you hold {fit}, which follows suit"
        )
        if suit != TRUMP_LED and tile.has(suit):
            why += f"; {tile} is a trump, so it does not count as {suit_name(suit)}"
        return why

    # -- applying actions ---------------------------------------------------------------------

    def _next(self, action: Action) -> MoonState:
        after = self._clone()
        phase = self.phase
        if phase is _PLAYING:
            assert isinstance(action, Play)
            after._play(action.tile)
        elif phase is _BIDDING:
            after._bid(action.value if isinstance(action, Bid) else None)
        elif phase is _DISCARD_PHASE:
            assert isinstance(action, Discard) and action.tile is not None
            after._discard(action.tile)
        elif phase is _TRUMP_PHASE:
            assert isinstance(action, Trump)
            after.trump = action.suit
            after.phase = _PLAYING
            after.leader = after.seat
        else:
            after._deal_next()
        return after

    def _bid(self, value: int | None) -> None:
        """docs/rules.md 1.5: one turn each; 21 ends the bidding; three passes void the deal."""
        self.bids = bids = (*self.bids, (self.seat, value))
        if value != MOON_BID and len(bids) < PLAYERS:
            self.seat = (self.seat + 1) % PLAYERS
            return
        best: tuple[int, int] | None = None
        for seat, bid in bids:
            if bid is not None and (best is None or bid > best[1]):
                best = (seat, bid)
        if best is None:
            self.phase = Phase.DEAL
            self.seat = CHANCE
            self.results = (
                *self.results,
                HandResult(
                    self.deal_index + 1,
                    HandEnd.VOID,
                    (0,) * PLAYERS,
                    "void deal: all three passed; the 22 tiles are dealt again (docs/rules.md 1.5)",
                    (),
                    (0,) * PLAYERS,
                ),
            )
            return
        self.bidder, self.contract = best
        self.seat = best[0]
        self.phase = Phase.DISCARD
        assert self.widow is not None
        self._set_hand(best[0], tuple(sorted((*self.hands[best[0]], self.widow), key=TILE_KEY)))

    def _discard(self, tile: Tile) -> None:
        """docs/rules.md 1.6: the discard leaves play face down."""
        self._set_hand(self.seat, _without(self.hands[self.seat], tile))
        self.discard = tile
        self.phase = Phase.TRUMP

    def _play(self, tile: Tile) -> None:
        seat = self.seat
        hands = list(self.hands)
        hands[seat] = _without(hands[seat], tile)
        self.hands = tuple(hands)
        trick = self.trick = (*self.trick, (seat, tile))
        if len(trick) < PLAYERS:
            self.seat = (seat + 1) % PLAYERS
            return
        assert self.trump is not None and self.leader is not None
        winner = trick_winner(trick, self.trump)
        self.tricks = (*self.tricks, new_trick(self.leader, trick, winner))
        won = list(self.won)
        won[winner] += 1
        self.won = tuple(won)
        self.trick = ()
        # Count by tricks won: a position built from tricks_won has no trick history.
        if sum(won) < TRICKS:
            self.leader = self.seat = winner
        else:
            self._score_hand()

    def _set_hand(self, seat: int, hand: tuple[Tile, ...]) -> None:
        hands = list(self.hands)
        hands[seat] = hand
        self.hands = tuple(hands)

    def _moon_made(self) -> bool:
        return self.contract == MOON_BID and self.bidder is not None and self.won[self.bidder] == 7

    def _score_hand(self) -> None:
        """docs/rules.md 1.12 scores the hand; 1.13 checks for the end of the game."""
        bidder, contract = self.bidder, self.contract
        assert bidder is not None and contract is not None
        took = self.won[bidder]
        made = took == TRICKS if contract == MOON_BID else took >= contract
        points = list(self.won)
        points[bidder] = contract if made else -contract
        self.side_scores = tuple(s + p for s, p in zip(self.side_scores, points, strict=True))
        tally = "/".join(str(w) for w in self.won)
        self.results = (
            *self.results,
            HandResult(
                self.deal_index + 1,
                HandEnd.TRICKS,
                tuple(points),
                f"seat {bidder} bid {contract} and took {took}: "
                f"{'made' if made else 'failed'}; tricks {tally}",
                (bidder,) if made else tuple(s for s in range(PLAYERS) if s != bidder),
                (0,) * PLAYERS,
            ),
        )
        self.leader = None
        scores = self.side_scores
        top = max(scores)
        if made and contract == MOON_BID:
            self.winner = bidder
        elif top >= TARGET and scores.count(top) == 1:
            self.winner = scores.index(top)
        if self.winner is None:
            self.phase, self.seat = Phase.DEAL, CHANCE
        else:
            self.phase, self.seat = Phase.OVER, TERMINAL

    def _deal_next(self) -> None:
        """Deal the next hand into this private state (docs/rules.md 1.2, 1.4, X6)."""
        self.deal_index += 1
        self.hands, rest = deal_round_robin(self._shuffle(), PLAYERS, HAND_SIZE)
        self.widow = rest[0]
        self.opener = (self.opener + 1) % PLAYERS
        self.seat = self.opener
        self.phase = Phase.BIDDING
        self.discard = None
        self.bids = ()
        self.bidder = self.contract = self.trump = self.leader = None
        self.trick = ()
        self.tricks = ()
        self.won = (0,) * PLAYERS
