"""``RegistrationService`` over real gRPC: a bot registered with an invite code, and re-keyed
with its own token (the servicer of tests/fakes/admin_server.py on a real SQLite storage and a
real lobby).

A code that is wrong, expired, revoked or used up gets one answer; of two registrations racing
for a code's last use, one wins; a taken name leaves the code unused; attempts are limited per
peer; rotating one's own token closes the bot's open stream.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.limits import peer_host
from domino_arena.server.net.lobby import Close, Connection
from domino_arena.server.net.registration import TOKEN_REFUSED, AttemptLimiter
from domino_arena.server.store.bots import BotCheck
from domino_arena.server.store.courses import INVITE_REFUSED
from domino_arena.server.store.tables import INVITES
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.admin_server import AdminServer, FakeArena, refused
from tests.fakes.referee_server import WAIT

COURSE: Final = "cs101"


class Clock:
    """A clock the test moves (the limiter's ``clock``): no real sleeping."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'registration.db'}")
    storage.open()
    storage.create_course(COURSE)
    yield storage
    storage.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def server(storage: RatedStorage, clock: Clock) -> Iterator[AdminServer]:
    server = AdminServer(FakeArena(storage), AttemptLimiter(burst=50, per_minute=50, clock=clock))
    yield server
    server.close()


def code(storage: RatedStorage, uses: int = 1) -> str:
    return storage.create_invites(COURSE, 1, uses=uses)[0].code


def register(server: AdminServer, invite: str, name: str, owner: str = "") -> Any:
    request = admin_pb.RegisterBotRequest(invite_code=invite, name=name, owner=owner)
    return server.registration.RegisterBot(request, timeout=WAIT)


def test_a_code_registers_a_bot_in_its_course_and_shows_the_token_once(
    server: AdminServer, storage: RatedStorage
) -> None:
    invite = code(storage)
    answer = register(server, invite, "annbot", "ann")
    assert (answer.bot.name, answer.bot.course, answer.bot.owner) == ("annbot", COURSE, "ann")
    assert answer.owner_token.startswith(f"{COURSE}:ann:")
    assert answer.bot.state == admin_pb.BOT_STATE_ENABLED and not answer.bot.connected
    assert storage.check_bot("annbot", answer.token) is BotCheck.OK
    (stored,) = storage.invites(COURSE)
    assert stored.used == 1


def test_of_two_registrations_racing_for_the_last_use_one_wins(
    server: AdminServer, storage: RatedStorage
) -> None:
    invite = code(storage)
    start = threading.Barrier(2)
    outcomes: dict[str, Any] = {}

    def attempt(name: str) -> None:
        start.wait(WAIT)
        try:
            outcomes[name] = register(server, invite, name).bot.name
        except grpc.RpcError as exc:
            outcomes[name] = (exc.code(), exc.details())

    threads = [threading.Thread(target=attempt, args=(name,)) for name in ("one", "two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    won = [name for name, outcome in outcomes.items() if outcome == name]
    assert len(won) == 1, outcomes
    (lost,) = {"one", "two"} - set(won)
    assert outcomes[lost] == (grpc.StatusCode.UNAUTHENTICATED, INVITE_REFUSED)
    assert [b.name for b in storage.bots(course=COURSE)] == won
    assert storage.invites(COURSE)[0].used == 1


def test_wrong_expired_revoked_and_used_up_codes_get_one_answer(
    server: AdminServer, storage: RatedStorage
) -> None:
    used = code(storage)
    register(server, used, "first")
    revoked = code(storage)
    storage.revoke_invite(revoked.split(":")[1])
    expired = code(storage)
    with storage.engine.begin() as connection:
        connection.execute(
            INVITES.update()
            .where(INVITES.c.id == expired.split(":")[1])
            .values(expires=dt.datetime(2020, 1, 1, tzinfo=dt.UTC))
        )
    good = code(storage)
    wrong = good[:-1] + ("0" if good[-1] != "0" else "1")
    other_course = "default:" + good.split(":", 1)[1]
    before = [(i.id, i.used) for i in storage.invites(COURSE)]
    for refused_code in (used, revoked, expired, wrong, other_course, "nonsense", ""):
        status, details = refused(lambda c=refused_code: register(server, c, "second"))  # type: ignore[misc]
        assert (status, details) == (grpc.StatusCode.UNAUTHENTICATED, INVITE_REFUSED), refused_code
    assert [(i.id, i.used) for i in storage.invites(COURSE)] == before
    assert storage.bot("second") is None
    assert register(server, good, "second").bot.name == "second"


def test_a_bad_or_taken_name_does_not_use_the_code(
    server: AdminServer, storage: RatedStorage
) -> None:
    storage.create_bot("taken")
    invite = code(storage)
    status, details = refused(lambda: register(server, invite, "taken"))
    assert status is grpc.StatusCode.ALREADY_EXISTS
    assert details.startswith("name: a bot named 'taken' exists already")
    assert "your invite code was not used" in details
    status, details = refused(lambda: register(server, invite, "no spaces"))
    assert status is grpc.StatusCode.INVALID_ARGUMENT and details.startswith("name: ")
    status, details = refused(lambda: register(server, invite, "fine", owner="bad owner!"))
    assert status is grpc.StatusCode.INVALID_ARGUMENT and details.startswith("owner: bad owner")
    assert storage.invites(COURSE)[0].used == 0
    assert register(server, invite, "fine").bot.name == "fine"


def test_refused_codes_are_limited_per_peer(storage: RatedStorage, clock: Clock) -> None:
    server = AdminServer(FakeArena(storage), AttemptLimiter(burst=2, per_minute=6, clock=clock))
    try:
        for name in ("a", "b", "c"):  # good codes spend nothing: a class behind one address
            assert register(server, code(storage), name).bot.name == name
        for _ in range(2):
            assert refused(lambda: register(server, "nonsense", "x"))[0] is (
                grpc.StatusCode.UNAUTHENTICATED
            )
        status, details = refused(lambda: register(server, code(storage), "x"))
        assert status is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert details.startswith("too many refused invite codes or owner tokens from this")
        clock.now += 10  # 6 a minute: one more attempt after 10 seconds
        assert register(server, code(storage), "x").bot.name == "x"
        assert refused(lambda: register(server, "nonsense", "y"))[0] is (
            grpc.StatusCode.UNAUTHENTICATED
        )
        assert refused(lambda: register(server, code(storage), "y"))[0] is (
            grpc.StatusCode.RESOURCE_EXHAUSTED
        )
    finally:
        server.close()


def test_the_limiter_remembers_a_bounded_number_of_peers() -> None:
    clock = Clock()
    limiter = AttemptLimiter(burst=1, per_minute=1, clock=clock, max_peers=3)
    limiter.refused("p1")
    assert not limiter.allows("p1")
    for peer in ("p2", "p3", "p4"):
        assert limiter.allows(peer)
    assert len(limiter) == 3
    assert limiter.allows("p1")  # forgotten as the least recently seen: a fresh bucket


@pytest.mark.parametrize(
    ("peer", "host"),
    [
        ("ipv4:127.0.0.1:50123", "ipv4:127.0.0.1"),
        ("ipv6:[::1]:50123", "ipv6:[::1]"),
        ("unix:/tmp/socket", "unix:/tmp/socket"),
        ("", ""),
    ],
)
def test_a_peer_is_its_host_whatever_its_port(peer: str, host: str) -> None:
    assert peer_host(peer) == host


# -- rotating one's own token ---------------------------------------------------------------------


def test_rotating_ones_own_token_closes_the_old_stream(
    server: AdminServer, storage: RatedStorage
) -> None:
    old = register(server, code(storage), "annbot").token
    connection = Connection("annbot", ["passing"])
    server.call(lambda: server.arena.lobby.connect(connection))
    rotated = server.registration.RotateOwnToken(
        admin_pb.RotateOwnTokenRequest(name="annbot"),
        metadata=(("authorization", f"Bearer {old}"),),
        timeout=WAIT,
    )
    assert rotated.token and rotated.token != old and not rotated.bot.connected
    assert storage.check_bot("annbot", old) is BotCheck.WRONG_TOKEN
    assert storage.check_bot("annbot", rotated.token) is BotCheck.OK

    def drain() -> list[Any]:
        items = []
        while not connection.outbox.empty():
            items.append(connection.outbox.get_nowait())
        return items

    error, end = server.call(drain)
    assert isinstance(error, pb.RefereeMessage) and isinstance(end, Close)
    assert error.error.message.startswith("token rotated: the owner of bot 'annbot'")
    assert end.status is grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.parametrize(
    "metadata",
    [(), (("authorization", "Bearer wrong"),), (("authorization", "Bearer OLD"),)],
    ids=["none", "wrong", "rotated"],
)
def test_rotating_needs_the_bots_current_token(
    server: AdminServer, storage: RatedStorage, metadata: tuple[tuple[str, str], ...]
) -> None:
    old = register(server, code(storage), "annbot").token
    current = storage.rotate_token("annbot").token
    sent = tuple((key, value.replace("OLD", old)) for key, value in metadata)
    status, details = refused(
        lambda: server.registration.RotateOwnToken(
            admin_pb.RotateOwnTokenRequest(name="annbot"), metadata=sent, timeout=WAIT
        )
    )
    assert status is grpc.StatusCode.UNAUTHENTICATED
    assert details == TOKEN_REFUSED or details.startswith("admin token missing")
    assert storage.check_bot("annbot", current) is BotCheck.OK
