"""Three-Player Moon on the wire: its ``MoonOptions`` and its ``MoonView``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from domino_arena.sdk.rules import (
    DOUBLE_SIX,
    Game,
    MoonGame,
    MoonObservation,
    Observation,
    Tile,
    Trick,
)
from domino_arena.sdk.rules.moon import BID_VALUES, Phase
from domino_arena.v1 import games_pb2

from .codecs import GameCodec, register
from .common import ConversionError, memo
from .tiles_actions import (
    TILE_AT,
    TILE_MSG,
    TRUMP_MSG,
    decode_optional_tile,
    decode_seat,
    decode_tile,
    decode_trump,
)

_PHASE_CODE: Final = {
    Phase.BIDDING: games_pb2.MOON_PHASE_BIDDING,
    Phase.DISCARD: games_pb2.MOON_PHASE_DISCARD,
    Phase.TRUMP: games_pb2.MOON_PHASE_TRUMP,
    Phase.PLAYING: games_pb2.MOON_PHASE_PLAYING,
    Phase.DEAL: games_pb2.MOON_PHASE_DEAL,
    Phase.OVER: games_pb2.MOON_PHASE_OVER,
}
_PHASE_OF: Final = {code: phase for phase, code in _PHASE_CODE.items()}
_PLAYERS: Final = MoonGame().num_players
_MOON_PLAY_MSG: Final = {
    (seat, tile): games_pb2.MoonPlay(seat=seat, tile=TILE_MSG[tile.index])
    for seat in range(_PLAYERS)
    for tile in DOUBLE_SIX
}
_BID_OF: Final = {0: None, **{v: v for v in BID_VALUES}}


def _encode_game(game: Game) -> games_pb2.GameConfig:
    return games_pb2.GameConfig(moon=games_pb2.MoonOptions())


def _decode_game(message: games_pb2.GameConfig) -> Game:
    if message.moon.deal_limit:
        raise ConversionError(
            "moon.deal_limit",
            f"{message.moon.deal_limit} (a retired option)",
            "0: Moon plays on by the rules; cap deals with the referee's max_deals",
        )
    return MoonGame()


_TRICKS: dict[int, tuple[Trick, games_pb2.MoonTrick]] = {}


def _build_trick(trick: Trick) -> games_pb2.MoonTrick:
    plays = [_MOON_PLAY_MSG[play] for play in trick.plays]
    return games_pb2.MoonTrick(leader=trick.leader, plays=plays, winner=trick.winner)


def _write_view(observation: Observation, message: games_pb2.Observation) -> None:
    assert isinstance(observation, MoonObservation)
    view = message.moon
    view.SetInParent()
    view.phase = _PHASE_CODE[observation.phase]
    view.first_bidder = observation.opener
    for seat, value in observation.bids:
        view.bids.add(seat=seat, value=0 if value is None else value)
    bidder, contract = observation.bidder, observation.contract
    if bidder is not None or contract is not None:
        if bidder is None or contract is None:
            raise ConversionError(
                "observation.moon.bidder", "only one of bidder and contract", "both or neither"
            )
        view.has_contract = True
        view.bidder = bidder
        view.contract = contract
    if observation.trump is not None:
        view.trump_named = True
        view.trump.CopyFrom(TRUMP_MSG[observation.trump])
    if observation.leader is not None:
        view.has_leader = True
        view.leader = observation.leader
    view.trick.extend([_MOON_PLAY_MSG[play] for play in observation.trick])
    view.tricks.extend([memo(_TRICKS, trick, _build_trick) for trick in observation.tricks])
    view.tricks_won.extend(observation.tricks_won)
    if observation.discard is not None:
        view.discard.CopyFrom(TILE_MSG[observation.discard.index])
    if observation.widow is not None:
        view.widow.CopyFrom(TILE_MSG[observation.widow.index])


def _read_view(
    message: games_pb2.Observation, common: dict[str, object], players: int
) -> MoonObservation:
    view = message.moon
    phase = _PHASE_OF.get(view.phase)
    if phase is None:
        problem = "missing" if view.phase == 0 else f"unknown value {view.phase}"
        raise ConversionError("phase", problem, "a MoonPhase")
    bids: list[tuple[int, int | None]] = []
    for index, bid in enumerate(view.bids):
        if bid.value not in _BID_OF:
            raise ConversionError(f"bids[{index}].value", str(bid.value), "0 (a pass), 4-7 or 21")
        bids.append((decode_seat(bid.seat, players, f"bids[{index}].seat"), _BID_OF[bid.value]))
    bidder: int | None = None
    contract: int | None = None
    if view.has_contract:
        bidder = decode_seat(view.bidder, players, "bidder")
        if view.contract not in BID_VALUES:
            raise ConversionError("contract", str(view.contract), "4-7 or 21")
        contract = view.contract
    trump: int | None = None
    if view.trump_named:
        try:
            trump = decode_trump(view.trump)
        except ConversionError as exc:
            raise exc.under("trump") from None
    leader = decode_seat(view.leader, players, "leader") if view.has_leader else None
    tricks = []
    for index, trick in enumerate(view.tricks):
        field = f"tricks[{index}]"
        tricks.append(
            Trick(
                leader=decode_seat(trick.leader, players, f"{field}.leader"),
                plays=_moon_plays(trick.plays, players, f"{field}.plays"),
                winner=decode_seat(trick.winner, players, f"{field}.winner"),
            )
        )
    won = tuple(view.tricks_won)
    if len(won) != players:
        raise ConversionError("tricks_won", f"{len(won)} values", f"one per seat, {players}")
    return MoonObservation(
        **common,  # type: ignore[arg-type]
        phase=phase,
        opener=decode_seat(view.first_bidder, players, "first_bidder"),
        bids=tuple(bids),
        bidder=bidder,
        contract=contract,
        trump=trump,
        leader=leader,
        trick=_moon_plays(view.trick, players, "trick"),
        tricks=tuple(tricks),
        tricks_won=won,
        discard=decode_optional_tile(view, "discard"),
        widow=decode_optional_tile(view, "widow"),
    )


def _moon_plays(
    plays: Sequence[games_pb2.MoonPlay], players: int, field: str
) -> tuple[tuple[int, Tile], ...]:
    at = TILE_AT
    out = []
    for play in plays:
        tile = play.tile
        found = at.get((tile.high, tile.low))
        if found is None or play.seat >= players or not play.HasField("tile"):
            raise _bad_moon_play(plays, players, field)
        out.append((play.seat, found))
    return tuple(out)


def _bad_moon_play(
    plays: Sequence[games_pb2.MoonPlay], players: int, field: str
) -> ConversionError:
    """Return the error for the first malformed play of ``plays``."""
    for index, play in enumerate(plays):
        where = f"{field}[{index}]"
        if not play.HasField("tile"):
            return ConversionError(f"{where}.tile", "missing", "the tile played")
        try:
            decode_tile(play.tile)
            decode_seat(play.seat, players, "seat")
        except ConversionError as exc:
            return exc.under(where if exc.field == "seat" else f"{where}.tile")
    raise AssertionError("called without a malformed play")


CODEC: Final = register(
    GameCodec(MoonGame.name, MoonObservation, _encode_game, _decode_game, _write_view, _read_view)
)
