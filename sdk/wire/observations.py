"""Observations <-> ``Observation``: what one seat may see, its legal actions and history.

``observation_from_proto(observation_to_proto(o)) == o`` for every observation of every game.
Decoding is strict: a message the rules library cannot represent faithfully (a missing
``oneof``, a tile number above 6, an enum value this version does not know, ...) raises
:class:`~.common.ConversionError` naming the field path and what was expected, which the
referee sends back to the bot word for word.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from domino_arena.sdk.rules import (
    DOUBLE_SIX,
    TERMINAL,
    Action,
    DoublesObservation,
    Game,
    LogEntry,
    MoonGame,
    MoonObservation,
    Observation,
    PassingGame,
    PassingObservation,
    StraightGame,
    StraightLayout,
    StraightObservation,
    Tile,
    Trick,
)
from domino_arena.sdk.rules.moon import BID_VALUES, Phase
from domino_arena.sdk.rules.tiles import MAX_PIP
from domino_arena.v1 import games_pb2

from .common import ConversionError, cached, field_bytes, memo
from .events import decode_step, step_message
from .games import decode_game, game_message
from .tiles_actions import (
    LAID_MSG,
    NUMBER,
    TILE_AT,
    TILE_MSG,
    TRUMP_MSG,
    action_message,
    decode_action,
    decode_numbers,
    decode_optional_tile,
    decode_pairs,
    decode_seat,
    decode_tile,
    decode_tiles,
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
_MOON_PLAY_MSG: Final = {
    (seat, tile): games_pb2.MoonPlay(seat=seat, tile=TILE_MSG[tile.index])
    for seat in range(MoonGame().num_players)
    for tile in DOUBLE_SIX
}


# -- observations ---------------------------------------------------------------------------------


def observation_to_proto(
    observation: Observation, *, history: bool = True
) -> games_pb2.Observation:
    """Return the wire form of ``observation``, legal actions and public history included.

    With ``history=False`` the ``history`` field is left empty: an ActionRequest's observation,
    whose receiver keeps the history from the events (protocol version 2).

    Raises:
        ConversionError: ``observation`` is not one of the four games' observation types.
    """
    writer = _VIEW_WRITERS.get(type(observation))
    if writer is None:
        raise ConversionError(
            "observation",
            f"a {type(observation).__name__}",
            "the observation of moon, passing, straight or doubles",
        )
    message = games_pb2.Observation(
        seat=observation.seat,
        current_seat=observation.current_seat,
        hand_sizes=observation.hand_sizes,
        scores=observation.scores,
        deal=observation.deal,
    )
    parts = [cached(_GAME_FIELD, observation.game, _game_field)]
    parts += [memo(_LEGAL_FIELD, action, _legal_field) for action in observation.legal_actions]
    parts += [_HAND_FIELD[tile.index] for tile in observation.hand]
    if history:
        parts += [memo(_HISTORY_FIELD, entry, _history_field) for entry in observation.history]
    message.MergeFromString(b"".join(parts))
    writer(observation, message)
    return message


_GAME_FIELD: dict[Game, bytes] = {}
_LEGAL_FIELD: dict[int, tuple[Action, bytes]] = {}
_HISTORY_FIELD: dict[int, tuple[LogEntry, bytes]] = {}
_HAND_FIELD: Final = tuple(field_bytes(5, tile) for tile in TILE_MSG)
"""``Observation.hand`` (field 5) entries, by tile index."""
_PLACED_FIELD: Final = tuple(field_bytes(3, tile) for tile in TILE_MSG)
"""``DoublesView.placed`` (field 3) entries, by tile index."""
_LINE_FIELD: Final = {pair: field_bytes(3, laid) for pair, laid in LAID_MSG.items()}
"""``PassingView.line`` and ``StraightView.line`` (field 3) entries."""
_ARM_FIELD: Final = {pair: field_bytes(1, laid) for pair, laid in LAID_MSG.items()}
"""``StraightArm.tiles`` (field 1) entries."""


def _game_field(game: Game) -> bytes:
    return field_bytes(1, game_message(game))


def _legal_field(action: Action) -> bytes:
    return field_bytes(4, action_message(action))


def _history_field(entry: LogEntry) -> bytes:
    return field_bytes(9, step_message(entry))


def _write_passing(observation: Observation, message: games_pb2.Observation) -> None:
    assert isinstance(observation, PassingObservation)
    view = message.passing
    view.SetInParent()
    view.boneyard_size = observation.boneyard_size
    view.starter = observation.opener
    view.MergeFromString(b"".join([_LINE_FIELD[pair] for pair in observation.line]))
    if observation.ends is not None:
        view.has_ends = True
        view.west, view.east = observation.ends
    view.passes = observation.passes


def _write_straight(observation: Observation, message: games_pb2.Observation) -> None:
    assert isinstance(observation, StraightObservation)
    view = message.straight
    view.SetInParent()
    view.boneyard_size = observation.boneyard_size
    view.starter = observation.opener
    layout = observation.layout
    view.MergeFromString(b"".join([_LINE_FIELD[pair] for pair in layout.line]))
    if layout.spinner is not None:
        view.has_spinner = True
        view.spinner = layout.spinner
    west, east, north, south = layout.arms
    for arm, out in (
        (west, view.west),
        (east, view.east),
        (north, view.north),
        (south, view.south),
    ):
        if arm:
            out.MergeFromString(b"".join([_ARM_FIELD[pair] for pair in arm]))


def _write_doubles(observation: Observation, message: games_pb2.Observation) -> None:
    assert isinstance(observation, DoublesObservation)
    view = message.doubles
    view.SetInParent()
    view.boneyard_size = observation.boneyard_size
    view.starter = observation.opener
    view.MergeFromString(b"".join([_PLACED_FIELD[t.index] for t in observation.placed]))
    view.ends.extend(observation.ends)
    view.unlocked.extend(sorted(observation.unlocked))
    if observation.drawn is not None:
        view.drawn.CopyFrom(TILE_MSG[observation.drawn.index])


_TRICKS: dict[int, tuple[Trick, games_pb2.MoonTrick]] = {}


def _build_trick(trick: Trick) -> games_pb2.MoonTrick:
    plays = [_MOON_PLAY_MSG[play] for play in trick.plays]
    return games_pb2.MoonTrick(leader=trick.leader, plays=plays, winner=trick.winner)


def _write_moon(observation: Observation, message: games_pb2.Observation) -> None:
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


_VIEW_WRITERS: Final[dict[type, Callable[[Observation, games_pb2.Observation], None]]] = {
    PassingObservation: _write_passing,
    StraightObservation: _write_straight,
    DoublesObservation: _write_doubles,
    MoonObservation: _write_moon,
}


def observation_from_proto(
    message: games_pb2.Observation,
    where: str = "observation",
    *,
    history: tuple[LogEntry, ...] | None = None,
) -> Observation:
    """Return the rules library's observation that ``message`` carries (equal to the original).

    Args:
        where: the field path of ``message``, used in error messages.
        history: the history of the current deal as the receiver kept it from the events,
            for an ActionRequest's observation (whose ``history`` field is empty); None: the
            message's own ``history`` field.

    Raises:
        ConversionError: a field is missing, out of range or of an unknown value, or the view
            does not belong to the game; the text names the field.
    """
    try:
        return _observation(message, history)
    except ConversionError as exc:
        raise exc.under(where) from None


def _observation(message: games_pb2.Observation, kept: tuple[LogEntry, ...] | None) -> Observation:
    if not message.HasField("game"):
        raise ConversionError("game", "missing", "the game and its options")
    try:
        game = decode_game(message.game)
    except ConversionError as exc:
        raise exc.under("game") from None
    players = game.num_players
    seat = decode_seat(message.seat, players, "seat")
    current = message.current_seat
    if not TERMINAL <= current < players:
        raise ConversionError(
            "current_seat", str(current), f"a seat 0-{players - 1}, -1 (a deal) or -2 (over)"
        )
    legal = []
    for index, action in enumerate(message.legal_actions):
        try:
            legal.append(decode_action(action, hidden=False))
        except ConversionError as exc:
            raise exc.under(f"legal_actions[{index}]") from None
    history = _history(message.history, players) if kept is None else kept
    sizes = tuple(message.hand_sizes)
    if len(sizes) != players:
        raise ConversionError("hand_sizes", f"{len(sizes)} values", f"one per seat, {players}")
    scores = tuple(message.scores)
    if len(scores) != len(game.sides):
        raise ConversionError("scores", f"{len(scores)} values", f"one per side, {len(game.sides)}")
    common = {
        "game": game,
        "seat": seat,
        "current_seat": current,
        "legal_actions": tuple(legal),
        "hand": decode_tiles(message.hand, "hand"),
        "hand_sizes": sizes,
        "scores": scores,
        "deal": message.deal,
        "history": history,
    }
    view = message.WhichOneof("view")
    if view != game.name:
        problem = "missing" if view is None else f"a {view} view"
        raise ConversionError("view", problem, f"the {game.name} view of a {game.name} game")
    try:
        if isinstance(game, MoonGame):
            return _moon(message.moon, common)
        if isinstance(game, PassingGame):
            return _passing(message.passing, common, players)
        if isinstance(game, StraightGame):
            return _straight(message.straight, common, players)
        return _doubles(message.doubles, common, players)
    except ConversionError as exc:
        raise exc.under(game.name) from None


def _history(steps: Sequence[games_pb2.Step], players: int) -> tuple[LogEntry, ...]:
    history = []
    for index, step in enumerate(steps):
        try:
            entry = decode_step(step)
            if entry.seat >= players:
                raise ConversionError("seat", str(entry.seat), f"a seat 0-{players - 1} or -1")
        except ConversionError as exc:
            raise exc.under(f"history[{index}]") from None
        history.append(entry)
    return tuple(history)


def _passing(
    view: games_pb2.PassingView, common: dict[str, object], players: int
) -> PassingObservation:
    ends: tuple[int, int] | None = None
    if view.has_ends:
        for name, value in (("west", view.west), ("east", view.east)):
            if value > MAX_PIP:
                raise ConversionError(name, str(value), NUMBER)
        ends = (view.west, view.east)
    elif view.west or view.east:
        raise ConversionError("west", "an end without has_ends", "has_ends set with west, east")
    return PassingObservation(
        **common,  # type: ignore[arg-type]
        boneyard_size=view.boneyard_size,
        opener=decode_seat(view.starter, players, "starter"),
        line=decode_pairs(view.line, "line"),
        ends=ends,
        passes=view.passes,
    )


def _straight(
    view: games_pb2.StraightView, common: dict[str, object], players: int
) -> StraightObservation:
    line = decode_pairs(view.line, "line")
    arms = (
        decode_pairs(view.west.tiles, "west.tiles"),
        decode_pairs(view.east.tiles, "east.tiles"),
        decode_pairs(view.north.tiles, "north.tiles"),
        decode_pairs(view.south.tiles, "south.tiles"),
    )
    spinner: int | None = None
    if view.has_spinner:
        if view.spinner > MAX_PIP:
            raise ConversionError("spinner", str(view.spinner), NUMBER)
        if line:
            raise ConversionError("line", "tiles beside a spinner", "the arms once has_spinner")
        spinner = view.spinner
    elif any(arms) or view.spinner:
        raise ConversionError("has_spinner", "false with arms", "has_spinner set with arms")
    return StraightObservation(
        **common,  # type: ignore[arg-type]
        boneyard_size=view.boneyard_size,
        opener=decode_seat(view.starter, players, "starter"),
        layout=StraightLayout(line=line, spinner=spinner, arms=arms),
    )


def _doubles(
    view: games_pb2.DoublesView, common: dict[str, object], players: int
) -> DoublesObservation:
    return DoublesObservation(
        **common,  # type: ignore[arg-type]
        boneyard_size=view.boneyard_size,
        opener=decode_seat(view.starter, players, "starter"),
        placed=decode_tiles(view.placed, "placed"),
        ends=tuple(sorted(decode_numbers(view.ends, "ends"))),
        unlocked=frozenset(decode_numbers(view.unlocked, "unlocked")),
        drawn=decode_optional_tile(view, "drawn"),
    )


_BID_OF: Final = {0: None, **{v: v for v in BID_VALUES}}


def _moon(view: games_pb2.MoonView, common: dict[str, object]) -> MoonObservation:
    players = MoonGame().num_players
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
