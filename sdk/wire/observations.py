"""Observations <-> ``Observation``: what one seat may see, its legal actions and history.

``observation_from_proto(observation_to_proto(o)) == o`` for every observation of every game.
Decoding is strict: a message the rules library cannot represent faithfully (a missing
``oneof``, a tile number above 6, an enum value this version does not know, ...) raises
:class:`~.common.ConversionError` naming the field path and what was expected, which the
referee sends back to the bot word for word.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from domino_arena.sdk.rules import (
    TERMINAL,
    Action,
    Game,
    LogEntry,
    Observation,
)
from domino_arena.v1 import games_pb2

from .codecs import CODECS, game_names
from .common import ConversionError, cached, field_bytes, memo
from .events import decode_step, step_message
from .games import decode_game, game_message
from .tiles_actions import (
    TILE_MSG,
    action_message,
    decode_action,
    decode_seat,
    decode_tiles,
)

# -- observations ---------------------------------------------------------------------------------


def observation_to_proto(
    observation: Observation, *, history: bool = True
) -> games_pb2.Observation:
    """Return the wire form of ``observation``, legal actions and public history included.

    With ``history=False`` the ``history`` field is left empty: an ActionRequest's observation,
    whose receiver keeps the history from the events (protocol version 2).

    Raises:
        ConversionError: ``observation`` is not the observation of a registered game.
    """
    codec = CODECS.get(getattr(observation.game, "name", ""))
    if codec is None or not isinstance(observation, codec.observation_type):
        raise ConversionError(
            "observation",
            f"a {type(observation).__name__}",
            f"the observation of {game_names('or')}",
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
    codec.write_view(observation, message)
    return message


_GAME_FIELD: dict[Game, bytes] = {}
_LEGAL_FIELD: dict[int, tuple[Action, bytes]] = {}
_HISTORY_FIELD: dict[int, tuple[LogEntry, bytes]] = {}
_HAND_FIELD: Final = tuple(field_bytes(5, tile) for tile in TILE_MSG)
"""``Observation.hand`` (field 5) entries, by tile index."""


def _game_field(game: Game) -> bytes:
    return field_bytes(1, game_message(game))


def _legal_field(action: Action) -> bytes:
    return field_bytes(4, action_message(action))


def _history_field(entry: LogEntry) -> bytes:
    return field_bytes(9, step_message(entry))


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
        return CODECS[game.name].read_view(message, common, players)
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
