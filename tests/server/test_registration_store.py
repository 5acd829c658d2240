"""Registering with an invite code in the storage, on SQLite and on PostgreSQL: of many
registrations racing for a code's last uses, exactly as many as it has left win, and a refused
one (a taken name) leaves its use."""

from __future__ import annotations

import threading

import pytest

from domino_arena.server.store.bots import DuplicateBotError
from domino_arena.server.store.courses import InviteError
from domino_arena.server.store.storage import Storage
from tests.fakes.referee_server import WAIT


def test_racing_registrations_use_a_code_exactly_as_often_as_it_allows(storage: Storage) -> None:
    storage.create_course("cs101")
    code = storage.create_invites("cs101", 1, uses=3)[0].code
    start = threading.Barrier(8)
    won: list[str] = []
    refused: list[str] = []

    def register(name: str) -> None:
        start.wait(WAIT)
        try:
            storage.register_bot(code, name, f"owner-{name}")
            won.append(name)
        except InviteError:
            refused.append(name)

    threads = [threading.Thread(target=register, args=(f"bot{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert (len(won), len(refused)) == (3, 5)
    assert sorted(b.name for b in storage.bots(course="cs101")) == sorted(won)
    assert storage.invites("cs101")[0].used == 3


def test_a_taken_name_leaves_the_use(storage: Storage) -> None:
    storage.create_course("cs101")
    storage.create_bot("taken")
    code = storage.create_invites("cs101", 1)[0].code
    with pytest.raises(DuplicateBotError):
        storage.register_bot(code, "taken", "ann")
    assert storage.invites("cs101")[0].used == 0
    assert storage.register_bot(code, "fresh", "ann").bot.course == "cs101"


def test_a_bot_registered_without_an_owner_is_its_own_owner(storage: Storage) -> None:
    storage.create_course("cs101")
    code = storage.create_invites("cs101", 1, uses=2)[0].code
    assert storage.register_bot(code, "lone", "").bot.owner == "lone"
    assert storage.register_bot(code, "ann-v1", " ann ").bot.owner == "ann"
    assert {b.name: b.owner for b in storage.bots(course="cs101")} == {
        "lone": "lone",
        "ann-v1": "ann",
    }
