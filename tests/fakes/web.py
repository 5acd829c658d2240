"""A storage filled for the web face's tests: real matches of every game, a tournament, faults.

The matches are whole games played in-process by modest random bots (``sdk/local.py``), so
their records are real and replay through the engine; they are stored through the real store
API (``RatedStorage.save_match``), which rates them. One tournament and one forfeited match
carry :data:`HOSTILE` text in every place stored text can come in (a tournament's name, a
match's detail, a fault's reason), for the escaping tests. :func:`site` is the fixture
(registered in ``tests/web/conftest.py``); :class:`PageTiles` reads the tiles a replay page
shows.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Final

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from domino_arena.sdk.local import LocalResult
from domino_arena.sdk.match.records import RecordFault, record_from_state, record_lines
from domino_arena.sdk.match.results import FaultKind, Termination
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tables import DEFAULT_COURSE
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle import games_of, schedule_of
from domino_arena.server.web.app import create_app

from .games import play_random

HOSTILE: Final = "<script>alert(1)</script>"
ESCAPED: Final = "&lt;script&gt;alert(1)&lt;/script&gt;"
BOTS: Final = ("alice", "bob", "carol")
GAMES_PLAYED: Final = ("passing", "straight", "doubles", "moon")
TOURNAMENT_ID: Final = "cup"
FORFEIT_ID: Final = "forfeit"
START: Final = dt.datetime(2026, 3, 4, 5, 0, tzinfo=dt.UTC)


def match_id_of(game: str, n: int) -> str:
    return f"{game}-{n}"


def stored_match_of(
    played: LocalResult,
    match_id: str,
    created: dt.datetime,
    *,
    tournament_id: str | None = None,
    game_index: int | None = None,
) -> StoredMatch:
    """The row a referee would store for a game played in-process (rated, with its record)."""
    result = played.result
    game = played.state.game
    return StoredMatch(
        id=match_id,
        game=game.name,
        options=game.options(),
        seats=played.record.seats,
        seed=played.record.seed,
        termination=result.termination.value,
        winner=result.winner,
        scores=result.scores,
        faulted_seat=result.faulted_seat,
        fault=None if result.fault is None else result.fault.value,
        detail=result.detail,
        record="".join(line + "\n" for line in record_lines(played.record)),
        created=created,
        tournament_id=tournament_id,
        game_index=game_index,
        side_of_seat=tuple(game.side_of(seat) for seat in range(game.num_players)),
        rated=True,
    )


def a_tournament(name: str = HOSTILE) -> StoredTournament:
    """A running passing round robin of alice and bob (4 games: 2 deals, each played under
    both rotations), named ``name``."""
    return StoredTournament(
        id=TOURNAMENT_ID,
        name=name,
        game="passing",
        options=make_game("passing").options(),
        entrants=("alice", "bob"),
        games_per_pairing=2,
        deals="duplicate",
        time_control_ms=(1000, 10000, 250),
        fault_policy="substitute",
        max_strikes=3,
        concurrency=1,
        wait_seconds=30.0,
        seed=11,
        rated=True,
        state=TournamentState.RUNNING,
        created=START,
        updated=START,
    )


def forfeited_match(
    created: dt.datetime,
    *,
    seats: tuple[str, str] = ("alice", "bob"),
    steps: int = 6,
    match_id: str = FORFEIT_ID,
    detail: str = HOSTILE,
    reason: str = f"no answer: {HOSTILE}",
    course: str = DEFAULT_COURSE,
) -> StoredMatch:
    """A passing match whose seat to move after ``steps`` first-legal steps forfeited it (by
    default bob, after 6: its detail and fault reason are hostile). ``{loser}`` in ``detail``
    and ``reason`` stands for the forfeiting bot's name."""
    game = make_game("passing")
    state = game.new_game(5, first_seat=0)
    for _ in range(steps):
        state = state.apply(state.legal_actions()[0])
    loser = state.current_seat
    detail, reason = (text.replace("{loser}", seats[loser]) for text in (detail, reason))
    fault = RecordFault(loser, steps + 1, steps, FaultKind.TIMEOUT, reason, 1, True)
    record = record_from_state(
        state,
        seats=seats,
        seed=5,
        first_seat=0,
        termination=Termination.FORFEIT,
        winner=1 - loser,
        detail=detail,
        faults=[fault],
    )
    return StoredMatch(
        id=match_id,
        game="passing",
        options=game.options(),
        seats=seats,
        seed=5,
        termination="forfeit",
        winner=1 - loser,
        scores=state.scores,
        faulted_seat=loser,
        fault="timeout",
        detail=detail,
        record="".join(line + "\n" for line in record_lines(record)),
        created=created,
        faults=tuple(1 if seat == loser else 0 for seat in range(2)),
        rated=True,
        course=course,
    )


def fill(storage: RatedStorage, per_game: int = 2) -> dict[str, LocalResult]:
    """Store ``per_game`` real matches of each game (the passing ones are the tournament's
    first games: one deal under both seat rotations), and the forfeit; return the played games
    by match id."""
    for bot in BOTS:
        storage.add_bot(bot)
    storage.add_tournament(a_tournament())
    played: dict[str, LocalResult] = {}
    cup = schedule_of(a_tournament())
    minute = 0
    for game in GAMES_PLAYED:
        for n in range(per_game):
            in_cup = game == "passing"
            # The cup's games are its schedule's first ones: one deal under each rotation
            # (the same seed, so the same deal and the same seat-seeded bot moves).
            seed = 100 + (cup[n].deal_id if in_cup else n)
            result = play_random(game, {}, seed=seed)
            names = cup[n].seats if in_cup else BOTS[: len(result.record.seats)]
            result = dataclasses.replace(
                result, record=dataclasses.replace(result.record, seats=names)
            )
            match_id = match_id_of(game, n)
            stored = stored_match_of(
                result,
                match_id,
                START + dt.timedelta(minutes=minute),
                tournament_id=TOURNAMENT_ID if in_cup else None,
                game_index=cup[n].index if in_cup else None,
            )
            if in_cup:
                stored = dataclasses.replace(
                    stored, deal_id=cup[n].deal_id, rotation=cup[n].rotation
                )
            storage.save_match(stored)
            played[match_id] = result
            minute += 1
    storage.save_match(forfeited_match(START + dt.timedelta(minutes=minute)))
    return played


class PageTiles(HTMLParser):
    """The tiles a replay page shows, by where they are: each seat's hand, the table, the
    boneyard (the ``data-tile`` of every drawn tile, ``<g class="tile">`` in the table's SVG;
    a face-down tile has none)."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.hands: dict[int, list[str]] = {}
        self.table: list[str] = []
        self.boneyard: list[str] = []
        self._open: list[tuple[str, dict[str, str | None]]] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if "tile" in classes and attributes.get("data-tile"):
            self._place(attributes["data-tile"] or "")
        if "hand" in classes:
            self.hands.setdefault(int(attributes["data-seat"] or -1), [])
        self._open.append((tag, attributes))

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            if self._open.pop()[0] == tag:
                break

    def _place(self, tile: str) -> None:
        for _, attributes in reversed(self._open):
            classes = (attributes.get("class") or "").split()
            if "hand" in classes:
                self.hands.setdefault(int(attributes["data-seat"] or -1), []).append(tile)
                return
            if "table" in classes:
                self.table.append(tile)
                return
            if "boneyard" in classes:
                self.boneyard.append(tile)
                return
        raise AssertionError(f"tile {tile} outside any hand, table or boneyard")


@dataclass(frozen=True)
class Site:
    """A filled storage, the web app's test client over it, and its games by match id."""

    storage: RatedStorage
    client: TestClient
    played: dict[str, LocalResult]


def schedule_length(t: StoredTournament) -> int:
    """A tournament's number of games (a fixed format's), as ``domino-arena web`` counts them."""
    return len(schedule_of(t))


def web_app(storage: RatedStorage) -> Starlette:
    """The web app over ``storage``, as ``domino-arena web`` builds it."""
    return create_app(storage, tournament_total=lambda t: len(games_of(t, storage)))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """One filled SQLite storage per test module (:func:`fill`) and the app over it."""
    path: Path = tmp_path_factory.mktemp("web") / "arena.db"
    storage = RatedStorage(f"sqlite:///{path}")
    storage.open()
    played = fill(storage)
    app = web_app(storage)
    with TestClient(app) as client:
        yield Site(storage, client, played)
    storage.close()
