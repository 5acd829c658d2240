"""The spectator relay (issue 29, failure 1): a crowd of gRPC spectators on one match costs the
referee ONE watch, counted as a relay's; every spectator gets every message in order; the
relay serves public matches only and passes the referee's refusals on as they are.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.server.net.relay import RelayServicer
from domino_arena.server.net.spectators import add_spectator_service
from domino_arena.server.net.watch_limits import WatchLimits
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from tests.fakes.admin_server import AdminServer, served_over
from tests.fakes.live_match import normal_end, spec_of, steps
from tests.fakes.referee_server import WAIT

RELAY: Final = "relay-secret"
CROWD: Final = 300
REFEREE_LIMITS: Final = WatchLimits(server=4, per_match=2, per_address=2, relays_per_match=1)


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[AdminServer]:
    with served_over(tmp_path / "relay.db", watch_limits=REFEREE_LIMITS, relay_token=RELAY) as s:
        yield s


async def crowd_watches(
    referee: AdminServer, match_id: str, crowd: int, play: Any
) -> tuple[list[list[bytes]], RelayServicer]:
    """``crowd`` spectators watch ``match_id`` through a relay; ``play()`` (run in a thread
    once all of them have their start) plays the match on. Returns what each received."""
    upstream = grpc.aio.insecure_channel(referee.address)
    roomy = WatchLimits(server=crowd, per_match=crowd, per_address=crowd, relays_per_match=0)
    relay = RelayServicer(upstream, token=RELAY, limits=roomy)
    server = grpc.aio.server()
    add_spectator_service(relay, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    received: list[list[bytes]] = [[] for _ in range(crowd)]
    started = asyncio.Semaphore(0)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            watch = channel.unary_stream(
                "/domino_arena.v1.SpectatorService/Watch",
                request_serializer=admin_pb.WatchRequest.SerializeToString,
                response_deserializer=bytes,
            )

            async def spectator(index: int) -> None:
                call = watch(admin_pb.WatchRequest(match_id=match_id), timeout=WAIT)
                async for data in call:
                    if not received[index]:
                        started.release()
                    received[index].append(data)

            tasks = [asyncio.create_task(spectator(i)) for i in range(crowd)]
            for _ in range(crowd):
                await asyncio.wait_for(started.acquire(), WAIT)
            assert relay.upstream_watches == 1, "one watch of the referee for the whole crowd"
            assert (
                await asyncio.to_thread(referee.call, lambda: referee.hub.watchers(match_id)) == 1
            )
            await asyncio.to_thread(play)
            await asyncio.wait_for(asyncio.gather(*tasks), WAIT)
    finally:
        await relay.close()
        await server.stop(0)
        await upstream.close()
    return received, relay


def test_a_crowd_through_a_relay_costs_the_referee_one_watch(referee: AdminServer) -> None:
    game = make_game("passing")
    game_steps = list(steps(game, 5))
    feed = referee.hub.on_step("final")
    referee.call(lambda: referee.hub.started(spec_of(game, 5, match_id="final")))
    for step in game_steps[:3]:
        referee.call(functools.partial(feed, step))

    def play() -> None:
        for step in game_steps[3:]:
            referee.call(functools.partial(feed, step))
        referee.call(lambda: referee.hub.ended("final", normal_end(game_steps[-1].after)))

    received, _ = asyncio.run(crowd_watches(referee, "final", CROWD, play))
    first = received[0]
    assert all(got == first for got in received), "every spectator, every message, in order"
    messages = [admin_pb.SpectatorMessage.FromString(data) for data in first]
    kinds = [m.WhichOneof("message") for m in messages]
    assert kinds[0] == "start" and kinds[-1] == "match_end"
    assert kinds.count("event") == len(game_steps)


def test_the_relay_passes_the_referees_refusal_and_serves_public_matches_only(
    referee: AdminServer,
) -> None:
    storage = referee.arena.storage
    storage.create_course("class", live_view="signed-in")
    spec = dataclasses.replace(spec_of(make_game("passing"), 1, match_id="quiet"), course="class")
    referee.call(lambda: referee.hub.started(spec))

    async def body() -> tuple[list[tuple[Any, str]], int]:
        upstream = grpc.aio.insecure_channel(referee.address)
        relay = RelayServicer(upstream, token=RELAY)
        server = grpc.aio.server()
        add_spectator_service(relay, server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        refusals = []
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = admin_pb_grpc.SpectatorServiceStub(channel)
                for match_id in ("nope", "quiet", "nope", "nope", "nope"):
                    call = stub.Watch(admin_pb.WatchRequest(match_id=match_id), timeout=WAIT)
                    with pytest.raises(grpc.aio.AioRpcError) as info:
                        async for _ in call:
                            pass
                    refusals.append((info.value.code(), info.value.details() or ""))
                listed = await stub.ListLive(admin_pb.ListLiveRequest(), timeout=WAIT)
                assert [m.match_id for m in listed.matches] == []
        finally:
            await relay.close()
            await server.stop(0)
            await upstream.close()
        return refusals, relay.upstream_watches

    refusals, upstream_watches = asyncio.run(body())
    (unknown, unknown_text), (private, private_text), *again = refusals
    assert again == [(unknown, unknown_text)] * 3, "the same refusal, remembered"
    assert upstream_watches == 2, "an unknown match is asked of the referee once, not per try"
    assert unknown is grpc.StatusCode.NOT_FOUND and unknown_text == "no match has id 'nope'"
    assert private is grpc.StatusCode.PERMISSION_DENIED, "the relay asks as the public does"
    assert "shown to course 'class' only (live view: signed-in)" in private_text
