"""CheckBot and PracticeMatch over real gRPC: the referee checks a connected bot and matches it
against house bots it hosts in-process.

The bots are raw gRPC clients (tests/fakes/referee_server.py), so what each answers is exactly
what the test says: a good one answers the first legal action; a broken one answers an illegal
action, then nothing, then a malformed one, and is right after that.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Final

import grpc
import pytest

from domino_arena.bots import HOUSE_BOTS
from domino_arena.sdk.match.records import parse_record, replay
from domino_arena.sdk.rules import make_game
from domino_arena.sdk.testing import check_bot
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.cli.check import report_of
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import games_pb2
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.bots import CRASH_MESSAGE, Crashing, FirstLegal
from tests.fakes.referee_server import WAIT, RawBot, Referee, first_legal

BOTS: Final = ("good", "broken", "crashing")
LONG: Final = 120.0
"""Seconds a whole check may take before the test fails."""


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('check') / 'check.db'}"
    storage = RatedStorage(url)
    storage.open()
    tokens = {name: storage.add_bot(name) for name in BOTS}
    storage.close()
    return url, tokens


@pytest.fixture
def tokens(database: tuple[str, dict[str, str]]) -> dict[str, str]:
    return database[1]


@pytest.fixture
def referee(database: tuple[str, dict[str, str]]) -> Iterator[Referee]:
    storage = RatedStorage(database[0])
    storage.open()
    referee = Referee(storage, reconnect_grace=0.5)
    referee.app.arena.house = dict(HOUSE_BOTS)
    yield referee
    referee.close()
    storage.close()


def code_of(call: object) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as caught:
        assert callable(call)
        call()
    error = caught.value
    return error.code(), error.details() or ""


class Broken:
    """Answers its first requests wrong, one way each, and the first legal action after."""

    def __init__(self) -> None:
        self.requests = 0
        self.lock = threading.Lock()

    def __call__(self, bot: RawBot, request: pb.ActionRequest) -> None:
        with self.lock:
            self.requests += 1
            n = self.requests
        if n == 1:  # a bid is no action of the Passing Game: illegal
            bot.reply(request, games_pb2.Action(bid=games_pb2.BidAction(value=4)))
        elif n == 2:  # silence: a timeout
            return
        elif n == 3:  # a play with no tile: not an action at all
            bot.reply(request, games_pb2.Action(play=games_pb2.PlayAction()))
        else:
            first_legal(bot, request)


def crashing(bot: RawBot, request: pb.ActionRequest) -> None:
    """Sends what the SDK sends for a ``choose`` that raised, every time."""
    reply = pb.ActionReply(match_id=request.match_id, turn=request.turn)
    reply.error.CopyFrom(pb.BotError(type="ValueError", message=CRASH_MESSAGE))
    bot.send(pb.BotMessage(reply=reply))


def check_request(bot: str, **fields: object) -> admin_pb.CheckBotRequest:
    base: dict[str, object] = {"games": ["passing"], "positions": 3, "time_limit_ms": 300}
    base.update(fields)
    return admin_pb.CheckBotRequest(bot=bot, **base)  # type: ignore[arg-type]


def test_check_passes_a_good_bot_with_the_local_check_s_positions(
    referee: Referee, tokens: dict[str, str]
) -> None:
    good = referee.connect("good", tokens["good"], policy=first_legal)
    response = referee.admin.CheckBot(
        check_request("good", games=["passing", "straight"]), timeout=LONG
    )
    report = report_of(response)
    assert report.passed, str(report)
    assert response.passed and response.report == str(report)
    local = check_bot(FirstLegal, games=["passing", "straight"], positions=3, full_games=False)
    assert report.configurations == local.configurations
    assert report.positions == local.positions
    assert report.games == len(report.configurations)  # one whole game per configuration
    starts = [m.match_start for m in good.messages("match_start")]
    resumed = [s for s in starts if s.resumed]
    assert len(resumed) == report.positions, "every position is presented as a resumed match"
    assert all(s.HasField("snapshot") for s in resumed)
    assert len(starts) - len(resumed) == report.games
    assert str(report).startswith("connected bot 'good': PASSED")


def test_check_names_each_fault_of_a_broken_bot(referee: Referee, tokens: dict[str, str]) -> None:
    referee.connect("broken", tokens["broken"], policy=Broken())
    response = referee.admin.CheckBot(check_request("broken"), timeout=LONG)
    report = report_of(response)
    assert not report.passed
    problems = [f.problem for f in report.failures]
    assert problems == ["illegal", "timeout", "malformed"], str(report)
    illegal, timeout, malformed = report.failures
    assert illegal.returned == "'bid 4'"
    assert illegal.legal and "Passing Game" in illegal.game
    assert "docs/rules.md" in illegal.message
    assert timeout.legal and timeout.seconds is not None and timeout.seconds >= 0.3
    assert "no answer within 0.35 s" in timeout.message
    assert "play" in malformed.message and malformed.legal
    text = str(report)
    assert "FAILED (3 failures)" in text
    assert "illegal: Passing Game" in text and "legal:" in text
    assert f"legal:    {', '.join(illegal.legal)}" in text
    assert response.report == text
    assert report.games == len(report.configurations)  # right after its faults: games finish


def test_check_refuses_bad_requests_naming_the_field(
    referee: Referee, tokens: dict[str, str]
) -> None:
    referee.connect("good", tokens["good"], policy=first_legal, games=("passing",))
    admin = referee.admin
    cases = [
        (check_request(""), grpc.StatusCode.INVALID_ARGUMENT, "bot: missing"),
        (check_request("no such!"), grpc.StatusCode.INVALID_ARGUMENT, "bot: bad bot name"),
        (check_request("broken"), grpc.StatusCode.FAILED_PRECONDITION, "not connected"),
        (check_request("good", positions=201), grpc.StatusCode.INVALID_ARGUMENT, "positions:"),
        (
            check_request("good", time_limit_ms=600_001),
            grpc.StatusCode.INVALID_ARGUMENT,
            "time_limit_ms: must be at most 600000",
        ),
        (check_request("good", games=["chess"]), grpc.StatusCode.INVALID_ARGUMENT, "games[0]"),
        (
            check_request("good", games=["passing", "passing"]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "games[1]: passing listed twice",
        ),
        (
            check_request("good", games=["moon"]),
            grpc.StatusCode.FAILED_PRECONDITION,
            "games[0]: bot 'good' does not play moon",
        ),
    ]
    for request, code, words in cases:
        got, details = code_of(lambda r=request: admin.CheckBot(r, timeout=WAIT))
        assert (got, words in details) == (code, True), (request, details)


def practice_request(**fields: object) -> admin_pb.PracticeMatchRequest:
    base: dict[str, object] = {
        "bot": "good",
        "game": game_to_proto(make_game("passing", players=3)),
        "opponents": ["random", "greedy"],
        "has_seed": True,
        "seed": 5,
        "seat": 1,
    }
    base.update(fields)
    return admin_pb.PracticeMatchRequest(**base)  # type: ignore[arg-type]


def test_practice_plays_house_bots_in_process_and_stores_the_match_unrated(
    referee: Referee, tokens: dict[str, str]
) -> None:
    referee.connect("good", tokens["good"], policy=first_legal)
    response = referee.admin.PracticeMatch(practice_request(), timeout=LONG)
    assert list(response.bots) == ["house:random", "good", "house:greedy"]
    assert response.result.termination == pb.TERMINATION_NORMAL
    record = parse_record(response.record)
    assert replay(record).ok
    stored = referee.admin.GetMatch(
        admin_pb.GetMatchRequest(match_id=response.match_id), timeout=WAIT
    )
    assert not stored.match.rated
    assert list(stored.match.bots) == list(response.bots)
    again = referee.admin.PracticeMatch(practice_request(), timeout=LONG)
    played = [(s.seat, s.action) for s in record.steps]
    assert [(s.seat, s.action) for s in parse_record(again.record).steps] == played
    assert again.result == response.result  # the same seed: the same house bots, alike
    assert referee.connected()["good"][1] == 0  # seated in nothing any more


def test_practice_refuses_bad_requests_naming_the_field(
    referee: Referee, tokens: dict[str, str]
) -> None:
    referee.connect("good", tokens["good"], policy=first_legal, games=("passing",))
    admin = referee.admin
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    cases = [
        (practice_request(bot=""), invalid, "bot: missing"),
        (practice_request(seat=3), invalid, "seat: Passing Game"),
        (practice_request(opponents=["greedy"]), invalid, "opponents: "),
        (practice_request(opponents=["greedy", "alphago"]), invalid, "opponents[1]: unknown"),
        (practice_request(max_deals=100_001), invalid, "max_deals: must be at most 100000"),
        (
            practice_request(time_control=pb.TimeControl(move_ms=600_001)),
            invalid,
            "time_control.move_ms",
        ),
        (practice_request(game=games_pb2.GameConfig()), invalid, "game"),
        (practice_request(bot="broken"), grpc.StatusCode.FAILED_PRECONDITION, "not connected"),
        (
            practice_request(game=game_to_proto(make_game("moon")), opponents=[]),
            grpc.StatusCode.FAILED_PRECONDITION,
            "does not play moon",
        ),
    ]
    for request, code, words in cases:
        got, details = code_of(lambda r=request: admin.PracticeMatch(r, timeout=WAIT))
        assert (got, words in details) == (code, True), (request, details)


def test_check_says_a_bot_raised_as_the_local_check_says_it(
    referee: Referee, tokens: dict[str, str]
) -> None:
    """A bot error through the referee is the local check's "raised", in the same words."""
    referee.connect("crashing", tokens["crashing"], policy=crashing)
    report = report_of(referee.admin.CheckBot(check_request("crashing"), timeout=LONG))
    local = check_bot(Crashing, games=["passing"], positions=3)
    words = f"choose raised ValueError: {CRASH_MESSAGE}"
    for checked in (report, local):
        assert checked.failures and all(f.problem == "raised" for f in checked.failures)
        assert {f.message for f in checked.failures} == {words}, str(checked)
    # the same problem three asks in a row: both checks stop there (sdk/compliance.py, Streak)
    assert len(report.failures) == len(local.failures) == 3
    assert report.stopped == local.stopped
    assert report.stopped.startswith("stopped early: 3 asks in a row failed the same way (raised)")
