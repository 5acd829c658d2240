"""The referee's bounds on its watchers (issue 29, failures 1 and 6): per server, per match, per
client address, relays apart; each refusal names its bound; a long id is not echoed whole.

The crowd's own path is the web face, which holds one watch per match for all its browsers
(tests/web); here a crowd of direct gRPC watchers on one match costs the referee no more than
its bounds, however many try.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.server.net.watch_limits import (
    Seat,
    WatcherCounts,
    WatchLimits,
    WatchRefusedError,
)
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from tests.fakes.admin_server import AdminServer, served_over
from tests.fakes.live_match import spec_of, steps
from tests.fakes.referee_server import WAIT

RELAY: Final = "relay-secret"


def test_each_bound_refuses_with_its_name_and_a_released_seat_is_free_again() -> None:
    counts = WatcherCounts(WatchLimits(server=3, per_match=2, per_address=2, relays_per_match=1))
    a1 = counts.admit("m1", "ipv4:10.0.0.1", relay=False)
    counts.admit("m1", "ipv4:10.0.0.2", relay=False)
    with pytest.raises(WatchRefusedError, match=r"2 watch match m1.*per_match=2"):
        counts.admit("m1", "ipv4:10.0.0.3", relay=False)
    counts.admit("m2", "ipv4:10.0.0.1", relay=False)
    with pytest.raises(WatchRefusedError, match=r"3 watch this referee.*server=3"):
        counts.admit("m3", "ipv4:10.0.0.4", relay=False)
    counts.release(a1)
    counts.admit("m3", "ipv4:10.0.0.2", relay=False)  # the seat a1 freed
    roomy = WatcherCounts(WatchLimits(server=10, per_match=10, per_address=2))
    roomy.admit("m1", "ipv4:10.0.0.1", relay=False)
    roomy.admit("m2", "ipv4:10.0.0.1", relay=False)
    with pytest.raises(WatchRefusedError, match=r"2 watches are open from your address.*=2"):
        roomy.admit("m3", "ipv4:10.0.0.1", relay=False)
    assert roomy.watching_from("ipv4:10.0.0.1") == 2
    relay = counts.admit("m1", "ipv4:10.0.0.9", relay=True)
    assert relay == Seat("m1", "ipv4:10.0.0.9", relay=True)
    with pytest.raises(WatchRefusedError, match=r"relays_per_match=1"):
        counts.admit("m1", "ipv4:10.0.0.8", relay=True)
    counts.release(relay)
    counts.admit("m1", "ipv4:10.0.0.8", relay=True)


def test_the_ceiling_per_step_is_the_match_bound_and_the_relays() -> None:
    assert WatchLimits(per_match=32, relays_per_match=4).writes_per_step == 36
    with pytest.raises(ValueError, match="per_address: expected 0 or more, got -1"):
        WatchLimits(per_address=-1)


# -- over gRPC -------------------------------------------------------------------------------------

LIMITS: Final = WatchLimits(server=6, per_match=4, per_address=3, relays_per_match=1)


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[AdminServer]:
    with served_over(tmp_path / "limits.db", watch_limits=LIMITS, relay_token=RELAY) as server:
        yield server


def start_match(referee: AdminServer, match_id: str) -> None:
    game = make_game("passing")
    feed = referee.hub.on_step(match_id)
    referee.call(lambda: referee.hub.started(spec_of(game, 3, match_id=match_id)))
    for step in list(steps(game, 3))[:4]:
        referee.call(functools.partial(feed, step))


def watch(stub: admin_pb_grpc.SpectatorServiceStub, match_id: str, token: str | None = None) -> Any:
    """A Watch that has read its start (so the referee has admitted it), or the refusal."""
    metadata = None if token is None else (("authorization", f"Bearer {token}"),)
    stream: Any = stub.Watch(
        admin_pb.WatchRequest(match_id=match_id), timeout=WAIT, metadata=metadata
    )
    first = next(stream)
    assert first.WhichOneof("message") == "start"
    return stream


def refusal(stub: admin_pb_grpc.SpectatorServiceStub, match_id: str) -> tuple[Any, str]:
    with pytest.raises(grpc.RpcError) as info:
        watch(stub, match_id)
    error: Any = info.value
    return error.code(), error.details()


def test_a_crowd_from_one_address_gets_its_bound_and_the_match_its_own(
    referee: AdminServer,
) -> None:
    start_match(referee, "final")
    open_streams = [watch(referee.spectators, "final") for _ in range(LIMITS.per_address)]
    refused = [refusal(referee.spectators, "final") for _ in range(200)]
    assert {code for code, _ in refused} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
    assert "per_address=3" in refused[0][1]
    assert referee.call(lambda: referee.hub.watchers("final")) == LIMITS.per_address
    open_streams[0].cancel()
    # The freed seat is taken again once the referee has seen the cancel.
    for _ in range(100):
        try:
            open_streams[0] = watch(referee.spectators, "final")
            break
        except grpc.RpcError:
            continue
    else:
        pytest.fail("a cancelled watch never freed its seat")
    for stream in open_streams:
        stream.cancel()


def test_a_relay_watches_beside_a_full_match(referee: AdminServer) -> None:
    start_match(referee, "full")
    streams = [watch(referee.spectators, "full") for _ in range(LIMITS.per_address)]
    relay = watch(referee.spectators, "full", RELAY)
    with pytest.raises(grpc.RpcError) as info:
        watch(referee.spectators, "full", RELAY)
    error: Any = info.value
    assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "relays_per_match=1" in error.details()
    assert referee.call(lambda: referee.hub.watchers("full")) == LIMITS.per_address + 1
    for stream in (*streams, relay):
        stream.cancel()


def test_a_long_unknown_id_is_refused_without_being_echoed_whole(referee: AdminServer) -> None:
    code, details = refusal(referee.spectators, "x" * 5000)
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert details == "match_id: at most 128 characters, got 5000"
    code, details = refusal(referee.spectators, "y" * 128)
    assert code is grpc.StatusCode.NOT_FOUND
    assert len(details) < 140 and "(128 characters)" in details
