"""Owners over real gRPC (tests/fakes/admin_server.py on SQLite and a real lobby): an invite
makes the owner and answers its token once; later bots are registered with the token; naming
an existing owner with another invite is refused in one line; the organizer lists code ->
owner -> bots, disables an owner (its bots' streams close at once) and issues a token."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.lobby import Close, Connection
from domino_arena.server.store.bots import BotCheck
from domino_arena.server.store.owners import OWNER_TOKEN_REFUSED
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.admin_server import AdminServer, FakeArena, refused
from tests.fakes.referee_server import WAIT

COURSE: Final = "cs101"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[AdminServer]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'owners.db'}")
    storage.open()
    server = AdminServer(FakeArena(storage))
    yield server
    server.close()
    storage.close()


@pytest.fixture
def organizer(server: AdminServer) -> str:
    return server.arena.storage.create_course(COURSE).token


def admin(server: AdminServer, method: str, request: Any, token: str) -> Any:
    metadata = (("authorization", f"Bearer {token}"),)
    return getattr(server.admin, method)(request, metadata=metadata, timeout=WAIT)


def register(server: AdminServer, name: str, **fields: str) -> Any:
    request = admin_pb.RegisterBotRequest(name=name, **fields)
    return server.registration.RegisterBot(request, timeout=WAIT)


def codes(server: AdminServer, count: int = 2) -> list[str]:
    return [i.code for i in server.arena.storage.create_invites(COURSE, count)]


def test_an_invite_makes_the_owner_and_the_owner_token_registers_its_versions(
    server: AdminServer, organizer: str
) -> None:
    first, second = codes(server)
    made = register(server, "b-v1", invite_code=first, owner="student-b")
    assert made.owner_token.startswith(f"{COURSE}:student-b:") and made.token
    later = register(server, "b-v2", owner_token=made.owner_token)
    assert (later.bot.owner, later.bot.course, later.owner_token) == ("student-b", COURSE, "")
    status, details = refused(
        lambda: register(server, "b-v3", invite_code=second, owner="student-b")
    )
    assert status is grpc.StatusCode.ALREADY_EXISTS
    assert details.startswith("owner: 'student-b' is already an owner of course 'cs101'")
    assert "\n" not in details
    status, details = refused(lambda: register(server, "b-v3", invite_code=first, owner="x"))
    assert status is grpc.StatusCode.UNAUTHENTICATED  # used up: the one refusal of a code
    status, details = refused(lambda: register(server, "x", owner_token=made.owner_token + "0"))
    assert (status, details) == (grpc.StatusCode.UNAUTHENTICATED, OWNER_TOKEN_REFUSED)
    status, details = refused(
        lambda: register(server, "x", owner_token=made.owner_token, owner="student-b")
    )
    assert status is grpc.StatusCode.INVALID_ARGUMENT and details.startswith("owner_token:")
    listed = admin(server, "ListOwners", admin_pb.ListOwnersRequest(), organizer)
    ((owner_name, bots, invite_id),) = [(o.name, list(o.bots), o.invite_id) for o in listed.owners]
    assert (owner_name, bots, invite_id) == ("student-b", ["b-v1", "b-v2"], first.split(":")[1])
    invites = admin(server, "ListInvites", admin_pb.ListInvitesRequest(), organizer)
    assert {i.id: list(i.owners) for i in invites.invites}[invite_id] == ["student-b"]


def test_the_owner_rotates_its_token(server: AdminServer, organizer: str) -> None:
    (invite, _) = codes(server)
    old = register(server, "a-v1", invite_code=invite, owner="ann").owner_token
    rotated = server.registration.RotateOwnerToken(
        admin_pb.RotateOwnerTokenRequest(),
        metadata=(("authorization", f"Bearer {old}"),),
        timeout=WAIT,
    )
    assert rotated.owner_token != old and rotated.owner.name == "ann"
    status, _ = refused(lambda: register(server, "a-v2", owner_token=old))
    assert status is grpc.StatusCode.UNAUTHENTICATED
    assert register(server, "a-v2", owner_token=rotated.owner_token).bot.owner == "ann"


def test_disabling_an_owner_closes_its_bots_streams_and_refuses_them(
    server: AdminServer, organizer: str
) -> None:
    (invite, _) = codes(server)
    made = register(server, "a-v1", invite_code=invite, owner="ann")
    connection = Connection("a-v1", ["passing"])
    server.call(lambda: server.arena.lobby.connect(connection))
    request = admin_pb.OwnerRequest(name="ann")
    disabled = admin(server, "DisableOwner", request, organizer)
    assert not disabled.enabled and list(disabled.bots) == ["a-v1"]
    error, end = server.call(
        lambda: [connection.outbox.get_nowait() for _ in range(connection.outbox.qsize())]
    )
    assert isinstance(error, pb.RefereeMessage) and isinstance(end, Close)
    assert error.error.message.startswith("owner disabled: the organizer disabled owner 'ann'")
    storage = server.arena.storage
    assert storage.check_bot("a-v1", made.token) is BotCheck.OWNER_DISABLED
    status, details = refused(lambda: register(server, "a-v2", owner_token=made.owner_token))
    assert status is grpc.StatusCode.PERMISSION_DENIED and "disabled by the organizer" in details
    assert admin(server, "EnableOwner", request, organizer).enabled
    assert storage.check_bot("a-v1", made.token) is BotCheck.OK
    status, details = refused(
        lambda: admin(server, "DisableOwner", admin_pb.OwnerRequest(name="nobody"), organizer)
    )
    assert status is grpc.StatusCode.NOT_FOUND and details.startswith("owner: course 'cs101'")
    status, _ = refused(
        lambda: admin(server, "ListOwners", admin_pb.ListOwnersRequest(course="other"), organizer)
    )
    assert status is grpc.StatusCode.PERMISSION_DENIED


def test_the_organizer_issues_a_token_to_an_owner_made_without_one(
    server: AdminServer, organizer: str
) -> None:
    storage = server.arena.storage
    storage.create_bot("c-v1", course=COURSE, owner="carol")
    (carol,) = admin(server, "ListOwners", admin_pb.ListOwnersRequest(), organizer).owners
    assert not carol.HasField("token_issued") and carol.invite_id == ""
    issued = admin(server, "IssueOwnerToken", admin_pb.OwnerRequest(name="carol"), organizer)
    assert issued.owner.HasField("token_issued") and issued.owner_token
    assert register(server, "c-v2", owner_token=issued.owner_token).bot.owner == "carol"


def test_a_tournament_listing_a_disabled_owners_bot_is_refused_naming_it(
    server: AdminServer, organizer: str
) -> None:
    first, second = codes(server)
    register(server, "a-v1", invite_code=first, owner="ann")
    register(server, "b-v1", invite_code=second, owner="bob")
    admin(server, "DisableOwner", admin_pb.OwnerRequest(name="ann"), organizer)
    request = admin_pb.CreateTournamentRequest(
        game=game_to_proto(make_game("passing")), entrants=["b-v1", "a-v1"]
    )
    status, details = refused(lambda: admin(server, "CreateTournament", request, organizer))
    assert status is grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith("entrants[1]: bot 'a-v1' belongs to owner 'ann', whom the organizer")
    assert "owner enable ann" in details and "\n" not in details
    admin(server, "EnableOwner", admin_pb.OwnerRequest(name="ann"), organizer)
    created = admin(server, "CreateTournament", request, organizer)
    assert list(created.entrants) == ["b-v1", "a-v1"]
