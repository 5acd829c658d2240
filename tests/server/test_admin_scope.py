"""Who is calling the admin API (server/net/admin_scope.py): the admin or one course's
organizer, told apart by the token alone."""

from __future__ import annotations

import grpc
import pytest

from domino_arena.server.net.admin_requests import RequestError
from domino_arena.server.net.admin_scope import Caller, caller_of

ORGANIZERS = {"cs101:s3cret": "cs101"}


def bearer(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


def look_up(token: str) -> str | None:
    return ORGANIZERS.get(token)


@pytest.mark.parametrize("admin_token", ["plain-admin", "admin:with:colons"])
def test_the_admin_token_is_the_admin_whatever_its_characters(admin_token: str) -> None:
    assert caller_of(bearer(admin_token), admin_token, look_up) == Caller()


def test_an_organizer_token_is_its_course() -> None:
    assert caller_of(bearer("cs101:s3cret"), "admin:with:colons", look_up) == Caller("cs101")


@pytest.mark.parametrize(
    ("token", "words"),
    [("cs101:guess", "wrong organizer token"), ("guess", "wrong admin token")],
)
def test_any_other_token_is_refused_saying_which_kind_it_looked_like(
    token: str, words: str
) -> None:
    with pytest.raises(RequestError) as caught:
        caller_of(bearer(token), "admin:with:colons", look_up)
    assert caught.value.status is grpc.StatusCode.UNAUTHENTICATED
    assert str(caught.value).startswith(words)


def test_an_organizer_sees_its_course_alone_and_the_admin_every_course() -> None:
    organizer, admin = Caller("cs101"), Caller()
    assert organizer.sees("cs101") and not organizer.sees("cs102")
    assert admin.sees("cs102") and admin.listing("") is None
    assert organizer.listing("") == "cs101" and organizer.course_of("") == "cs101"
    with pytest.raises(RequestError) as caught:
        organizer.course_of("cs102")
    assert caught.value.status is grpc.StatusCode.PERMISSION_DENIED
