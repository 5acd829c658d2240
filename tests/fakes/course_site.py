"""A storage with courses for the web face's course tests (and the browser's).

On top of :func:`tests.fakes.web.fill` (the default course: alice, bob, carol, the cup, the
forfeit), two courses made through the real store API:

- :data:`PUBLIC` (``cs101``): two students' bots registered with invite codes, the frozen
  baseline ``random`` at :data:`BASELINE_RATING`, real passing games among them and
  ``house:random``, and a tournament;
- :data:`ANONYMOUS` (``secret``): two bots whose names and owners (:data:`HIDDEN`) are
  distinctive strings that appear nowhere else, real games between them, one forfeited with a
  detail and a fault reason that name the bot, and a tournament whose name names it too; so a
  page that leaked a name anywhere (a value, a key, a line of text) would show one of them.

:func:`course_site` is the fixture of the web app over it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest
from starlette.testclient import TestClient

from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournaments import StoredTournament

from .bots import Crashing, FirstLegal
from .games import play_random
from .web import START, a_tournament, fill, forfeited_match, stored_match_of, web_app

PUBLIC: Final = "cs101"
ANONYMOUS: Final = "secret"
BASELINE_RATING: Final = 1200.0
PUBLIC_BOTS: Final = (("ada-bot", "ada"), ("bea-bot", "bea"))
ANONYMOUS_BOTS: Final = (("zelda-xq7", "owner-quux1"), ("yorick-xq8", "owner-quux2"))
HIDDEN: Final = tuple(name for pair in ANONYMOUS_BOTS for name in pair)
"""Every real name of the anonymous course (bots and owners)."""
PUBLIC_CUP: Final = "cs101-cup"
SECRET_CUP: Final = "secret-cup"
SECRET_FORFEIT: Final = "secret-forfeit"
COURSE_START: Final = START + dt.timedelta(days=1)


@dataclass(frozen=True)
class Courses:
    """What :func:`fill_courses` made: the organizer tokens, the bots' tokens, a spare invite
    code of each course, and the stored match ids of each course."""

    organizer: dict[str, str]
    tokens: dict[str, str]
    codes: dict[str, str]
    matches: dict[str, list[str]]


def course_game(
    seats: tuple[str, str], match_id: str, created: dt.datetime, course: str, seed: int
) -> StoredMatch:
    """A real passing game of ``seats`` (random play from ``seed``), stored in ``course``."""
    played = play_random("passing", {}, seed=seed)
    played = dataclasses.replace(played, record=dataclasses.replace(played.record, seats=seats))
    return dataclasses.replace(stored_match_of(played, match_id, created), course=course)


def _game(
    seats: tuple[str, str], match_id: str, minute: int, course: str, seed: int
) -> StoredMatch:
    return course_game(seats, match_id, COURSE_START + dt.timedelta(minutes=minute), course, seed)


def _cup(tournament_id: str, name: str, course: str, entrants: tuple[str, str]) -> StoredTournament:
    return dataclasses.replace(
        a_tournament(name),
        id=tournament_id,
        course=course,
        entrants=entrants,
        created=COURSE_START,
        updated=COURSE_START,
    )


def fill_courses(storage: RatedStorage) -> Courses:
    """The default course's games (:func:`fill`), then :data:`PUBLIC` and :data:`ANONYMOUS`."""
    fill(storage)
    organizer = {
        PUBLIC: storage.create_course(
            PUBLIC, title="Intro to game bots", baselines=(("random", BASELINE_RATING),)
        ).token,
        ANONYMOUS: storage.create_course(ANONYMOUS, title="The blind league", anonymous=True).token,
    }
    tokens: dict[str, str] = {}
    codes: dict[str, str] = {}
    for course, bots in ((PUBLIC, PUBLIC_BOTS), (ANONYMOUS, ANONYMOUS_BOTS)):
        issued = storage.create_invites(course, 2, uses=len(bots))
        for bot, owner in bots:
            tokens[bot] = storage.register_bot(issued[0].code, bot, owner).token
        codes[course] = issued[1].code
    storage.add_tournament(_cup(PUBLIC_CUP, "Week 1", PUBLIC, ("ada-bot", "bea-bot")))
    secret_name = f"Cup of {ANONYMOUS_BOTS[0][0]}"
    storage.add_tournament(
        _cup(SECRET_CUP, secret_name, ANONYMOUS, (ANONYMOUS_BOTS[0][0], ANONYMOUS_BOTS[1][0]))
    )
    matches: dict[str, list[str]] = {PUBLIC: [], ANONYMOUS: []}
    pairs = [
        ("ada-bot", "house:random"),
        ("house:random", "bea-bot"),
        ("ada-bot", "bea-bot"),
        ("bea-bot", "ada-bot"),
        ("house:random", "ada-bot"),
        ("bea-bot", "house:random"),
    ]
    minute = 0
    for n, seats in enumerate(pairs):
        match_id = f"cs101-{n}"
        storage.save_match(_game(seats, match_id, minute, PUBLIC, 200 + n))
        matches[PUBLIC].append(match_id)
        minute += 1
    zelda, yorick = ANONYMOUS_BOTS[0][0], ANONYMOUS_BOTS[1][0]
    for n, seats in enumerate([(zelda, yorick), (yorick, zelda), (zelda, yorick)]):
        match_id = f"secret-{n}"
        stored = _game(seats, match_id, minute, ANONYMOUS, 300 + n)
        if n == 0:
            stored = dataclasses.replace(stored, tournament_id=SECRET_CUP, game_index=0)
        storage.save_match(stored)
        matches[ANONYMOUS].append(match_id)
        minute += 1
    storage.save_match(
        forfeited_match(
            COURSE_START + dt.timedelta(minutes=minute),
            seats=(zelda, yorick),
            steps=4,
            match_id=SECRET_FORFEIT,
            detail="{loser} sent no answer",
            reason="{loser} sent no answer",
            course=ANONYMOUS,
        )
    )
    matches[ANONYMOUS].append(SECRET_FORFEIT)
    return Courses(organizer, tokens, codes, matches)


@dataclass(frozen=True)
class CourseSite:
    """:func:`fill_courses`' storage, the web app over it and what was made."""

    storage: RatedStorage
    client: TestClient
    courses: Courses


@contextmanager
def filled_courses(folder: Path) -> Iterator[tuple[RatedStorage, Courses]]:
    """A SQLite storage in ``folder`` filled by :func:`fill_courses`, and what was made; closed
    when the block ends."""
    storage = RatedStorage(f"sqlite:///{folder / 'arena.db'}")
    storage.open()
    try:
        yield storage, fill_courses(storage)
    finally:
        storage.close()


@pytest.fixture(scope="module")
def course_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CourseSite]:
    """The web app over a storage filled by :func:`fill_courses` (once per test module)."""
    folder = tmp_path_factory.mktemp("courses")
    with filled_courses(folder) as (storage, made), TestClient(web_app(storage)) as client:
        yield CourseSite(storage, client, made)


def add_crashes(
    storage: RatedStorage, bot: str, opponent: str, count: int, course: str = PUBLIC
) -> list[str]:
    """Store ``count`` passing games of ``course`` in which ``bot`` crashes (a
    :class:`~tests.fakes.bots.Crashing` bot: every other ``choose`` raises) against
    ``opponent``, under ``substitute`` with 3 strikes, so each is forfeited at its third
    ``bot_error``; return their ids, oldest first."""
    ids = []
    for n in range(count):
        played = play_game(
            make_game("passing"),
            [Crashing(every=2), FirstLegal()],
            seed=400 + n,
            fault_policy=FaultPolicy.SUBSTITUTE,
            max_strikes=3,
        )
        record = dataclasses.replace(played.record, seats=(bot, opponent))
        detail = played.result.detail.replace(f"({Crashing.name})", f"({bot})")
        result = dataclasses.replace(played.result, detail=detail)
        played = dataclasses.replace(played, record=record, result=result)
        match_id = f"{course}-crash-{n}"
        stored = stored_match_of(played, match_id, COURSE_START + dt.timedelta(hours=1, minutes=n))
        storage.save_match(dataclasses.replace(stored, course=course))
        ids.append(match_id)
    return ids


def json_keys(value: object) -> set[str]:
    """Every key of a JSON answer, at any depth (not inside a game's ``options``, which are
    the game's: docs/rules.md), to check against docs/web.md."""
    if isinstance(value, dict):
        kept = {k: v for k, v in value.items() if k != "options"}
        return set(kept) | {key for inner in kept.values() for key in json_keys(inner)}
    if isinstance(value, list):
        return {key for inner in value for key in json_keys(inner)}
    return set()


CSRF_FIELD: Final = re.compile(r'name="csrf" value="([0-9a-f]{64})"')
"""A course form's hidden CSRF field."""


def csrf_of(client: TestClient, path: str) -> str:
    """The CSRF token of the form at ``path`` (the GET also sets the client's csrf cookie)."""
    page = client.get(path)
    assert page.status_code == 200, page.text
    found = CSRF_FIELD.search(page.text)
    assert found is not None, page.text[:400]
    return found.group(1)


def sign_in(client: TestClient, course: str, page: str, **fields: str) -> None:
    """Sign ``client`` in at ``/courses/{course}/{page}`` (``me``: fields ``bot`` and
    ``token``; ``organizer``: ``token``) through the real form."""
    path = f"/courses/{course}/{page}"
    answer = client.post(path, data={"csrf": csrf_of(client, path), **fields})
    assert answer.status_code == 303, answer.text[:400]
