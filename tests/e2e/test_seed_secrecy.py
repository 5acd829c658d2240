"""No seed reaches a bot or a spectator (provable deals, issue 11): checked on what a running
referee actually sends.

A real referee (the whole App over gRPC on port 0, tests/fakes/referee_server.py) plays a
tournament created with no seed (so the referee draws one) between raw bots that keep every
message they receive. The first request of each game is held until a spectator is watching it
and the lobby has been listed, so every game is also seen from the spectator stream, from its
start. Once the tournament is over the referee reveals the master seed and salt, and each
game's seed is in its stored row; then every message kept (bots', spectators', the live list,
and the tournament as the admin API showed it while running) is printed in protobuf text
format, where every integer field is in decimal, and searched for each seed in decimal and hex
and for the salt. A self-test plants a seed in a message to show the search finds it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from google.protobuf import text_format
from google.protobuf.message import Message

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.referee_server import WAIT, RawBot, Referee

BOTS: Final = ("ann", "ben", "cat")
POLL: Final = 0.05
"""Seconds between two questions while waiting for the tournament's end (bounded by WAIT)."""


def secrets_of(values: list[int], salt: str) -> list[str]:
    """The texts any of ``values`` or ``salt`` would show up as in a message."""
    texts = [salt] if salt else []
    for value in values:
        texts += [str(value), f"{value:x}", f"{value:X}"]
    return texts


def found_in(message: Message, texts: list[str]) -> list[str]:
    """The ``texts`` that ``message`` holds: in a string, or as an integer field (decimal)."""
    shown = text_format.MessageToString(message)
    return [text for text in texts if text in shown]


class Watched:
    """Every message the tests' observers saw: spectator streams, live lists, tournaments."""

    def __init__(self, referee: Referee) -> None:
        self.spectators = admin_pb_grpc.SpectatorServiceStub(referee.channel)
        self.admin = referee.admin
        self.messages: list[Message] = []
        self._lock = threading.Lock()
        self._watched: set[str] = set()
        self._threads: list[threading.Thread] = []

    def hold_until_watched(self, bot: RawBot, request: pb.ActionRequest) -> None:
        """A bot's policy: the first request of a game waits until a spectator watches it."""
        with self._lock:
            first = request.match_id not in self._watched
            self._watched.add(request.match_id)
        if first:
            started = threading.Event()
            thread = threading.Thread(target=self._watch, args=(request.match_id, started))
            thread.start()
            self._threads.append(thread)
            assert started.wait(WAIT), f"no watch start for {request.match_id}"
            self._keep(self.spectators.ListLive(admin_pb.ListLiveRequest(), timeout=WAIT))
        bot.reply(request, request.observation.legal_actions[0])

    def _watch(self, match_id: str, started: threading.Event) -> None:
        stream: Any = self.spectators.Watch(admin_pb.WatchRequest(match_id=match_id), timeout=WAIT)
        for message in stream:
            self._keep(message)
            started.set()

    def _keep(self, message: Message) -> None:
        with self._lock:
            self.messages.append(message)

    def join(self) -> None:
        for thread in self._threads:
            thread.join(WAIT)
            assert not thread.is_alive(), "a spectator stream did not end"


@pytest.fixture(scope="module")
def played(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[admin_pb.Tournament, list[admin_pb.MatchSummary], list[Message]]]:
    """A finished tournament, its stored games and every message anyone but the admin saw."""
    path: Path = tmp_path_factory.mktemp("secrecy") / "referee.db"
    storage = RatedStorage(f"sqlite:///{path}")
    storage.open()
    tokens = {name: storage.add_bot(name) for name in BOTS}
    referee = Referee(storage)
    try:
        watched = Watched(referee)
        bots = [referee.connect(n, tokens[n], policy=watched.hold_until_watched) for n in BOTS]
        t = referee.admin.CreateTournament(
            admin_pb.CreateTournamentRequest(
                name="secret cup",
                game=game_to_proto(make_game("passing")),
                entrants=BOTS,
                time_control=pb.TimeControl(move_ms=20_000, bank_ms=60_000, grace_ms=1000),
                concurrency=2,
                start=True,
            ),
            timeout=WAIT,
        )
        shown = [t]
        deadline = time.monotonic() + WAIT
        pause = threading.Event()  # never set: its timed wait is the pause between questions
        while t.state == admin_pb.TOURNAMENT_STATE_RUNNING:
            assert time.monotonic() < deadline, f"the tournament did not end within {WAIT} s"
            pause.wait(POLL)
            t = referee.admin.GetTournament(
                admin_pb.GetTournamentRequest(tournament_id=t.id), timeout=WAIT
            )
            shown.append(t)
        assert t.state == admin_pb.TOURNAMENT_STATE_FINISHED, t
        watched.join()
        listed = referee.admin.ListMatches(
            admin_pb.ListMatchesRequest(tournament_id=t.id), timeout=WAIT
        )
        messages: list[Message] = [*watched.messages, *shown[:-1]]
        for bot in bots:
            messages += [m for m in bot.received if isinstance(m, Message)]
        yield t, list(listed.matches), messages
    finally:
        referee.close()
        storage.close()


def test_every_game_was_played_and_watched(
    played: tuple[admin_pb.Tournament, list[admin_pb.MatchSummary], list[Message]],
) -> None:
    t, matches, messages = played
    assert len(matches) == t.progress.total == 6
    starts = {
        m.start.match_id
        for m in messages
        if isinstance(m, admin_pb.SpectatorMessage) and m.WhichOneof("message") == "start"
    }
    assert starts == {m.match_id for m in matches}
    requests = [m for m in messages if isinstance(m, pb.RefereeMessage)]
    assert len(requests) > 6 * 3 and all(m.seed for m in matches)


def test_no_seed_or_salt_reaches_a_bot_or_a_spectator(
    played: tuple[admin_pb.Tournament, list[admin_pb.MatchSummary], list[Message]],
) -> None:
    t, matches, messages = played
    assert t.HasField("seed") and t.seed_salt  # revealed now that it is over
    texts = secrets_of([t.seed, *(m.seed for m in matches)], t.seed_salt)
    leaked = [(found, message) for message in messages if (found := found_in(message, texts))]
    assert not leaked, leaked[:3]


def test_the_search_finds_a_planted_seed(
    played: tuple[admin_pb.Tournament, list[admin_pb.MatchSummary], list[Message]],
) -> None:
    _, matches, _ = played
    seed = matches[0].seed
    as_int = admin_pb.MatchSummary(seed=seed)
    as_hex = pb.RefereeMessage(match_start=pb.MatchStart(match_id=f"m-{seed:x}"))
    assert found_in(as_int, secrets_of([seed], "")) == [str(seed)]
    assert found_in(as_hex, secrets_of([seed], "")) == [f"{seed:x}"]
