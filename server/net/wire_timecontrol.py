"""The referee's :class:`~domino_arena.server.play.timecontrol.TimeControl` <-> ``TimeControl``.

The one conversion pair of a time control and its wire form (whole milliseconds). It lives in
the server, beside the remote seats, because the SDK's :mod:`domino_arena.sdk.wire` may not
import server code and ``TimeControl`` is the referee's.
"""

from __future__ import annotations

from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.v1 import referee_pb2


def time_control_to_proto(time_control: TimeControl) -> referee_pb2.TimeControl:
    """Return the wire form of ``time_control``, rounded to milliseconds."""
    move_ms, bank_ms, grace_ms = time_control.to_ms()
    return referee_pb2.TimeControl(move_ms=move_ms, bank_ms=bank_ms, grace_ms=grace_ms)


def time_control_from_proto(message: referee_pb2.TimeControl) -> TimeControl:
    """Return the time control ``message`` sets; a zero field takes the default (the protocol's
    convention), so every message makes a valid one."""
    return TimeControl.from_ms(message.move_ms, message.bank_ms, message.grace_ms)
