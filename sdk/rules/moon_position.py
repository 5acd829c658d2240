"""Explicit Moon positions: the fields of ``MoonGame.from_position``, checked one by one.

The phase follows from the fields given: bidding until the bids are over, then the discard
(while ``discard`` is missing), then trump (while ``trump`` is missing), then the tricks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from .actions import Trump, parse_action
from .errors import PositionError
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
    Trick,
    suit_name,
    trick_winner,
)
from .state import Phase
from .tiles import Tile, parse_tile, parse_tiles

if TYPE_CHECKING:
    from .moon import MoonGame, MoonState


class PositionBuilder:
    """Checks an explicit position field by field and fills a fresh :class:`MoonState`."""

    state: MoonState
    """The state being filled; private until :meth:`build` returns it."""

    def __init__(self, cls: type[MoonState], game: MoonGame) -> None:
        self.cls = cls
        self.game = game

    def build(
        self,
        *,
        hands: Sequence[str | Sequence[str | Tile]],
        boneyard: str | Sequence[str | Tile] | None = None,
        opener: int = 0,
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
        deals: Sequence[str | Sequence[str | Tile]] | None = None,
    ) -> MoonState:
        """Return the position ``MoonGame.from_position`` describes (its docstring lists them)."""
        if isinstance(deal, bool) or not isinstance(deal, int) or deal < 1:
            raise PositionError(f"deal must be a number 1 or more, got {deal!r}")
        state = self.state = self.cls._blank(self.game, seed)
        state.deal_index = deal - 1
        state.opener = _seat(opener, "opener")
        state.side_scores = self._scores(scores)
        if len(hands) != PLAYERS:
            raise PositionError(f"hands: expected 3 hands, got {len(hands)}")
        state.hands = tuple(
            tuple(sorted(parse_tiles(h, f"hands[{i}]"))) for i, h in enumerate(hands)
        )
        state.widow = _widow(boneyard)
        state.discard = None if discard is None else parse_tile(discard, "discard")
        state.trump = None if trump is None else _trump(trump)
        state.trick = ()
        state.tricks = ()
        state.won = (0,) * PLAYERS
        state.leader = None
        state.bids = self._bids(bids)
        self._auction(bidder, contract)
        current = parse_tiles(trick, "trick")
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
        state._later_deals(deals)
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
                "(docs/rules.md 1.13)"
            )
        return values

    def _bids(self, bids: Sequence[int | str | None] | None) -> tuple[tuple[int, int | None], ...]:
        if bids is None:
            return ()
        first = self.state.opener
        out: list[tuple[int, int | None]] = []
        high = 0
        for i, raw in enumerate(bids):
            where = f"bids[{i}]"
            if out and out[-1][1] == MOON_BID:
                raise PositionError(f"{where}: a bid of 21 ends the bidding (docs/rules.md 1.5)")
            if i >= PLAYERS:
                raise PositionError("bids: each player bids or passes once (docs/rules.md 1.5)")
            if raw is None or raw == "pass":
                value = None
            elif isinstance(raw, int) and not isinstance(raw, bool) and raw in BID_VALUES:
                if raw <= high:
                    raise PositionError(
                        f"{where}: {raw} is not higher than {high} (docs/rules.md 1.5)"
                    )
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
                    "bids: all three passed, so the deal is void (docs/rules.md 1.5); "
                    "give the next deal instead"
                )
            value, winner = max(made)
            if bidder is not None and bidder != winner:
                raise PositionError(f"bidder: the bids make seat {winner} the bidder, not {bidder}")
            if contract is not None and contract != value:
                raise PositionError(f"contract: the bids make the contract {value}, not {contract}")
            state.bidder, state.contract = winner, value
        elif bids and (bidder is not None or contract is not None):
            raise PositionError("bidder: the bids given are not over yet (docs/rules.md 1.5)")
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
                raise PositionError(
                    "boneyard: the widow is required while bidding (docs/rules.md 1.2)"
                )
            state.phase = Phase.BIDDING
            state.seat = (state.opener + len(state.bids)) % PLAYERS
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
                who, laid = raw.get("leader"), list(parse_tiles(raw.get("plays", ()), where))
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
        tiles = list(parse_tiles(played or (), "played"))
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
                    f"leader: seat {leader} won no trick, so it cannot lead (docs/rules.md 1.9)"
                )
        state.won = won
        return tiles

    def _account(self, completed: list[Tile], current: tuple[Tile, ...]) -> None:
        """Check that each of the 22 tiles is in exactly one place (docs/rules.md 1.1)."""
        state = self.state
        places: list[tuple[str, Sequence[Tile]]] = [
            (f"hands[{i}]", h) for i, h in enumerate(state.hands)
        ]
        if state.phase is Phase.BIDDING:
            assert state.widow is not None
            places.append(("boneyard", (state.widow,)))
        if state.discard is not None:
            places.append(("discard", (state.discard,)))
        places.append(("tricks" if state.tricks else "played", completed))
        places.append(("trick", current))
        seen: dict[Tile, str] = {}
        for where, tiles in places:
            for tile in tiles:
                if tile not in _IS_MOON:
                    raise PositionError(
                        f"{where}: {tile} is not a Moon tile "
                        "(docs/rules.md 1.1 removes every blank but 0-0)"
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
                raise PositionError(f"boneyard: the widow {widow} is not among the bidder's tiles")

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
        """docs/rules.md 1.10: nobody may have failed to follow while holding the suit led."""
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
            suit = LED_SUIT[trump][plays[0][1].index]
            fits = FOLLOWS_SUIT[trump][suit]
            for seat, tile in plays[1:]:
                if fits[tile.index]:
                    continue
                held = next((t for t in later[seat] if fits[t.index]), None)
                if held is not None:
                    raise PositionError(
                        f"{where}: seat {seat} played {tile} while holding {held}, which "
                        f"follows {suit_name(suit)} (docs/rules.md 1.10)"
                    )


_IS_MOON: Final = frozenset(MOON_TILES)


def _seat(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < PLAYERS:
        raise PositionError(f"{field}: {value!r} is not a seat 0, 1 or 2")
    return value


def _widow(boneyard: str | Sequence[str | Tile] | None) -> Tile | None:
    """Read Moon's boneyard: no tile, or the one widow (docs/rules.md 0.3, 1.2)."""
    if boneyard is None:
        return None
    tiles = parse_tiles(boneyard, "boneyard")
    if len(tiles) > 1:
        raise PositionError(f"boneyard: Moon leaves one tile undealt, the widow; got {len(tiles)}")
    return tiles[0] if tiles else None


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
