"""Three-Player Moon: an auction, a widow, trumps and seven tricks (RULES.md section 1).

Decisions of RULES.md 5.1 followed here: the bidder always picks up the widow and discards one of
eight tiles, possibly the widow itself (M1), before naming trumps (M2); three passes void the deal
and the first bidder still moves on one seat (M3, M4); 21 may be bid at any turn and is the only
bid left after a 7 (M5); a non-trump lead's suit is its higher end, a double's its number (M6);
any non-trump tile holding the suit's number follows it (M7); a suit runs double first, then by
the other end (M8); doubles as trumps run 6-6 down to 0-0 (M9); DOUBLES and 0 are legal trumps
(M10, M11); with no trump the doubles stay high (M12); all seven tricks are played (M13); the
opponents always score their tricks (M14); a made 21 wins at once, a failed one costs 21 (M15);
the game ends after a hand with a unique highest score of 21 or more (M16); scores may go
negative (M17); any tile may be led (M19).

A hand is a phase machine, as in OpenSpiel's hearts: ``BIDDING -> DISCARD -> TRUMP -> PLAYING``,
then ``DEAL`` (the chance step between hands, RULES.md X6) or ``OVER``. Each phase has its own
``_legal_<phase>`` method. Trick-taking questions (is it a trump, what was led, what follows,
who wins) are answered from tables built once per trump choice, because they sit on the hot path.

>>> state = MoonGame().new_game(seed=3, first_seat=0)
>>> [str(a) for a in state.legal_actions()]
['bid 4', 'bid 5', 'bid 6', 'bid 7', 'bid 21', 'pass']
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from .actions import (
    DEAL,
    NO_TRUMP,
    PASS,
    TRUMP_DOUBLES,
    Action,
    Bid,
    Deal,
    Discard,
    Pass,
    Play,
    Trump,
    parse_action,
)
from .dealing import deal_round_robin, first_seat, shuffled
from .errors import InvalidActionError, PositionError
from .state import (
    CHANCE,
    TERMINAL,
    Game,
    GameState,
    HandEnd,
    HandResult,
    Observation,
    Outcome,
)
from .tiles import DOUBLE_SIX, Tile

PLAYERS: Final = 3
HAND_SIZE: Final = 7
TRICKS: Final = 7
TARGET: Final = 21
MOON_BID: Final = 21
"""The bid to take all seven tricks ("shooting the moon")."""
BID_VALUES: Final = (4, 5, 6, 7, MOON_BID)
TRUMP_CHOICES: Final = (0, 1, 2, 3, 4, 5, 6, TRUMP_DOUBLES, NO_TRUMP)
TRUMP_LED: Final = 7
"""The suit led when the lead is a trump; number suits are 0-6."""

MOON_TILES: Final[tuple[Tile, ...]] = tuple(t for t in DOUBLE_SIX if t.low > 0 or t.high == 0)
"""The 22 tiles in play: every blank except 0-0 is removed (RULES.md 1.1)."""


# -- suits, following and ranking (RULES.md 1.8-1.11) ---------------------------------------------


def is_trump(tile: Tile, trump: int) -> bool:
    """Return whether ``tile`` is a trump under the trump choice ``trump`` (RULES.md 1.8)."""
    if trump == NO_TRUMP:
        return False
    if trump == TRUMP_DOUBLES:
        return tile.is_double
    return tile.high == trump or tile.low == trump


def led_suit(tile: Tile, trump: int) -> int:
    """Return the suit a lead of ``tile`` calls for: ``TRUMP_LED`` or its higher end (1.9)."""
    return TRUMP_LED if is_trump(tile, trump) else tile.high


def follows(tile: Tile, suit: int, trump: int) -> bool:
    """Return whether ``tile`` belongs to ``suit`` (a number or ``TRUMP_LED``), RULES.md 1.10."""
    if suit == TRUMP_LED:
        return is_trump(tile, trump)
    return not is_trump(tile, trump) and (tile.high == suit or tile.low == suit)


def rank(tile: Tile, suit: int, trump: int) -> int:
    """Return the rank of ``tile`` inside ``suit`` (which it must belong to), RULES.md 1.11."""
    if suit == TRUMP_LED:
        if trump == TRUMP_DOUBLES:
            return tile.high
        return 100 if tile.is_double else tile.other(trump)
    return 100 if tile.is_double else tile.other(suit)


def _power(tile: Tile, suit: int, trump: int) -> int:
    """Trick-taking power: any trump beats the suit led, which beats everything else."""
    if is_trump(tile, trump):
        return 1000 + rank(tile, TRUMP_LED, trump)
    if follows(tile, suit, trump):
        return rank(tile, suit, trump)
    return -1


_SUITS: Final = range(TRUMP_LED + 1)
_LED: Final = tuple(tuple(led_suit(t, tr) for t in DOUBLE_SIX) for tr in range(NO_TRUMP + 1))
"""``_LED[trump][tile.index]``: the suit a lead of that tile calls for."""
_FOLLOWS: Final = tuple(
    tuple(tuple(follows(t, s, tr) for t in DOUBLE_SIX) for s in _SUITS)
    for tr in range(NO_TRUMP + 1)
)
"""``_FOLLOWS[trump][suit][tile.index]``: whether the tile follows that suit."""
_POWER: Final = tuple(
    tuple(tuple(_power(t, s, tr) for t in DOUBLE_SIX) for s in _SUITS) for tr in range(NO_TRUMP + 1)
)
"""``_POWER[trump][suit][tile.index]``: the highest power wins the trick."""


def trick_winner(plays: Sequence[tuple[int, Tile]], trump: int) -> int:
    """Return the seat that wins a trick of ``(seat, tile)`` plays, leader first (1.11)."""
    power = _POWER[trump][_LED[trump][plays[0][1].index]]
    best_seat, best = plays[0][0], -2
    for seat, tile in plays:
        if power[tile.index] > best:
            best_seat, best = seat, power[tile.index]
    return best_seat


def suit_name(suit: int) -> str:
    """Return ``"trump"`` or ``"a 5"``: how error messages name a suit led."""
    return "trump" if suit == TRUMP_LED else f"a {suit}"


# -- interned actions: legal_actions hands out the same objects every time --------------------

_PLAY: Final = tuple(Play(t) for t in DOUBLE_SIX)
_DISCARD: Final = tuple(Discard(t) for t in DOUBLE_SIX)
_BID: Final = {v: Bid(v) for v in BID_VALUES}
_BIDS_ABOVE: Final = {
    high: tuple(_BID[v] for v in BID_VALUES if v > high) for high in (0, *BID_VALUES)
}
_TRUMPS: Final[tuple[Action, ...]] = tuple(Trump(x) for x in TRUMP_CHOICES)


class Phase(enum.Enum):
    """Where a deal stands; ``DEAL`` and ``OVER`` match ``CHANCE`` and ``TERMINAL`` seats."""

    BIDDING = "bidding"
    DISCARD = "discard"
    TRUMP = "trump"
    PLAYING = "playing"
    DEAL = "deal"
    """The hand is over (or void); the next step is the ``deal`` chance step."""
    OVER = "over"


@dataclass(frozen=True, slots=True)
class Trick:
    """One completed trick: who led, the plays in order, and who won it."""

    leader: int
    plays: tuple[tuple[int, Tile], ...]
    """``(seat, tile)`` in the order played, the leader's first."""
    winner: int

    def __str__(self) -> str:
        shown = " ".join(f"{seat}:{tile}" for seat, tile in self.plays)
        return f"{shown} -> seat {self.winner}"


@dataclass(frozen=True, slots=True)
class MoonGame(Game):
    """Three-Player Moon: three players, each alone, to 21 points.

    ``deal_limit`` is the one option. RULES.md is silent on a game nobody can win: failed
    contracts drive every score down, and reckless bidders (a random bot bids 21 on half the
    deals) can play for thousands of deals. After ``deal_limit`` deals, void deals included, the
    unique highest score wins at the end of any deal, whatever it is; a tie for highest plays on
    (docs/rules.md 7.2). Zero turns the limit off. Sound players finish long before it.
    """

    name: ClassVar[str] = "moon"
    title: ClassVar[str] = "Three-Player Moon"

    deal_limit: int = 100

    def __post_init__(self) -> None:
        if isinstance(self.deal_limit, bool) or not isinstance(self.deal_limit, int):
            raise InvalidActionError(
                f"moon: deal_limit must be an integer, got {self.deal_limit!r}"
            )
        if self.deal_limit < 0:
            raise InvalidActionError(
                f"moon: deal_limit must be 0 (no limit) or more, got {self.deal_limit}"
            )

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
        return {"deal_limit": self.deal_limit}

    def new_game(self, seed: int, *, first_seat: int | None = None) -> MoonState:
        return MoonState._initial(self, seed, first_seat)

    def from_position(self, **position: Any) -> MoonState:
        """Build a position in any phase of a deal.

        Tiles are given as text (``"6-4"``) or :class:`Tile`. The phase follows from the fields:
        bidding until the bids are over, then the discard (while ``discard`` is missing), then
        trump (while ``trump`` is missing), then the tricks.

        Fields:
            hands: three lists of tiles, seats 0-2. While the bidder has picked up the widow and
                not yet discarded, its hand holds 8 tiles.
            widow: the face-down tile; required while bidding. Later optional: which of the
                bidder's tiles (in hand, discarded or played) came from the widow.
            first_bidder: the seat that bid first in this deal (default 0).
            bids: the bidding turns so far, in order from ``first_bidder``: a number, or
                ``None`` / ``"pass"`` for a pass. Once bidding is over it fixes the bidder and
                the contract.
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
            seat: the seat to move; optional, checked against the rules when given.
            scores: the three scores (default zeros).
            seed, deal: the game's seed and the 1-based number of this deal; the next deal is
                shuffled from them.

        Raises:
            PositionError: the fields are inconsistent; the message names the field.
        """
        return MoonState._from_position(self, **position)


@dataclass(frozen=True, slots=True)
class MoonObservation(Observation):
    """What one seat sees of a Moon position (RULES.md 1.14), beyond the common fields."""

    phase: Phase
    first_bidder: int
    bids: tuple[tuple[int, int | None], ...]
    """``(seat, bid)`` for every bidding turn so far in this deal; ``None`` is a pass."""
    bidder: int | None
    contract: int | None
    trump: int | None
    """0-6, ``TRUMP_DOUBLES`` or ``NO_TRUMP``; None until the bidder names it."""
    leader: int | None
    """The leader of the current trick; None outside the tricks."""
    trick: tuple[tuple[int, Tile], ...]
    """``(seat, tile)`` played so far to the current trick."""
    tricks: tuple[Trick, ...]
    """The completed tricks of this deal."""
    tricks_won: tuple[int, ...]
    """Tricks taken by each seat in this deal."""
    discard: Tile | None
    """The bidder's own discard; None for every other seat."""
    widow: Tile | None
    """The widow, known only to the bidder once picked up; None for every other seat."""


class MoonState(GameState):
    """A position of Three-Player Moon."""

    _hides_steps = True

    __slots__ = (
        "bidder",
        "bids",
        "contract",
        "deal_index",
        "discard",
        "first_bidder",
        "hands",
        "leader",
        "phase",
        "results",
        "seat",
        "seed",
        "side_scores",
        "trick",
        "tricks",
        "trump",
        "widow",
        "winner",
        "won",
    )

    game: MoonGame
    seed: int
    deal_index: int
    first_bidder: int
    phase: Phase
    seat: int
    hands: tuple[tuple[Tile, ...], ...]
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
    side_scores: tuple[int, ...]
    results: tuple[HandResult, ...]
    winner: int | None

    # -- the GameState interface --------------------------------------------------------------

    @property
    def current_seat(self) -> int:
        return self.seat

    @property
    def scores(self) -> tuple[int, ...]:
        return self.side_scores

    @property
    def deal_number(self) -> int:
        return self.deal_index + 1

    @property
    def hand_results(self) -> tuple[HandResult, ...]:
        return self.results

    def hand(self, seat: int) -> tuple[Tile, ...]:
        return self.hands[seat]

    def legal_actions(self) -> tuple[Action, ...]:
        """Return the legal actions, sorted and unique, empty only when the game is over.

        Each ``_legal_<phase>`` already builds its list in the canonical order of
        :func:`~.actions.sort_actions` (hands are kept sorted), so the sort is skipped.
        """
        legal = self._legal
        if legal is None:
            legal = self._legal = tuple(self._compute_legal())
        return legal

    def outcome(self) -> Outcome | None:
        if self.winner is None:
            return None
        w = self.winner
        if self._moon_made():
            detail = f"seat {w} made a bid of 21 and wins at once (RULES.md 1.13)"
        elif self.side_scores[w] < TARGET:
            detail = (
                f"seat {w} has the unique highest score, {self.side_scores[w]}, after the deal "
                f"limit of {self.game.deal_limit} deals (docs/rules.md 7.2)"
            )
        else:
            detail = f"seat {w} has the unique highest score, {self.side_scores[w]} (target 21)"
        return Outcome(winner=w, scores=self.side_scores, sides=self.game.sides, detail=detail)

    def observe(self, seat: int) -> MoonObservation:
        hands = self.hands
        own = seat == self.bidder
        return MoonObservation(
            game=self.game,
            seat=seat,
            current_seat=self.seat,
            legal_actions=self.legal_actions() if seat == self.seat else (),
            hand=hands[seat],
            hand_sizes=(len(hands[0]), len(hands[1]), len(hands[2])),
            scores=self.side_scores,
            deal=self.deal_index + 1,
            history=self.deal_history(seat),
            phase=self.phase,
            first_bidder=self.first_bidder,
            bids=self.bids,
            bidder=self.bidder,
            contract=self.contract,
            trump=self.trump,
            leader=self.leader,
            trick=self.trick,
            tricks=self.tricks,
            tricks_won=self.won,
            discard=self.discard if own else None,
            widow=self.widow if own else None,
        )

    # -- legal actions, one method per phase --------------------------------------------------

    def _compute_legal(self) -> list[Action]:
        phase = self.phase
        if phase is Phase.PLAYING:
            return self._legal_playing()
        if phase is Phase.BIDDING:
            return self._legal_bidding()
        if phase is Phase.DISCARD:
            return self._legal_discard()
        if phase is Phase.TRUMP:
            return self._legal_trump()
        if phase is Phase.DEAL:
            return [DEAL]
        return []

    def _high_bid(self) -> int:
        high = 0
        for _, value in self.bids:
            if value is not None and value > high:
                high = value
        return high

    def _legal_bidding(self) -> list[Action]:
        """RULES.md 1.5: pass, or bid higher than every bid so far (after a 7 only 21)."""
        return [*_BIDS_ABOVE[self._high_bid()], PASS]

    def _legal_discard(self) -> list[Action]:
        """RULES.md 1.6: discard any of the 8 tiles, the widow included."""
        return [_DISCARD[t.index] for t in self.hands[self.seat]]

    def _legal_trump(self) -> list[Action]:
        """RULES.md 1.7: any number 0-6, doubles or no trump."""
        return list(_TRUMPS)

    def _legal_playing(self) -> list[Action]:
        """RULES.md 1.9-1.10: lead anything; follow the suit led if you can."""
        hand = self.hands[self.seat]
        if self.trick:
            trump = self.trump
            assert trump is not None
            fits = _FOLLOWS[trump][_LED[trump][self.trick[0][1].index]]
            legal: list[Action] = [_PLAY[t.index] for t in hand if fits[t.index]]
            if legal:
                return legal
        return [_PLAY[t.index] for t in hand]

    def _why_illegal(self, action: Action) -> str:
        phase = self.phase
        if phase is Phase.DEAL:
            return "RULES.md X6: between hands only the 'deal' step is legal"
        if isinstance(action, Deal):
            return (
                f"RULES.md X6: 'deal' is the chance step between hands; seat {self.seat} is to move"
            )
        if phase is Phase.BIDDING:
            return self._why_not_bid(action)
        if isinstance(action, Bid | Pass):
            return "RULES.md 1.5: the bidding is over; each player bids or passes once"
        if phase is Phase.DISCARD:
            if not isinstance(action, Discard):
                return f"RULES.md 1.6: seat {self.seat} must first discard one of its 8 tiles"
            if action.tile is None:
                return "RULES.md 1.6: name the tile to discard"
            return f"RULES.md 1.6: seat {self.seat} holds no {action.tile}; discard one of its 8"
        if phase is Phase.TRUMP:
            if not isinstance(action, Trump):
                return f"RULES.md 1.7: seat {self.seat} must now name trumps"
            return "RULES.md 1.7: trumps are a number 0-6, 'doubles' or 'none'"
        if not isinstance(action, Play):
            return "RULES.md 1.10: during the tricks the only action is 'play TILE'"
        return self._why_not_play(action)

    def _why_not_bid(self, action: Action) -> str:
        if not isinstance(action, Bid):
            return "RULES.md 1.5: during the bidding the only actions are 'bid V' and 'pass'"
        if action.value not in BID_VALUES:
            return f"RULES.md 1.5: a bid is 4, 5, 6, 7 or 21, not {action.value}"
        high = self._high_bid()
        if high == 7:
            return "RULES.md 1.5: after a 7 the only bid left is 21"
        return f"RULES.md 1.5: bids must be higher than {high}"

    def _why_not_play(self, action: Play) -> str:
        if action.end is not None:
            return "RULES.md 0.4: a Moon play names only the tile, no end"
        tile = action.tile
        hand = self.hands[self.seat]
        if tile not in hand:
            return f"RULES.md 1.10: seat {self.seat} does not hold {tile}"
        trump = self.trump
        assert trump is not None and self.trick
        lead = self.trick[0][1]
        suit = _LED[trump][lead.index]
        fit = next(t for t in hand if _FOLLOWS[trump][suit][t.index])
        why = f"RULES.md 1.10: {suit_name(suit)} was led and you hold {fit}, which follows suit"
        if suit != TRUMP_LED and tile.has(suit):
            why += f"; {tile} is a trump, so it does not count as {suit_name(suit)}"
        return why

    # -- applying actions ---------------------------------------------------------------------

    def _next(self, action: Action) -> MoonState:
        after = self._clone()
        phase = self.phase
        if phase is Phase.PLAYING:
            assert isinstance(action, Play)
            after._play(action.tile)
        elif phase is Phase.BIDDING:
            after._bid(action.value if isinstance(action, Bid) else None)
        elif phase is Phase.DISCARD:
            assert isinstance(action, Discard) and action.tile is not None
            after._discard(action.tile)
        elif phase is Phase.TRUMP:
            assert isinstance(action, Trump)
            after.trump = action.suit
            after.phase = Phase.PLAYING
            after.leader = after.seat
        else:
            after._deal_next()
        return after

    def _bid(self, value: int | None) -> None:
        """RULES.md 1.5: one turn each; 21 ends the bidding; three passes void the deal."""
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
                    "void deal: all three passed; the 22 tiles are dealt again (RULES.md 1.5)",
                ),
            )
            self._check_deal_limit()
            return
        self.bidder, self.contract = best
        self.seat = best[0]
        self.phase = Phase.DISCARD
        assert self.widow is not None
        self._set_hand(best[0], tuple(sorted((*self.hands[best[0]], self.widow))))

    def _discard(self, tile: Tile) -> None:
        """RULES.md 1.6: the discard leaves play face down."""
        self._set_hand(self.seat, tuple(t for t in self.hands[self.seat] if t is not tile))
        self.discard = tile
        self.phase = Phase.TRUMP

    def _play(self, tile: Tile) -> None:
        seat = self.seat
        self._set_hand(seat, tuple(t for t in self.hands[seat] if t is not tile))
        trick = self.trick = (*self.trick, (seat, tile))
        if len(trick) < PLAYERS:
            self.seat = (seat + 1) % PLAYERS
            return
        assert self.trump is not None and self.leader is not None
        winner = trick_winner(trick, self.trump)
        self.tricks = (*self.tricks, Trick(self.leader, trick, winner))
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
        """RULES.md 1.12 scores the hand; 1.13 checks for the end of the game."""
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
            self._check_deal_limit()
        else:
            self.phase, self.seat = Phase.OVER, TERMINAL

    def _past_deal_limit(self) -> bool:
        limit = self.game.deal_limit
        return limit > 0 and self.deal_index + 1 >= limit

    def _check_deal_limit(self) -> None:
        """End the game at the deal limit if one score is strictly highest (MoonGame docs)."""
        scores = self.side_scores
        top = max(scores)
        if self._past_deal_limit() and scores.count(top) == 1:
            self.winner = scores.index(top)
            self.phase, self.seat = Phase.OVER, TERMINAL

    def _deal_next(self) -> None:
        """Deal the next hand into this private state (RULES.md 1.2, 1.4, X6)."""
        self.deal_index += 1
        order = shuffled(MOON_TILES, self.seed, self.deal_index)
        self.hands, rest = deal_round_robin(order, PLAYERS, HAND_SIZE)
        self.widow = rest[0]
        self.first_bidder = (self.first_bidder + 1) % PLAYERS
        self.seat = self.first_bidder
        self.phase = Phase.BIDDING
        self.discard = None
        self.bids = ()
        self.bidder = self.contract = self.trump = self.leader = None
        self.trick = ()
        self.tricks = ()
        self.won = (0,) * PLAYERS

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def _blank(cls, game: MoonGame, seed: int) -> MoonState:
        state = cls.__new__(cls)
        state.game = game
        state._legal = None
        state._log = None
        state._deal_steps = state._public_steps = ()
        state._hidden_by = frozenset()
        state.seed = seed
        state.side_scores = (0,) * PLAYERS
        state.results = ()
        state.winner = None
        return state

    @classmethod
    def _initial(cls, game: MoonGame, seed: int, first: int | None) -> MoonState:
        state = cls._blank(game, seed)
        start = first_seat(seed, PLAYERS) if first is None else first
        if not 0 <= start < PLAYERS:
            raise PositionError(f"first_seat {first} is not a seat of a 3-player game")
        # _deal_next moves the first bidder on by one for every deal, so begin one behind.
        state.first_bidder = (start - 1) % PLAYERS
        state.deal_index = -1
        state._deal_next()
        return state

    @classmethod
    def _from_position(
        cls,
        game: MoonGame,
        *,
        hands: Sequence[Sequence[str | Tile]],
        widow: str | Tile | None = None,
        first_bidder: int = 0,
        bids: Sequence[int | str | None] | None = None,
        bidder: int | None = None,
        contract: int | None = None,
        discard: str | Tile | None = None,
        trump: int | str | None = None,
        tricks: Sequence[Mapping[str, Any] | Trick] | None = None,
        tricks_won: Sequence[int] | None = None,
        played: Sequence[str | Tile] | None = None,
        trick: Sequence[str | Tile] = (),
        leader: int | None = None,
        seat: int | None = None,
        scores: Sequence[int] | None = None,
        seed: int = 0,
        deal: int = 1,
    ) -> MoonState:
        return _PositionBuilder(game, seed, deal).build(
            hands=hands,
            widow=widow,
            first_bidder=first_bidder,
            bids=bids,
            bidder=bidder,
            contract=contract,
            discard=discard,
            trump=trump,
            tricks=tricks,
            tricks_won=tricks_won,
            played=played,
            trick=trick,
            leader=leader,
            seat=seat,
            scores=scores,
        )


class _PositionBuilder:
    """Checks an explicit position field by field and fills a fresh :class:`MoonState`."""

    def __init__(self, game: MoonGame, seed: int, deal: int) -> None:
        if isinstance(deal, bool) or not isinstance(deal, int) or deal < 1:
            raise PositionError(f"deal must be a number 1 or more, got {deal!r}")
        self.state = MoonState._blank(game, seed)
        self.state.deal_index = deal - 1

    def build(
        self,
        *,
        hands: Sequence[Sequence[str | Tile]],
        widow: str | Tile | None,
        first_bidder: int,
        bids: Sequence[int | str | None] | None,
        bidder: int | None,
        contract: int | None,
        discard: str | Tile | None,
        trump: int | str | None,
        tricks: Sequence[Mapping[str, Any] | Trick] | None,
        tricks_won: Sequence[int] | None,
        played: Sequence[str | Tile] | None,
        trick: Sequence[str | Tile],
        leader: int | None,
        seat: int | None,
        scores: Sequence[int] | None,
    ) -> MoonState:
        state = self.state
        state.first_bidder = _seat(first_bidder, "first_bidder")
        state.side_scores = self._scores(scores)
        if len(hands) != PLAYERS:
            raise PositionError(f"hands: expected 3 hands, got {len(hands)}")
        state.hands = tuple(tuple(sorted(_tiles(h, f"hands[{i}]"))) for i, h in enumerate(hands))
        state.widow = None if widow is None else _tile(widow, "widow")
        state.discard = None if discard is None else _tile(discard, "discard")
        state.trump = None if trump is None else _trump(trump)
        state.trick = ()
        state.tricks = ()
        state.won = (0,) * PLAYERS
        state.leader = None
        state.bids = self._bids(bids)
        self._auction(bidder, contract)
        current = _tiles(trick, "trick")
        completed = self._phase(tricks, tricks_won, played, current, leader)
        self._account(completed, current)
        self._sizes(len(current))
        if state.phase is Phase.PLAYING:
            self._check_follows(current)
        if seat is not None and seat != state.seat:
            raise PositionError(
                f"seat: the rules give the move to seat {state.seat} "
                f"({state.phase.value}), not {seat}"
            )
        return state

    def _scores(self, scores: Sequence[int] | None) -> tuple[int, ...]:
        if scores is None:
            return (0,) * PLAYERS
        values = tuple(scores)
        if len(values) != PLAYERS or not all(isinstance(v, int) for v in values):
            raise PositionError(f"scores: expected three whole numbers, got {list(values)}")
        top = max(values)
        if top >= TARGET and values.count(top) == 1:
            raise PositionError(
                f"scores: seat {values.index(top)} would already have won with {top} "
                "(RULES.md 1.13)"
            )
        return values

    def _bids(self, bids: Sequence[int | str | None] | None) -> tuple[tuple[int, int | None], ...]:
        if bids is None:
            return ()
        first = self.state.first_bidder
        out: list[tuple[int, int | None]] = []
        high = 0
        for i, raw in enumerate(bids):
            where = f"bids[{i}]"
            if out and out[-1][1] == MOON_BID:
                raise PositionError(f"{where}: a bid of 21 ends the bidding (RULES.md 1.5)")
            if i >= PLAYERS:
                raise PositionError("bids: each player bids or passes once (RULES.md 1.5)")
            if raw is None or raw == "pass":
                value = None
            elif isinstance(raw, int) and not isinstance(raw, bool) and raw in BID_VALUES:
                if raw <= high:
                    raise PositionError(f"{where}: {raw} is not higher than {high} (RULES.md 1.5)")
                value = high = raw
            else:
                raise PositionError(f"{where}: expected 4, 5, 6, 7, 21 or a pass, got {raw!r}")
            out.append(((first + i) % PLAYERS, value))
        return tuple(out)

    def _auction(self, bidder: int | None, contract: int | None) -> None:
        """Work out the bidder and contract from ``bids``, or take them as given."""
        state = self.state
        bids = state.bids
        over = len(bids) == PLAYERS or (bool(bids) and bids[-1][1] == MOON_BID)
        if over:
            made = [(value, seat) for seat, value in bids if value is not None]
            if not made:
                raise PositionError(
                    "bids: all three passed, so the deal is void (RULES.md 1.5); "
                    "give the next deal instead"
                )
            value, winner = max(made)
            if bidder is not None and bidder != winner:
                raise PositionError(f"bidder: the bids make seat {winner} the bidder, not {bidder}")
            if contract is not None and contract != value:
                raise PositionError(f"contract: the bids make the contract {value}, not {contract}")
            state.bidder, state.contract = winner, value
        elif bids and (bidder is not None or contract is not None):
            raise PositionError("bidder: the bids given are not over yet (RULES.md 1.5)")
        elif bidder is not None:
            if contract not in BID_VALUES:
                raise PositionError(f"contract: expected 4, 5, 6, 7 or 21, got {contract!r}")
            state.bidder, state.contract = _seat(bidder, "bidder"), contract
        elif contract is not None:
            raise PositionError("contract: given without a bidder")
        else:
            state.bidder = state.contract = None

    def _phase(
        self,
        tricks: Sequence[Mapping[str, Any] | Trick] | None,
        tricks_won: Sequence[int] | None,
        played: Sequence[str | Tile] | None,
        current: tuple[Tile, ...],
        leader: int | None,
    ) -> list[Tile]:
        """Fix the phase and the seat to move; return the tiles of the completed tricks."""
        state = self.state
        later = {
            "discard": state.discard,
            "trump": state.trump,
            "tricks": tricks,
            "tricks_won": tricks_won,
            "played": played,
            "trick": current or None,
            "leader": leader,
        }
        if state.bidder is None:
            self._nothing_after("bidding is not over", later)
            if state.widow is None:
                raise PositionError("widow: required while bidding (RULES.md 1.2)")
            state.phase = Phase.BIDDING
            state.seat = (state.first_bidder + len(state.bids)) % PLAYERS
            return []
        state.seat = state.bidder
        if state.discard is None:
            self._nothing_after("the bidder has not discarded yet", later)
            state.phase = Phase.DISCARD
            return []
        del later["discard"]
        if state.trump is None:
            self._nothing_after("trumps are not named yet", later)
            state.phase = Phase.TRUMP
            return []
        state.phase = Phase.PLAYING
        if tricks is not None:
            if tricks_won is not None or played is not None:
                raise PositionError("tricks: give either tricks or tricks_won and played")
            completed = self._tricks(tricks)
            derived = state.tricks[-1].winner if state.tricks else state.bidder
            if leader is not None and leader != derived:
                raise PositionError(f"leader: the tricks give the lead to seat {derived}")
            state.leader = derived
        else:
            completed = self._tally(tricks_won, played, leader)
        if len(current) >= PLAYERS:
            raise PositionError("trick: a trick holds at most 2 plays before it is complete")
        lead = state.leader
        assert lead is not None
        state.trick = tuple(((lead + i) % PLAYERS, t) for i, t in enumerate(current))
        state.seat = (lead + len(current)) % PLAYERS
        return completed

    @staticmethod
    def _nothing_after(why: str, fields: Mapping[str, object]) -> None:
        for name, value in fields.items():
            if value is not None:
                raise PositionError(f"{name}: not allowed while {why}")

    def _tricks(self, tricks: Sequence[Mapping[str, Any] | Trick]) -> list[Tile]:
        state = self.state
        assert state.trump is not None and state.bidder is not None
        if len(tricks) >= TRICKS:
            raise PositionError("tricks: after 7 tricks the hand is over; give at most 6")
        lead = state.bidder
        done: list[Trick] = []
        tiles: list[Tile] = []
        won = [0] * PLAYERS
        for k, raw in enumerate(tricks):
            where = f"tricks[{k}]"
            who: object
            if isinstance(raw, Trick):
                who, laid = raw.leader, [t for _, t in raw.plays]
            else:
                who, laid = raw.get("leader"), list(_tiles(raw.get("plays", ()), where))
            if who != lead:
                raise PositionError(f"{where}: seat {lead} leads this trick, not {who!r}")
            if len(laid) != PLAYERS:
                raise PositionError(f"{where}: a trick has 3 plays, got {len(laid)}")
            plays = tuple(((lead + i) % PLAYERS, t) for i, t in enumerate(laid))
            lead = trick_winner(plays, state.trump)
            done.append(Trick(plays[0][0], plays, lead))
            won[lead] += 1
            tiles.extend(laid)
        state.tricks = tuple(done)
        state.won = tuple(won)
        return tiles

    def _tally(
        self,
        tricks_won: Sequence[int] | None,
        played: Sequence[str | Tile] | None,
        leader: int | None,
    ) -> list[Tile]:
        state = self.state
        assert state.bidder is not None
        won = tuple(tricks_won) if tricks_won is not None else (0,) * PLAYERS
        if len(won) != PLAYERS or not all(isinstance(w, int) and w >= 0 for w in won):
            raise PositionError(f"tricks_won: expected three counts, got {list(won)}")
        if sum(won) >= TRICKS:
            raise PositionError("tricks_won: after 7 tricks the hand is over; at most 6 in all")
        tiles = list(_tiles(played or (), "played"))
        if len(tiles) != PLAYERS * sum(won):
            raise PositionError(
                f"played: {sum(won)} tricks hold {PLAYERS * sum(won)} tiles, got {len(tiles)}"
            )
        if sum(won) == 0:
            if leader is not None and leader != state.bidder:
                raise PositionError(f"leader: the bidder, seat {state.bidder}, leads trick 1")
            state.leader = state.bidder
        else:
            if leader is None:
                raise PositionError("leader: required once a trick is complete")
            state.leader = _seat(leader, "leader")
            if won[state.leader] == 0:
                raise PositionError(
                    f"leader: seat {leader} won no trick, so it cannot lead (RULES.md 1.9)"
                )
        state.won = won
        return tiles

    def _account(self, completed: list[Tile], current: tuple[Tile, ...]) -> None:
        """Check that each of the 22 tiles is in exactly one place (RULES.md 1.1)."""
        state = self.state
        places: list[tuple[str, Sequence[Tile]]] = [
            (f"hands[{i}]", h) for i, h in enumerate(state.hands)
        ]
        if state.phase is Phase.BIDDING:
            assert state.widow is not None
            places.append(("widow", (state.widow,)))
        if state.discard is not None:
            places.append(("discard", (state.discard,)))
        places.append(("tricks" if state.tricks else "played", completed))
        places.append(("trick", current))
        seen: dict[Tile, str] = {}
        for where, tiles in places:
            for tile in tiles:
                if tile not in _IS_MOON:
                    raise PositionError(
                        f"{where}: {tile} is not a Moon tile (RULES.md 1.1 removes every blank "
                        "but 0-0)"
                    )
                if tile in seen:
                    raise PositionError(f"{where}: tile {tile} is also in {seen[tile]}")
                seen[tile] = where
        if len(seen) != len(MOON_TILES):
            missing = " ".join(str(t) for t in MOON_TILES if t not in seen)
            raise PositionError(
                f"hands: every one of the 22 tiles must be placed; missing {missing}"
            )
        widow = state.widow
        if widow is not None and state.phase is not Phase.BIDDING:
            bidder = state.bidder
            plays = [*(p for tr in state.tricks for p in tr.plays), *state.trick]
            bidders = {f"hands[{bidder}]", "discard", "played"}
            if seen[widow] not in bidders and (bidder, widow) not in plays:
                raise PositionError(f"widow: {widow} is not among the bidder's tiles")

    def _sizes(self, in_trick: int) -> None:
        state = self.state
        for i, hand in enumerate(state.hands):
            if state.phase is Phase.PLAYING:
                assert state.leader is not None
                played_now = (i - state.leader) % PLAYERS < in_trick
                expected = HAND_SIZE - sum(state.won) - played_now
            elif state.phase is Phase.DISCARD and i == state.bidder:
                expected = HAND_SIZE + 1
            else:
                expected = HAND_SIZE
            if len(hand) != expected:
                raise PositionError(
                    f"hands[{i}]: seat {i} should hold {expected} tiles "
                    f"({state.phase.value}), not {len(hand)}"
                )

    def _check_follows(self, current: tuple[Tile, ...]) -> None:
        """RULES.md 1.10: nobody may have failed to follow while holding the suit led."""
        state = self.state
        trump = state.trump
        assert trump is not None
        later: list[list[Tile]] = [list(h) for h in state.hands]
        records = [*((f"tricks[{k}]", tr.plays) for k, tr in enumerate(state.tricks))]
        records.append(("trick", state.trick))
        for where, plays in reversed(records):
            for seat, tile in plays:
                later[seat].append(tile)
            if not plays:
                continue
            suit = _LED[trump][plays[0][1].index]
            fits = _FOLLOWS[trump][suit]
            for seat, tile in plays[1:]:
                if fits[tile.index]:
                    continue
                held = next((t for t in later[seat] if fits[t.index]), None)
                if held is not None:
                    raise PositionError(
                        f"{where}: seat {seat} played {tile} while holding {held}, which "
                        f"follows {suit_name(suit)} (RULES.md 1.10)"
                    )


_IS_MOON: Final = frozenset(MOON_TILES)


def _seat(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < PLAYERS:
        raise PositionError(f"{field}: {value!r} is not a seat 0, 1 or 2")
    return value


def _tile(value: str | Tile, field: str) -> Tile:
    if isinstance(value, Tile):
        return value
    try:
        return Tile.parse(value)
    except ValueError as exc:
        raise PositionError(f"{field}: {exc}") from None


def _tiles(values: Sequence[str | Tile], field: str) -> tuple[Tile, ...]:
    if isinstance(values, str):
        raise PositionError(f"{field}: expected a list of tiles, got the text {values!r}")
    return tuple(_tile(v, field) for v in values)


def _trump(value: int | str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        if value in TRUMP_CHOICES:
            return value
    elif isinstance(value, str):
        try:
            action = parse_action(f"trump {value}")
        except ValueError:
            pass
        else:
            assert isinstance(action, Trump)
            return action.suit
    raise PositionError(f"trump: expected 0-6, 'doubles' or 'none', got {value!r}")
