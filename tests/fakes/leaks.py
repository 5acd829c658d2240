"""What a seat may see of a position, and every tile a protocol message carries.

The leak checks of the wire (tests/sdk/test_wire_leaks.py), of the referee's gRPC stream
(tests/e2e/test_wire_leaks_grpc.py) and of the spectators' stream share these: ``leaks`` names
every tile of a message that its seat may not see.
"""

from __future__ import annotations

from typing import Final

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from domino_arena.sdk.rules import (
    DoublesState,
    Game,
    GameState,
    MoonGame,
    MoonState,
    PassingState,
    StraightState,
    Tile,
    configurations,
)
from domino_arena.v1 import games_pb2

CONFIGS: Final = list(configurations())
CONFIG_IDS: Final = [
    "-".join([g.name, *(f"{k}={v}" for k, v in g.options().items())]) for g in CONFIGS
]
TILE_TYPES: Final = (games_pb2.Tile.DESCRIPTOR.full_name, games_pb2.LaidTile.DESCRIPTOR.full_name)


def seeds_for(game: Game) -> tuple[int, ...]:
    """Moon seed 2 names every kind of trump; random Moon games are long, so two seeds."""
    return (2, 5) if isinstance(game, MoonGame) else (0, 1)


# -- what a seat may see ---------------------------------------------------------------------------


def table_tiles(state: GameState) -> set[Tile]:
    """The tiles face up in the current deal: the layout, or the Moon tricks so far."""
    if isinstance(state, PassingState):
        return {Tile(a, b) for a, b in state.line}
    if isinstance(state, StraightState):
        return set(state.layout.tiles())
    if isinstance(state, DoublesState):
        return set(state.placed)
    assert isinstance(state, MoonState)
    return {t for trick in state.tricks for _, t in trick.plays} | {t for _, t in state.trick}


def own_secrets(state: GameState, seat: int) -> set[Tile]:
    """The Moon bidder's own knowledge beyond its hand: the widow it took and its discard."""
    if isinstance(state, MoonState) and state.bidder == seat:
        return {t for t in (state.widow, state.discard) if t is not None}
    return set()


def hidden_from(state: GameState, seat: int) -> dict[Tile, str]:
    """Every tile ``seat`` must not see, with where it is; table tiles are public."""
    hidden: dict[Tile, str] = {}
    for other in range(state.game.num_players):
        if other != seat:
            hidden.update((t, f"seat {other}'s hand") for t in state.hand(other))
    if isinstance(state, PassingState | StraightState | DoublesState):
        hidden.update((t, "the boneyard") for t in state.boneyard)
    if isinstance(state, MoonState) and state.bidder != seat:
        if state.widow is not None:
            hidden[state.widow] = "the widow"
        if state.discard is not None:
            hidden[state.discard] = "the bidder's discard"
    for tile in table_tiles(state):
        hidden.pop(tile, None)
    return hidden


_BRANCHES: dict[str, bool] = {}


def has_message_fields(message: Message) -> bool:
    """Whether messages of this type can hold other messages (a Tile is a leaf)."""
    descriptor = message.DESCRIPTOR
    known = _BRANCHES.get(descriptor.full_name)
    if known is None:
        known = any(f.type == FieldDescriptor.TYPE_MESSAGE for f in descriptor.fields)
        _BRANCHES[descriptor.full_name] = known
    return known


def tiles_in(message: Message) -> list[Tile]:
    """Return every tile in ``message``, found by walking its set fields recursively."""
    found: list[Tile] = []
    stack = [message]
    while stack:
        current = stack.pop()
        name = current.DESCRIPTOR.full_name
        if name == TILE_TYPES[0]:
            assert isinstance(current, games_pb2.Tile)
            found.append(Tile(current.high, current.low))
        elif name == TILE_TYPES[1]:
            assert isinstance(current, games_pb2.LaidTile)
            found.append(Tile(current.inner, current.outer))
        if not has_message_fields(current):
            continue
        for field, value in current.ListFields():
            if field.type != FieldDescriptor.TYPE_MESSAGE:
                continue
            if field.is_repeated:
                stack.extend(value)
            else:
                stack.append(value)
    return found


def leaks(tiles: list[Tile], state: GameState, seat: int) -> list[str]:
    """Return a line for every tile of ``tiles`` that ``seat`` may not see in ``state``."""
    allowed = set(state.hand(seat)) | table_tiles(state) | own_secrets(state, seat)
    hidden = hidden_from(state, seat)
    found = []
    for tile in tiles:
        if tile in hidden:
            found.append(f"{tile} from {hidden[tile]}")
        elif tile not in allowed:
            found.append(f"{tile}, which is neither in the hand nor on the table")
    return found
