"""The referee's time control <-> its wire form (server/net/wire.py)."""

from __future__ import annotations

from domino_arena.server.net.wire import time_control_from_proto, time_control_to_proto
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.v1 import referee_pb2 as pb


def test_a_time_control_round_trips_and_zeros_take_the_defaults() -> None:
    control = TimeControl(move=2.0, bank=30.0, grace=0.25)
    message = time_control_to_proto(control)
    assert message == pb.TimeControl(move_ms=2000, bank_ms=30_000, grace_ms=250)
    assert time_control_from_proto(message) == control
    assert time_control_from_proto(pb.TimeControl()) == TimeControl()
