"""A person at the table, for tests: a real referee that seats people and hosts the house bots
(``HOSTED_BOTS``, as ``serve`` provides them),
a course with a student and an organizer, and the web face following the referee with its relay
token, served by uvicorn; and the leak walk of what the person's page and stream carried.

The person's matches are not paced (``PersonMatches(pace=0)``): the bots' steps show at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from domino_arena.bots import HOSTED_BOTS
from domino_arena.sdk.match.records import MatchRecord, parse_record
from domino_arena.sdk.rules import GameState, Tile
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play import house
from domino_arena.server.web.app import create_app
from domino_arena.server.web.live import LiveSource
from domino_arena.server.web.people.registry import PersonMatches
from domino_arena.server.web.sessions import RateLimit
from domino_arena.server.web.table import replay_states
from tests.browser.harness import serve
from tests.fakes.hosted import polled
from tests.fakes.leaks import leaks
from tests.fakes.referee_server import Referee

RELAY: Final = "test-relay-token-for-people"
COURSE: Final = "play101"
STUDENT_BOT: Final = "ada-bot"
STUDENT: Final = "ada"
OTHER_BOT: Final = "bea-bot"
OTHER: Final = "bea"
TILE: Final = re.compile(r"\b([0-6])-([0-6])\b")


@dataclass(frozen=True)
class PlaySite:
    """The referee, the web face at ``url`` and who may sign in to it."""

    storage: RatedStorage
    referee: Referee
    url: str
    matches: PersonMatches
    organizer_token: str
    tokens: dict[str, str]
    """Each student bot's token."""

    def record(self, match_id: str) -> MatchRecord:
        """The stored record of a match. The referee stores it through its writer's group
        commit just after the seats are told the match is over, so it is looked for until it
        is there (docs/referee.md: storing results)."""
        stored = polled(
            lambda: self.storage.match(match_id),
            lambda found: found is not None and found.record is not None,
            lambda _: f"{match_id} is not stored",
        )
        assert stored is not None and stored.record is not None
        return parse_record(stored.record)


@contextmanager
def play_site(folder: Path, *, per_person: int = 2) -> Iterator[PlaySite]:
    """A referee with the course :data:`COURSE` (its organizer, and :data:`STUDENT` owning
    :data:`STUDENT_BOT`, :data:`OTHER` owning :data:`OTHER_BOT`), and the web face over it."""
    url = f"sqlite:///{folder / 'arena.db'}"
    storage = RatedStorage(url)
    storage.open()
    organizer = storage.create_course(COURSE, title="Play with us").token
    code = storage.create_invites(COURSE, 1, uses=2)[0].code
    tokens = {
        bot: storage.register_bot(code, bot, owner).token
        for bot, owner in ((STUDENT_BOT, STUDENT), (OTHER_BOT, OTHER))
    }
    provided = house.provided()
    house.provide(HOSTED_BOTS)  # as serve does: the house bots are the opponents
    try:
        referee = Referee(storage, relay_token=RELAY)
    finally:
        house.provide(provided)
    web_storage = RatedStorage(url)
    web_storage.open()
    live = LiveSource(referee.address, relay_token=RELAY, lobby_seconds=0.0)
    matches = PersonMatches(pace=0.0, per_person=per_person)
    app = create_app(web_storage, live=live, people=matches, rate_limit=RateLimit(failures=1000))
    try:
        with serve(app) as base:
            yield PlaySite(storage, referee, base, matches, organizer, tokens)
    finally:
        referee.close()
        web_storage.close()
        storage.close()


def tiles_in(text: str) -> list[Tile]:
    return [Tile(int(a), int(b)) for a, b in TILE.findall(text)]


def seat_leaks(text: str, record: MatchRecord, steps: int, seat: int, match_id: str) -> list[str]:
    """Every tile in ``text`` (what the person's page or stream carried after ``steps`` steps
    of the match) that ``seat`` may not see then: another seat's hand, the boneyard, the widow
    (tests/fakes/leaks.py); the match's id is left out (it is no tile)."""
    state: GameState = replay_states(record, steps)
    return leaks(tiles_in(text.replace(match_id, "")), state, seat)
