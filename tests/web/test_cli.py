"""``domino-arena web``: serves the web face of a database on the address it prints."""

from __future__ import annotations

import json
import signal
import socket
import urllib.request
from pathlib import Path

import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.server.cli.main import main
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play.match_spec import MatchSpec
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.web.security import CONTENT_SECURITY_POLICY
from tests.fakes.admin_server import AdminServer, FakeArena
from tests.fakes.processes import Process, command
from tests.fakes.web import TOURNAMENT_ID, a_tournament, forfeited_match

START_LINE = "web face on http://127.0.0.1:"


def test_web_serves_the_database_on_the_address_it_prints(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    storage = RatedStorage(db)
    storage.open()
    storage.add_tournament(a_tournament("Spring cup"))
    storage.save_match(forfeited_match(a_tournament().created))
    storage.close()
    web = Process(command("web", "--db", db, "--port", "0"), tmp_path)
    try:
        line = web.wait_line(START_LINE)
        address = line.split("web face on ", 1)[1].split()[0]
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with direct.open(address + f"tournaments/{TOURNAMENT_ID}") as response:
            assert response.status == 200
            assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
            page = response.read().decode()
        assert "Spring cup" in page
        assert "0 of 4 games played" in page  # the schedule's length comes from play
        web.popen.send_signal(signal.SIGINT)
        code, output = web.finish()
    finally:
        web.stop()
    assert code == 0, output
    assert f"database {db}" in output


def test_a_port_out_of_range_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["web", "--port", "70000"]) == 2
    assert "--port: must be 0-65535, got 70000" in capsys.readouterr().err


def test_a_taken_port_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        db = f"sqlite:///{tmp_path / 'arena.db'}"
        assert main(["web", "--db", db, "--port", str(port)]) == 2
    assert f"--host/--port: cannot listen on 127.0.0.1:{port}: " in capsys.readouterr().err


def test_web_with_a_referee_serves_its_live_matches(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    storage = RatedStorage(db)
    storage.open()
    referee = AdminServer(FakeArena(storage))
    game = make_game("passing")
    spec = MatchSpec(game=game, bots=("alice", "bob"), seed=1, time_control=TimeControl())
    referee.call(lambda: referee.hub.started(spec))
    web = Process(command("web", "--db", db, "--port", "0", "--server", referee.address), tmp_path)
    try:
        address = web.wait_line(START_LINE).split("web face on ", 1)[1].split()[0]
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with direct.open(address + "api/live") as response:
            live = json.loads(response.read())
        assert live["referee"] == referee.address
        assert [m["id"] for m in live["matches"]] == [spec.match_id]
        web.popen.send_signal(signal.SIGINT)
        code, output = web.finish()
    finally:
        web.stop()
        referee.close()
        storage.close()
    assert code == 0, output
    assert f"live matches from the referee at {referee.address}" in output


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--tls"], "--tls, --tls-ca, --tls-client-*: they need --server HOST:PORT"),
        (["--server", "nowhere"], "--server: expected HOST:PORT with a port 1-65535, got"),
        (["--server", "host:0"], "--server: expected HOST:PORT with a port 1-65535, got"),
        # the option's old name, kept working (hidden from --help)
        (["--referee", "host:0"], "--server: expected HOST:PORT with a port 1-65535, got"),
        (["--relay-token-file", "relay"], "--relay-token-file: it needs --server HOST:PORT"),
    ],
)
def test_referee_options_that_do_not_fit_are_refused(
    arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["web", "--port", "0", *arguments]) == 2
    assert message in capsys.readouterr().err


def test_an_empty_relay_token_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "relay"
    empty.write_text("\n")
    arguments = ["--server", "127.0.0.1:1", "--relay-token-file", str(empty)]
    assert main(["web", "--port", "0", *arguments]) == 2
    assert f"--relay-token-file: {empty} is empty" in capsys.readouterr().err
