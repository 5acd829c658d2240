"""Games and their options <-> ``GameConfig``, through each game's codec (:mod:`.codecs`)."""

from __future__ import annotations

from domino_arena.sdk.rules import Game
from domino_arena.v1 import games_pb2

# Each game's wire module registers its codec when imported: these imports are the registration.
from . import doubles_wire, moon_wire, passing_wire, straight_wire  # noqa: F401
from .codecs import CODECS, game_names
from .common import ConversionError, cached

# -- games ----------------------------------------------------------------------------------------


def game_to_proto(game: Game) -> games_pb2.GameConfig:
    """Return the wire form of ``game`` with all its options.

    Raises:
        ConversionError: ``game`` is not one of the registered games.
    """
    message = games_pb2.GameConfig()
    message.CopyFrom(game_message(game))
    return message


_GAMES: dict[Game, games_pb2.GameConfig] = {}


def game_message(game: Game) -> games_pb2.GameConfig:
    return cached(_GAMES, game, _build_game)


def _build_game(game: Game) -> games_pb2.GameConfig:
    codec = CODECS.get(getattr(game, "name", ""))
    if codec is None:
        raise ConversionError("game", f"a {type(game).__name__}", f"one of {game_names()}")
    return codec.encode_game(game)


def game_from_proto(message: games_pb2.GameConfig, where: str = "game") -> Game:
    """Return the game ``message`` configures.

    Args:
        where: the field path of ``message``, used in error messages.

    Raises:
        ConversionError: no game is set, or an option the game refuses.
    """
    try:
        return decode_game(message)
    except ConversionError as exc:
        raise exc.under(where) from None


def decode_game(message: games_pb2.GameConfig) -> Game:
    which = message.WhichOneof("game")
    codec = None if which is None else CODECS.get(which)
    if codec is None:
        raise ConversionError("", "missing", f"one of {game_names()}")
    return codec.decode_game(message)
