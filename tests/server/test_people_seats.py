"""People at the table over real gRPC (docs/people.md): the web face asks TableService for a
seat, plays it through BotService.Play with the SDK's Connection, and the match is played and
stored like a practice match, its record naming the seat ``person:NAME``.

The person is a scripted AsyncBot that waits for the test's go before its first move, so the
test watches the match (as the web face would, with the relay token) before it can end; the
watch's end comes after the match is stored, so no test polls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Final

import grpc
import pytest

from domino_arena.bots import HOUSE_BOTS
from domino_arena.sdk.bot import AsyncBot, MatchEndInfo, MatchStartInfo
from domino_arena.sdk.client.connection import Connection
from domino_arena.sdk.client.players import Players
from domino_arena.sdk.match.records import parse_record, replay
from domino_arena.sdk.rules import Action, Observation, make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from tests.fakes.referee_server import WAIT, Referee

RELAY: Final = "test-relay-token"
RELAY_METADATA: Final = (("authorization", f"Bearer {RELAY}"),)


@pytest.fixture
def storage(tmp_path: pytest.TempPathFactory) -> Iterator[RatedStorage]:
    opened = RatedStorage(f"sqlite:///{tmp_path}/people.db")
    opened.open()
    yield opened
    opened.close()


@pytest.fixture
def referee(storage: RatedStorage) -> Iterator[Referee]:
    served = Referee(storage, relay_token=RELAY)
    served.app.arena.house = dict(HOUSE_BOTS)
    yield served
    served.close()


def admin_person(name: str = "ann") -> admin_pb.Person:
    return admin_pb.Person(course="default", role=admin_pb.PERSON_ROLE_ADMIN, name=name)


class Person(AsyncBot):
    """Plays the first legal action, once the test says go; keeps what it was told."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.started = asyncio.Event()
        self.ended = asyncio.Event()
        self.start: MatchStartInfo | None = None
        self.result: MatchEndInfo | None = None

    async def choose(self, observation: Observation) -> Action:
        await self.go.wait()
        return observation.legal_actions[0]

    async def on_match_start(self, info: MatchStartInfo) -> None:
        self.start = info
        self.started.set()

    async def on_match_end(self, result: MatchEndInfo) -> None:
        self.result = result
        self.ended.set()


async def play_watched(
    address: str, seat: admin_pb.SeatPersonResponse, person: Person
) -> list[admin_pb.SpectatorMessage]:
    """Connect the person's seat, watch its match with the relay token, let the person play,
    and return what the watch saw (its end comes once the match is stored)."""
    connection = Connection(
        Players(person), server=address, name=seat.seat_name, token=seat.seat_token
    )
    serving = asyncio.create_task(connection.serve())
    try:
        await asyncio.wait_for(person.started.wait(), WAIT)
        async with grpc.aio.insecure_channel(address) as channel:
            spectators = admin_pb_grpc.SpectatorServiceStub(channel)
            watch = spectators.Watch(
                admin_pb.WatchRequest(match_id=seat.match_id), metadata=RELAY_METADATA
            )
            first = await asyncio.wait_for(watch.read(), WAIT)
            assert isinstance(first, admin_pb.SpectatorMessage)
            seen = [first]
            person.go.set()
            while True:
                message = await asyncio.wait_for(watch.read(), WAIT)
                if message is grpc.aio.EOF:
                    break
                assert isinstance(message, admin_pb.SpectatorMessage)
                seen.append(message)
        await asyncio.wait_for(person.ended.wait(), WAIT)
        return seen
    finally:
        serving.cancel()


def test_a_person_plays_a_practice_match_against_house_bots(
    referee: Referee, storage: RatedStorage
) -> None:
    tables = admin_pb_grpc.TableServiceStub(referee.channel)
    seat = tables.SeatPerson(
        admin_pb.SeatPersonRequest(
            person=admin_person(),
            game=game_to_proto(make_game("straight")),
            seat=1,
            seed=7,
        ),
        metadata=RELAY_METADATA,
        timeout=WAIT,
    )
    assert seat.seat_name.startswith("person:ann#")
    assert list(seat.players) == ["house:greedy", "person:ann"]
    assert seat.time_control.move_ms == 60_000
    person = Person()
    seen = asyncio.run(play_watched(referee.address, seat, person))

    start = person.start
    assert start is not None
    assert start.players == ("house:greedy", "person:ann")
    assert start.people == (False, True)
    assert start.seat == 1
    assert person.result is not None and person.result.seat == 1
    assert seen[0].WhichOneof("message") == "start"
    assert list(seen[0].start.people) == [False, True]
    assert seen[-1].WhichOneof("message") == "match_end"

    stored = storage.match(seat.match_id)
    assert stored is not None
    assert stored.seats == ("house:greedy", "person:ann")
    assert not stored.rated
    assert stored.course == "default"
    assert stored.record is not None
    record = parse_record(stored.record)
    assert record.seats == ("house:greedy", "person:ann")
    assert not record.faults
    replay(record)
