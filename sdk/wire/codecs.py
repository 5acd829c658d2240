"""Each game's wire code, by registry name: one :class:`GameCodec` per game, no switch on types.

A game's module in this package (``passing_wire``, ``straight_wire``, ``doubles_wire``,
``moon_wire``) converts its ``GameConfig`` options and its observation view, and registers them
here with :func:`register`; :mod:`.games` and :mod:`.observations` convert what every game
shares and hand the rest to the codec named by ``game.name`` (which is also the name of the
game's ``oneof`` field in ``GameConfig`` and in ``Observation``). Adding a game is its rules
module, its wire module here and one import in :mod:`.games`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from domino_arena.sdk.rules import Game, Observation
from domino_arena.v1 import games_pb2

from .common import ConversionError, field_bytes
from .tiles_actions import LAID_MSG

ViewReader = Callable[[games_pb2.Observation, dict[str, object], int], Observation]
"""``read(message, common, players)``: the game's observation from the wire ``message``; the
fields every game shares are already decoded in ``common`` (keyword arguments)."""


@dataclass(frozen=True)
class GameCodec:
    """One game's conversions to and from the wire."""

    name: str
    """The game's registry name, and the name of its ``oneof`` field on the wire."""
    observation_type: type[Observation]
    """The class of the game's observations, the only one :attr:`write_view` accepts."""
    encode_game: Callable[[Game], games_pb2.GameConfig]
    decode_game: Callable[[games_pb2.GameConfig], Game]
    """Raises :class:`ConversionError` for an option the game refuses."""
    write_view: Callable[[Observation, games_pb2.Observation], None]
    """Fill the game's view of ``Observation`` (the common fields are written already)."""
    read_view: ViewReader


CODECS: Final[dict[str, GameCodec]] = {}
"""Every game's codec by registry name, filled as the games' wire modules are imported."""


def register(codec: GameCodec) -> GameCodec:
    """Add ``codec`` to :data:`CODECS` (a game's wire module calls this once, at import)."""
    CODECS[codec.name] = codec
    return codec


def game_names(last: str = ",") -> str:
    """The registered games for an error message: ``"doubles, moon, passing or straight"``."""
    names = sorted(CODECS)
    if last == ",":
        return ", ".join(names)
    return f"{', '.join(names[:-1])} {last} {names[-1]}"


def decode_players(value: int, allowed: dict[int, int], field: str) -> int:
    """Return the number of players ``value`` if the game ``allowed`` it (its hand sizes)."""
    if value not in allowed:
        shown = "missing" if value == 0 else str(value)
        counts = ", ".join(str(n) for n in sorted(allowed))
        raise ConversionError(field, shown, f"a number of players: {counts}")
    return value


def decode_seating(which: str, players: int, partnerships: bool) -> None:
    """Refuse partnerships with other than 4 players (Passing and Straight)."""
    if partnerships and players != 4:
        raise ConversionError(
            f"{which}.partnerships", f"true with {players} players", "partnerships only with 4"
        )


LINE_FIELD: Final = {pair: field_bytes(3, laid) for pair, laid in LAID_MSG.items()}
"""``PassingView.line`` and ``StraightView.line`` (field 3) entries."""
