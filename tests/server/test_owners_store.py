"""Owners as accounts of a course, in the storage, on SQLite and on PostgreSQL
(docs/courses.md: owners): an invite makes the owner and its token, later bots are registered
with the token, an invite naming an existing owner is refused without using the code, and a
disabled owner's bots are refused and entered nowhere."""

from __future__ import annotations

import dataclasses

import pytest

from domino_arena.server.store.bots import BotCheck
from domino_arena.server.store.courses import InviteError
from domino_arena.server.store.owners import (
    OwnerDisabledError,
    OwnerTakenError,
    OwnerTokenError,
    UnknownOwnerError,
)
from domino_arena.server.store.storage import Storage
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.server.tournaments.lifecycle.start import chosen_entrants
from tests.fakes.store import running_tournament


def _course(storage: Storage, codes: int = 3) -> list[str]:
    storage.create_course("cs101")
    return [i.code for i in storage.create_invites("cs101", codes)]


def test_an_invite_makes_the_owner_and_its_token_registers_later_versions(
    storage: Storage,
) -> None:
    first, *_ = _course(storage)
    issued = storage.register_bot(first, "ann-v1", "ann")
    assert issued.owner_token.startswith("cs101:ann:")
    later = storage.register_with_owner_token(issued.owner_token, "ann-v2")
    assert (later.bot.course, later.bot.owner, later.owner_token) == ("cs101", "ann", "")
    assert storage.check_bot("ann-v2", later.token) is BotCheck.OK
    (ann,) = storage.owners("cs101")
    assert (ann.name, ann.bots, ann.enabled) == ("ann", ("ann-v1", "ann-v2"), True)
    assert ann.invite_id == first.split(":")[1]
    made = {i.id: i.owners for i in storage.invites("cs101")}
    assert made[first.split(":")[1]] == ("ann",)
    assert sorted(made.values()) == [(), (), ("ann",)]
    course = storage.course("cs101")
    assert course is not None
    assert (course.bots, course.owners) == (2, 1)


def test_an_invite_naming_an_existing_owner_is_refused_and_not_used(storage: Storage) -> None:
    first, second, _ = _course(storage)
    storage.register_bot(first, "b-v1", "student-b")
    with pytest.raises(OwnerTakenError, match="'student-b' is already an owner of course"):
        storage.register_bot(second, "b-v2", "student-b")
    assert [b.name for b in storage.bots(course="cs101")] == ["b-v1"]
    assert {i.id: i.used for i in storage.invites("cs101")}[second.split(":")[1]] == 0
    with pytest.raises(InviteError):  # a used-up code: one line for every refusal
        storage.register_bot(first, "again", "someone")


def test_a_wrong_or_replaced_owner_token_registers_nothing(storage: Storage) -> None:
    first, *_ = _course(storage)
    old = storage.register_bot(first, "ann-v1", "ann").owner_token
    with pytest.raises(OwnerTokenError):
        storage.register_with_owner_token(old[:-1] + ("0" if old[-1] != "0" else "1"), "x")
    with pytest.raises(OwnerTokenError):
        storage.register_with_owner_token("cs101:nobody:" + "0" * 64, "x")
    with pytest.raises(OwnerTokenError):
        storage.register_with_owner_token("not a token", "x")
    new = storage.rotate_owner_token(old)
    with pytest.raises(OwnerTokenError):
        storage.register_with_owner_token(old, "x")
    assert storage.register_with_owner_token(new.token, "ann-v2").bot.owner == "ann"
    assert storage.owner_of_token(new.token) is not None
    assert storage.owner_of_token(old) is None


def test_a_disabled_owner_s_bots_are_refused_and_not_entered(storage: Storage) -> None:
    first, second, _ = _course(storage)
    ann = storage.register_bot(first, "ann-v1", "ann")
    storage.register_bot(second, "bob-v1", "bob")
    storage.set_owner_enabled("cs101", "ann", False)
    assert storage.check_bot("ann-v1", ann.token) is BotCheck.OWNER_DISABLED
    assert storage.check_bot("ann-v1", "wrong") is BotCheck.WRONG_TOKEN
    with pytest.raises(OwnerDisabledError, match="disabled by the organizer"):
        storage.register_with_owner_token(ann.owner_token, "ann-v2")
    latest = dataclasses.replace(
        running_tournament("cup", ()),
        state=TournamentState.CREATED,
        course="cs101",
        entrant_policy="latest",
    )
    entrants, _ = chosen_entrants(latest, storage.bots(course="cs101"), {"ann-v1", "bob-v1"})
    assert entrants == ("bob-v1",)
    assert storage.set_owner_enabled("cs101", "ann", True).enabled
    assert storage.check_bot("ann-v1", ann.token) is BotCheck.OK
    with pytest.raises(UnknownOwnerError):
        storage.set_owner_enabled("cs101", "nobody", False)


def test_the_organizer_issues_a_token_to_an_owner_made_without_one(storage: Storage) -> None:
    _course(storage)
    storage.create_bot("carol-v1", course="cs101", owner="carol")
    (carol,) = storage.owners("cs101")
    assert (carol.token_issued, carol.invite_id, carol.bots) == (None, None, ("carol-v1",))
    issued = storage.issue_owner_token("cs101", "carol")
    assert issued.owner.token_issued is not None
    assert storage.register_with_owner_token(issued.token, "carol-v2").bot.owner == "carol"
    with pytest.raises(UnknownOwnerError):
        storage.issue_owner_token("cs101", "nobody")
