"""Games and their options <-> ``GameConfig``."""

from __future__ import annotations

from typing import Final

from domino_arena.sdk.rules import (
    DoublesGame,
    Game,
    MoonGame,
    PassingGame,
    RulesError,
    StraightGame,
)
from domino_arena.sdk.rules.passing import TARGET_RULES
from domino_arena.v1 import games_pb2

from .common import ConversionError, cached

_GAME_NAMES: Final = "one of moon, passing, straight, doubles"

_TARGET_RULE_CODE: Final = {
    "gamerules": games_pb2.TARGET_RULE_GAMERULES,
    "pagat": games_pb2.TARGET_RULE_PAGAT,
}
_TARGET_RULE_OF: Final = {
    games_pb2.TARGET_RULE_UNSPECIFIED: TARGET_RULES[0],
    **{code: rule for rule, code in _TARGET_RULE_CODE.items()},
}


# -- games ----------------------------------------------------------------------------------------


def game_to_proto(game: Game) -> games_pb2.GameConfig:
    """Return the wire form of ``game`` with all its options.

    Raises:
        ConversionError: ``game`` is not one of the four registered games.
    """
    message = games_pb2.GameConfig()
    message.CopyFrom(game_message(game))
    return message


_GAMES: dict[Game, games_pb2.GameConfig] = {}


def game_message(game: Game) -> games_pb2.GameConfig:
    return cached(_GAMES, game, _build_game)


def _build_game(game: Game) -> games_pb2.GameConfig:
    if isinstance(game, PassingGame):
        return games_pb2.GameConfig(
            passing=games_pb2.PassingOptions(
                players=game.players,
                partnerships=game.partnerships,
                target_rule=_TARGET_RULE_CODE[game.target_rule],
            )
        )
    if isinstance(game, StraightGame):
        return games_pb2.GameConfig(
            straight=games_pb2.StraightOptions(players=game.players, partnerships=game.partnerships)
        )
    if isinstance(game, DoublesGame):
        return games_pb2.GameConfig(doubles=games_pb2.DoublesOptions(players=game.players))
    if isinstance(game, MoonGame):
        return games_pb2.GameConfig(moon=games_pb2.MoonOptions())
    raise ConversionError("game", f"a {type(game).__name__}", _GAME_NAMES)


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
    if which is None:
        raise ConversionError("", "missing", _GAME_NAMES)
    if which == "moon":
        if message.moon.deal_limit:
            raise ConversionError(
                "moon.deal_limit",
                f"{message.moon.deal_limit} (a retired option)",
                "0: Moon plays on by the rules; cap deals with the referee's max_deals",
            )
        return MoonGame()
    if which == "doubles":
        players = _players(message.doubles.players, DoublesGame.HAND_SIZES, "doubles.players")
        return DoublesGame(players=players)
    options = message.passing if which == "passing" else message.straight
    cls = PassingGame if which == "passing" else StraightGame
    players = _players(options.players, cls.HAND_SIZES, f"{which}.players")
    if options.partnerships and players != 4:
        raise ConversionError(
            f"{which}.partnerships", f"true with {players} players", "partnerships only with 4"
        )
    if isinstance(options, games_pb2.StraightOptions):
        return StraightGame(players=players, partnerships=options.partnerships)
    rule = _TARGET_RULE_OF.get(options.target_rule)
    if rule is None:
        raise ConversionError(
            "passing.target_rule",
            f"unknown value {options.target_rule}",
            "TARGET_RULE_GAMERULES or TARGET_RULE_PAGAT",
        )
    try:
        return PassingGame(players=players, partnerships=options.partnerships, target_rule=rule)
    except RulesError as exc:
        raise ConversionError("passing", str(exc), "options the Passing Game accepts") from None


def _players(value: int, allowed: dict[int, int], field: str) -> int:
    if value not in allowed:
        shown = "missing" if value == 0 else str(value)
        counts = ", ".join(str(n) for n in sorted(allowed))
        raise ConversionError(field, shown, f"a number of players: {counts}")
    return value
