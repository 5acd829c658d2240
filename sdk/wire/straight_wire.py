"""Straight Dominoes on the wire: its ``StraightOptions`` and its ``StraightView``."""

from __future__ import annotations

from typing import Final

from domino_arena.sdk.rules import (
    Game,
    Observation,
    StraightGame,
    StraightLayout,
    StraightObservation,
)
from domino_arena.sdk.rules.tiles import MAX_PIP
from domino_arena.v1 import games_pb2

from .codecs import LINE_FIELD, GameCodec, decode_players, decode_seating, register
from .common import ConversionError, field_bytes
from .tiles_actions import LAID_MSG, NUMBER, decode_pairs, decode_seat

_ARM_FIELD: Final = {pair: field_bytes(1, laid) for pair, laid in LAID_MSG.items()}
"""``StraightArm.tiles`` (field 1) entries."""


def _encode_game(game: Game) -> games_pb2.GameConfig:
    assert isinstance(game, StraightGame)
    options = games_pb2.StraightOptions(players=game.players, partnerships=game.partnerships)
    return games_pb2.GameConfig(straight=options)


def _decode_game(message: games_pb2.GameConfig) -> Game:
    options = message.straight
    players = decode_players(options.players, StraightGame.HAND_SIZES, "straight.players")
    decode_seating("straight", players, options.partnerships)
    return StraightGame(players=players, partnerships=options.partnerships)


def _write_view(observation: Observation, message: games_pb2.Observation) -> None:
    assert isinstance(observation, StraightObservation)
    view = message.straight
    view.SetInParent()
    view.boneyard_size = observation.boneyard_size
    view.starter = observation.opener
    layout = observation.layout
    view.MergeFromString(b"".join([LINE_FIELD[pair] for pair in layout.line]))
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


def _read_view(
    message: games_pb2.Observation, common: dict[str, object], players: int
) -> StraightObservation:
    view = message.straight
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


CODEC: Final = register(
    GameCodec(
        StraightGame.name, StraightObservation, _encode_game, _decode_game, _write_view, _read_view
    )
)
