"""A match host and gateways in this process, over the real NATS at 127.0.0.1:4222.

Each role runs as it does under ``serve --role`` (its own asyncio loop and thread, see
:class:`~tests.fakes.referee_server.Referee`); the bots are raw protocol clients on a gateway's
port, the admin calls go to the host's. Each test has its own cluster name, so tests running in
parallel on the one broker never hear each other. Waits are event-driven: on the bots' messages
and on the host's roster (its ``watchers``), never on a timer.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.cluster.hosting import BrokerLobby
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.referee_server import WAIT, Cluster, Referee, first_legal


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'arena.db'}")
    storage.open()
    yield storage
    storage.close()


@pytest.fixture
def cluster() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


def start(
    storage: RatedStorage, cluster: str, role: str, node: str, grace: float = 10.0
) -> Referee:
    return Referee(storage, reconnect_grace=grace, cluster=Cluster(role, cluster, node))


def roster(host: Referee) -> BrokerLobby:
    assert isinstance(host.app.lobby, BrokerLobby)
    return host.app.lobby


def wait_present(host: Referee, wanted: dict[str, str]) -> None:
    """Return once the host sees each bot of ``wanted`` through the gateway named with it."""
    lobby, done = roster(host), threading.Event()

    def check() -> None:
        links = {name: lobby.get(name) for name in wanted}
        if all(link is not None and link.gateway == wanted[n] for n, link in links.items()):
            done.set()

    def watch() -> None:
        lobby.watchers.append(check)
        check()

    assert host._loop is not None
    host._loop.call_soon_threadsafe(watch)
    assert done.wait(WAIT), f"the host never saw {wanted}"


def run_match(host: Referee, bots: list[str], seed: int = 5) -> admin_pb.RunMatchResponse:
    request = admin_pb.RunMatchRequest(game=game_to_proto(make_game("passing")), bots=bots)
    request.has_seed, request.seed = True, seed
    response: admin_pb.RunMatchResponse = host.admin.RunMatch(request, timeout=WAIT)
    return response


def test_a_match_through_a_gateway_is_played_and_its_record_names_the_processes(
    storage: RatedStorage, cluster: str
) -> None:
    tokens = {name: storage.add_bot(name) for name in ("alice", "bob.2")}
    host = start(storage, cluster, "host", "host-a")
    gateway = start(storage, cluster, "gateway", "gw-a")
    try:
        bots = [gateway.connect(name, token) for name, token in tokens.items()]
        wait_present(host, {"alice": "gw-a", "bob.2": "gw-a"})
        response = run_match(host, ["alice", "bob.2"])
        assert response.result.termination == pb.TERMINATION_NORMAL
        header = json.loads(response.record.splitlines()[0])
        assert header["referee"] == {"host": "host-a", "gateways": [["gw-a"], ["gw-a"]]}
        for bot in bots:
            end = bot.wait_kind("match_end")
            assert end.match_end.match_id == response.match_id
            starts = bot.messages("match_start")
            assert [m.match_start.players for m in starts] == [["alice", "bob.2"]]
        stored = storage.match(response.match_id)
        assert stored is not None and stored.record is not None
        assert '"host": "host-a"' in stored.record.splitlines()[0]
        # The gateway answers a reply for a match its stream does not play, as one referee does.
        bots[0].send(pb.BotMessage(reply=pb.ActionReply(match_id="nope", turn=0)))
        error = bots[0].wait_kind("error")
        assert error.error.code == pb.ERROR_CODE_UNKNOWN_MATCH
    finally:
        gateway.close()
        host.close()


def test_a_bot_reconnecting_through_another_gateway_keeps_its_seat(
    storage: RatedStorage, cluster: str
) -> None:
    tokens = {name: storage.add_bot(name) for name in ("alice", "bob")}
    host = start(storage, cluster, "host", "host-a", grace=60.0)
    first = start(storage, cluster, "gateway", "gw-a")
    second = start(storage, cluster, "gateway", "gw-b")
    try:
        alice = first.connect("alice", tokens["alice"], policy=None)  # alice does not answer
        first.connect("bob", tokens["bob"])
        wait_present(host, {"alice": "gw-a", "bob": "gw-a"})
        done: list[admin_pb.RunMatchResponse] = []
        runner = threading.Thread(target=lambda: done.append(run_match(host, ["alice", "bob"])))
        runner.start()
        alice.wait_kind("request")
        again = second.connect("alice", tokens["alice"])  # answers with the first legal move
        ended = alice.wait_end()
        assert ended.code == grpc.StatusCode.ABORTED
        assert "took over" in ended.details
        resumed = again.wait_kind("match_start")
        assert resumed.match_start.resumed
        runner.join(WAIT)
        (response,) = done
        assert response.result.termination == pb.TERMINATION_NORMAL
        header = json.loads(response.record.splitlines()[0])
        assert header["referee"]["gateways"] == [["gw-a", "gw-b"], ["gw-a"]]
        assert not any(
            json.loads(line).get("type") == "fault" for line in response.record.splitlines()
        )
    finally:
        second.close()
        first.close()
        host.close()


def test_revoking_a_token_on_the_host_closes_the_stream_on_its_gateway(
    storage: RatedStorage, cluster: str
) -> None:
    token = storage.add_bot("alice")
    host = start(storage, cluster, "host", "host-a")
    gateway = start(storage, cluster, "gateway", "gw-a")
    try:
        alice = gateway.connect("alice", token)
        wait_present(host, {"alice": "gw-a"})
        host.admin.DisableBot(admin_pb.DisableBotRequest(name="alice"), timeout=WAIT)
        ended = alice.wait_end()
        assert ended.code == grpc.StatusCode.UNAUTHENTICATED
        assert "disabled" in ended.details
    finally:
        gateway.close()
        host.close()


def test_a_stopped_gateway_takes_its_bots_off_the_hosts_roster_at_once(
    storage: RatedStorage, cluster: str
) -> None:
    token = storage.add_bot("alice")
    host = start(storage, cluster, "host", "host-a")
    gateway = start(storage, cluster, "gateway", "gw-a")
    try:
        gateway.connect("alice", token)
        wait_present(host, {"alice": "gw-a"})
        lobby, gone = roster(host), threading.Event()
        assert host._loop is not None
        host._loop.call_soon_threadsafe(
            lambda: lobby.watchers.append(
                lambda: gone.set() if lobby.get("alice") is None else None
            )
        )
        gateway.close()  # a clean stop says "down" for each stream: no heartbeat timeout
        assert gone.wait(WAIT)
        assert [link.name for link in lobby.connections()] == []
    finally:
        host.close()


def test_a_spectator_on_a_gateway_watches_a_match_its_host_runs(
    storage: RatedStorage, cluster: str
) -> None:
    tokens = {name: storage.add_bot(name) for name in ("alice", "bob")}
    host = start(storage, cluster, "host", "host-a", grace=60.0)
    gateway = start(storage, cluster, "gateway", "gw-a")
    try:
        alice = gateway.connect("alice", tokens["alice"], policy=None)  # holds the match open
        gateway.connect("bob", tokens["bob"])
        wait_present(host, {"alice": "gw-a", "bob": "gw-a"})
        done: list[admin_pb.RunMatchResponse] = []
        runner = threading.Thread(target=lambda: done.append(run_match(host, ["alice", "bob"])))
        runner.start()
        request = alice.wait_kind("request")
        match_id = request.request.match_id
        spectators = admin_pb_grpc.SpectatorServiceStub(gateway.channel)
        live = spectators.ListLive(admin_pb.ListLiveRequest(), timeout=WAIT)
        assert [m.match_id for m in live.matches] == [match_id]
        assert [b.name for b in live.connected] == ["alice", "bob"]
        watches = [
            spectators.Watch(admin_pb.WatchRequest(match_id=match_id), timeout=WAIT)
            for _ in range(3)
        ]
        assert {next(w).WhichOneof("message") for w in watches} == {"start"}
        on_host = admin_pb_grpc.SpectatorServiceStub(host.channel)
        (listed,) = on_host.ListLive(admin_pb.ListLiveRequest(), timeout=WAIT).matches
        assert listed.watchers == 1, "a gateway follows a match once for all its watchers"
        gateway.connect("alice", tokens["alice"])  # takes over and answers: the match ends
        seen = [[message.WhichOneof("message") for message in watch] for watch in watches]
        kinds = seen[0]
        assert kinds[-1] == "match_end" and "event" in kinds
        assert seen[1] == seen[2] == kinds, "every watcher, every message"
        runner.join(WAIT)
        (response,) = done
        assert response.match_id == match_id
        with pytest.raises(grpc.RpcError) as over:
            next(spectators.Watch(admin_pb.WatchRequest(match_id=match_id), timeout=WAIT))
        assert over.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        with pytest.raises(grpc.RpcError) as unknown:
            next(spectators.Watch(admin_pb.WatchRequest(match_id="never"), timeout=WAIT))
        assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
    finally:
        gateway.close()
        host.close()


def test_a_hosts_broker_outage_is_a_reconnect_for_its_seats_not_a_timeout(
    storage: RatedStorage, cluster: str
) -> None:
    tokens = {name: storage.add_bot(name) for name in ("alice", "bob")}
    host = start(storage, cluster, "host", "host-a", grace=60.0)
    gateway = start(storage, cluster, "gateway", "gw-a")
    try:
        alice = gateway.connect("alice", tokens["alice"], policy=None)
        gateway.connect("bob", tokens["bob"])
        wait_present(host, {"alice": "gw-a", "bob": "gw-a"})
        done: list[admin_pb.RunMatchResponse] = []
        runner = threading.Thread(target=lambda: done.append(run_match(host, ["alice", "bob"])))
        runner.start()
        alice.wait_kind("request")
        lobby, loop = roster(host), host._loop
        assert loop is not None
        loop.call_soon_threadsafe(lobby.broker_state, False)  # as nats-py reports a drop
        loop.call_soon_threadsafe(lobby.broker_state, True)  # and its reconnection
        resumed = alice.wait_for(
            lambda m: isinstance(m, pb.RefereeMessage) and m.match_start.resumed, "a resume"
        )
        assert isinstance(resumed, pb.RefereeMessage)
        alice.policy = first_legal
        first_legal(alice, alice.messages("request")[-1].request)
        runner.join(WAIT)
        (response,) = done
        assert response.result.termination == pb.TERMINATION_NORMAL
        lines = [json.loads(line) for line in response.record.splitlines()]
        assert [line for line in lines if line["type"] == "fault"] == []
    finally:
        gateway.close()
        host.close()


def spectate_running_match(
    storage: RatedStorage, cluster: str, check: Callable[[Referee, str], None]
) -> None:
    """Hold a match open on a host (alice does not answer), run ``check(gateway, match_id)``,
    then let it end."""
    tokens = {name: storage.add_bot(name) for name in ("alice", "bob")}
    host = start(storage, cluster, "host", "host-a", grace=60.0)
    gateway = start(storage, cluster, "gateway", "gw-a")
    try:
        alice = gateway.connect("alice", tokens["alice"], policy=None)
        gateway.connect("bob", tokens["bob"])
        wait_present(host, {"alice": "gw-a", "bob": "gw-a"})
        runner = threading.Thread(target=lambda: run_match(host, ["alice", "bob"]))
        runner.start()
        match_id = alice.wait_kind("request").request.match_id
        check(gateway, match_id)
        gateway.connect("alice", tokens["alice"])  # takes over and answers: the match ends
        runner.join(WAIT)
    finally:
        gateway.close()
        host.close()


def bearer(token: str | None) -> Any:
    return None if token is None else (("authorization", f"Bearer {token}"),)


def test_a_gateway_lists_and_streams_a_signed_in_match_only_to_its_course(
    storage: RatedStorage, cluster: str
) -> None:
    storage.update_course("default", live_view="signed-in")
    organizer = storage.rotate_organizer_token("default").token

    def check(gateway: Referee, match_id: str) -> None:
        spectators = admin_pb_grpc.SpectatorServiceStub(gateway.channel)
        public = spectators.ListLive(admin_pb.ListLiveRequest(), timeout=WAIT)
        assert (list(public.matches), list(public.connected)) == ([], [])
        own = spectators.ListLive(
            admin_pb.ListLiveRequest(), timeout=WAIT, metadata=bearer(organizer)
        )
        assert [m.match_id for m in own.matches] == [match_id]
        assert own.matches[0].live_view == admin_pb.LIVE_VIEW_SIGNED_IN
        with pytest.raises(grpc.RpcError) as refused:
            next(spectators.Watch(admin_pb.WatchRequest(match_id=match_id), timeout=WAIT))
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        watch = spectators.Watch(
            admin_pb.WatchRequest(match_id=match_id), timeout=WAIT, metadata=bearer(organizer)
        )
        assert next(watch).start.course == "default"
        watch.cancel()

    spectate_running_match(storage, cluster, check)


def test_a_gateway_shows_an_anonymous_courses_aliases_to_the_public(
    storage: RatedStorage, cluster: str
) -> None:
    storage.update_course("default", anonymous=True)
    organizer = storage.rotate_organizer_token("default").token

    def check(gateway: Referee, match_id: str) -> None:
        spectators = admin_pb_grpc.SpectatorServiceStub(gateway.channel)
        public = spectators.ListLive(admin_pb.ListLiveRequest(), timeout=WAIT)
        assert [list(m.players) for m in public.matches] == [["Bot 1", "Bot 2"]]
        assert sorted(b.name for b in public.connected) == ["Bot 1", "Bot 2"]
        own = spectators.ListLive(
            admin_pb.ListLiveRequest(), timeout=WAIT, metadata=bearer(organizer)
        )
        assert [list(m.players) for m in own.matches] == [["alice", "bob"]]
        watch = spectators.Watch(admin_pb.WatchRequest(match_id=match_id), timeout=WAIT)
        assert list(next(watch).start.players) == ["Bot 1", "Bot 2"]
        watch.cancel()

    spectate_running_match(storage, cluster, check)
