"""Hostile Hellos (issue 9, finding 3): a name is checked before it is echoed or logged, so a
3 MB name or one with a newline is refused UNAUTHENTICATED, bounded, and forges no log line."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from domino_arena.server import logs
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.referee_server import Referee


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[Referee]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'hello.db'}")
    storage.open()
    referee = Referee(storage)
    yield referee
    referee.close()
    storage.close()


@pytest.fixture(params=["text", "json"])
def log(request: pytest.FixtureRequest) -> Iterator[io.StringIO]:
    """The referee's log as ``serve --log-format`` writes it."""
    stream = io.StringIO()
    handler = logs.configure("debug", request.param, stream)
    yield stream
    logs.unconfigure(handler)
    logging.getLogger(logs.LOGGER).setLevel(logging.NOTSET)


@pytest.mark.parametrize(
    "name",
    [
        "x" * 3_000_000,
        "evil\n2026-01-01T00:00:00.000Z INFO domino_arena.server: bot connected: name=admin",
        "tab\there",
        "-starts-with-a-dash",
        "y" * 65,
    ],
    ids=["3MB", "newline", "tab", "dash", "65 chars"],
)
def test_a_bad_name_is_refused_bounded_before_it_is_logged(
    referee: Referee, log: io.StringIO, name: str
) -> None:
    bot = referee.bot()
    bot.hello(name, "token")
    error = bot.wait_kind("error").error
    end = bot.wait_end()
    assert end.code == grpc.StatusCode.UNAUTHENTICATED
    assert error.code == pb.ERROR_CODE_UNAUTHENTICATED
    assert error.field == "hello.name"
    assert error.message.startswith("bad bot name '")
    assert f"({len(name)} characters): a bot name is 1-64 letters" in error.message
    assert "\n" not in error.message and "\t" not in error.message
    assert len(error.message) < 400 and len(end.details) < 400
    assert referee.connected() == {}
    text = log.getvalue()
    assert len(text) < 2000
    lines = text.splitlines()
    assert len(lines) == 1, text  # one record: the refusal; no forged "bot connected" line
    assert "hello refused" in lines[0]


@pytest.mark.parametrize("log", ["text"], indirect=True)
def test_refused_hellos_from_one_address_fill_no_log(referee: Referee, log: io.StringIO) -> None:
    """Issue 29, failure 6: one client made 492 lines a second. Now an address logs five
    refusals, then one a minute that says how many it held back."""
    for _ in range(60):
        bot = referee.bot()
        bot.hello("bad name", "token")
        assert bot.wait_end().code == grpc.StatusCode.UNAUTHENTICATED
    lines = [line for line in log.getvalue().splitlines() if "hello refused" in line]
    assert len(lines) == 5, lines


def test_the_log_budget_refills_and_says_what_it_held_back() -> None:
    now = [0.0]
    budget = logs.LogBudget(burst=2, seconds=60.0, clock=lambda: now[0])
    assert [budget.allow("a") for _ in range(4)] == [(True, 0), (True, 0), (False, 0), (False, 0)]
    assert budget.allow("b") == (True, 0), "another address has its own budget"
    now[0] = 60.0
    assert budget.allow("a") == (True, 2), "a line a minute, saying the two held back"
    assert budget.allow("a") == (False, 0)
