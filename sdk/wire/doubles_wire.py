"""Doubles on the wire: its ``DoublesOptions`` and its ``DoublesView``."""

from __future__ import annotations

from typing import Final

from domino_arena.sdk.rules import DoublesGame, DoublesObservation, Game, Observation
from domino_arena.v1 import games_pb2

from .codecs import GameCodec, decode_players, register
from .common import field_bytes
from .tiles_actions import (
    TILE_MSG,
    decode_numbers,
    decode_optional_tile,
    decode_seat,
    decode_tiles,
)

_PLACED_FIELD: Final = tuple(field_bytes(3, tile) for tile in TILE_MSG)
"""``DoublesView.placed`` (field 3) entries, by tile index."""


def _encode_game(game: Game) -> games_pb2.GameConfig:
    assert isinstance(game, DoublesGame)
    return games_pb2.GameConfig(doubles=games_pb2.DoublesOptions(players=game.players))


def _decode_game(message: games_pb2.GameConfig) -> Game:
    players = decode_players(message.doubles.players, DoublesGame.HAND_SIZES, "doubles.players")
    return DoublesGame(players=players)


def _write_view(observation: Observation, message: games_pb2.Observation) -> None:
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


def _read_view(
    message: games_pb2.Observation, common: dict[str, object], players: int
) -> DoublesObservation:
    view = message.doubles
    return DoublesObservation(
        **common,  # type: ignore[arg-type]
        boneyard_size=view.boneyard_size,
        opener=decode_seat(view.starter, players, "starter"),
        placed=decode_tiles(view.placed, "placed"),
        ends=tuple(sorted(decode_numbers(view.ends, "ends"))),
        unlocked=frozenset(decode_numbers(view.unlocked, "unlocked")),
        drawn=decode_optional_tile(view, "drawn"),
    )


CODEC: Final = register(
    GameCodec(
        DoublesGame.name, DoublesObservation, _encode_game, _decode_game, _write_view, _read_view
    )
)
