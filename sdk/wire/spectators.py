"""A spectator's table <-> ``Observation``: the public table a ``Watch`` stream carries.

The table is the rules library's own observation for the viewer without a seat
(``state.observe(SPECTATOR)``): no hand, no legal actions, no private tile. Its wire form is an
``Observation`` message whose ``seat`` is 0 and means nothing (the field cannot hold
``SPECTATOR``); decoding refuses a table that carries a hand or legal actions, so a referee
that ever sent one would be caught at the first message rather than shown to the public.
"""

from __future__ import annotations

import dataclasses

from domino_arena.sdk.rules import SPECTATOR, Observation
from domino_arena.v1 import games_pb2

from .common import ConversionError
from .observations import observation_from_proto, observation_to_proto


def spectator_table_to_proto(table: Observation) -> games_pb2.Observation:
    """Return the wire form of ``table`` (``state.observe(SPECTATOR)``).

    Raises:
        ConversionError: ``table`` is a seat's observation, not a spectator's.
    """
    if table.seat != SPECTATOR or table.hand or table.legal_actions:
        raise ConversionError(
            "table", f"the observation of seat {table.seat}", "a spectator's (SPECTATOR) table"
        )
    return observation_to_proto(dataclasses.replace(table, seat=0))


def spectator_table_from_proto(message: games_pb2.Observation, where: str = "table") -> Observation:
    """Return the spectator's observation that ``message`` carries (its seat ``SPECTATOR``).

    Raises:
        ConversionError: the table is malformed, or holds a hand or legal actions (a
            spectator's table has neither); the text names the field.
    """
    if message.hand:
        raise ConversionError(f"{where}.hand", f"{len(message.hand)} tiles", "none in a table")
    if message.legal_actions:
        raise ConversionError(
            f"{where}.legal_actions", f"{len(message.legal_actions)} actions", "none in a table"
        )
    table = observation_from_proto(message, where)
    return dataclasses.replace(table, seat=SPECTATOR)
