"""The Passing Game on the wire: its ``PassingOptions`` and its ``PassingView``."""

from __future__ import annotations

from typing import Final

from domino_arena.sdk.rules import Game, Observation, PassingGame, PassingObservation, RulesError
from domino_arena.sdk.rules.passing import TARGET_RULES
from domino_arena.sdk.rules.tiles import MAX_PIP
from domino_arena.v1 import games_pb2

from .codecs import LINE_FIELD, GameCodec, decode_players, decode_seating, register
from .common import ConversionError
from .tiles_actions import NUMBER, decode_pairs, decode_seat

_TARGET_RULE_CODE: Final = {
    "gamerules": games_pb2.TARGET_RULE_GAMERULES,
    "pagat": games_pb2.TARGET_RULE_PAGAT,
}
_TARGET_RULE_OF: Final = {
    games_pb2.TARGET_RULE_UNSPECIFIED: TARGET_RULES[0],
    **{code: rule for rule, code in _TARGET_RULE_CODE.items()},
}


def _encode_game(game: Game) -> games_pb2.GameConfig:
    assert isinstance(game, PassingGame)
    options = games_pb2.PassingOptions(
        players=game.players,
        partnerships=game.partnerships,
        target_rule=_TARGET_RULE_CODE[game.target_rule],
    )
    return games_pb2.GameConfig(passing=options)


def _decode_game(message: games_pb2.GameConfig) -> Game:
    options = message.passing
    players = decode_players(options.players, PassingGame.HAND_SIZES, "passing.players")
    decode_seating("passing", players, options.partnerships)
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


def _write_view(observation: Observation, message: games_pb2.Observation) -> None:
    assert isinstance(observation, PassingObservation)
    view = message.passing
    view.SetInParent()
    view.boneyard_size = observation.boneyard_size
    view.starter = observation.opener
    view.MergeFromString(b"".join([LINE_FIELD[pair] for pair in observation.line]))
    if observation.ends is not None:
        view.has_ends = True
        view.west, view.east = observation.ends
    view.passes = observation.passes


def _read_view(
    message: games_pb2.Observation, common: dict[str, object], players: int
) -> PassingObservation:
    view = message.passing
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


CODEC: Final = register(
    GameCodec(
        PassingGame.name, PassingObservation, _encode_game, _decode_game, _write_view, _read_view
    )
)
