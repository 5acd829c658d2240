"""End to end: the referee, house bots and the admin call as separate processes over real gRPC.

``domino-arena serve --port 0`` runs as a subprocess on a fresh SQLite file; four bots are
created with ``bot add`` and connected with ``bot run`` (the SDK's ``run``, each in its own
process); then one ``match run`` per game configuration (every game and player count) runs,
all at once, so each bot's single stream plays several matches concurrently. Every record must
replay, every match must be stored, and SIGTERM must stop the referee with status 0 quickly.

The test waits on the processes' output lines (the referee logs each connection), never on a
timer; the timeouts only bound a failure.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

from domino_arena.sdk.match.records import read_record, replay
from domino_arena.sdk.rules import Game, configurations
from domino_arena.server.cli.main import main
from domino_arena.server.ladder.ratings_store import RatedStorage
from tests.fakes.processes import Process, command, served_port
from tests.fakes.readme import example

BOTS: Final = {
    "greedy-1": "greedy",
    "greedy-2": "greedy",
    "greedy-3": "greedy",
    "random-4": "random",
}
"""The bots of the arena and the house bot each one runs. Moon is played by greedy bots only:
uniformly random Moon players seldom finish a game."""

TIME_CONTROL: Final = "2s+10s/200ms"
ADMIN_TOKEN: Final = "e2e-admin-token"
SHUTDOWN_LIMIT: Final = 5.0
"""Seconds SIGTERM may take to stop the referee (its shutdown grace is 2 s)."""


@dataclass
class Arena:
    """The running referee and its bots."""

    folder: Path
    db: str
    port: int
    server: Process
    bots: list[Process]


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    folder = tmp_path_factory.mktemp("e2e")
    db = f"sqlite:///{folder / 'arena.db'}"
    tokens: dict[str, str] = {}
    for name in BOTS:  # one at a time, as a person types them
        code, output = Process(command("bot", "add", name, "--db", db), folder).finish()
        assert code == 0, output
        tokens[name] = output.splitlines()[-1]
    server = Process(
        command("serve", "--port", "0", "--db", db, "--admin-token", ADMIN_TOKEN), folder
    )
    processes = [server]
    try:
        port = served_port(server)
        bots = [
            Process(
                command(
                    "bot",
                    "run",
                    name,
                    "--server",
                    f"127.0.0.1:{port}",
                    "--token",
                    tokens[name],
                    "--bot",
                    kind,
                    "--seed",
                    str(seat),
                ),
                folder,
            )
            for seat, (name, kind) in enumerate(BOTS.items())
        ]
        processes += bots
        connected = {
            server.wait_line("bot connected: name=", context=bots).split("name=")[1].split()[0]
            for _ in BOTS
        }
        assert connected == set(BOTS)
        yield Arena(folder, db, port, server, bots)
    finally:
        for process in processes:
            process.stop()


def match_args(game: Game) -> list[str]:
    """The ``match run`` arguments of one configuration, moon played by greedy bots only."""
    names = list(BOTS)[: game.num_players]
    args = ["match", "run", game.name, "--bots", ",".join(names), "--admin-token", ADMIN_TOKEN]
    args += ["--players", str(game.num_players)]
    if game.options().get("partnerships"):
        args.append("--partners")
    return args


def config_id(game: Game) -> str:
    teams = "-partners" if len(game.sides) != game.num_players else ""
    return f"{game.name}-{game.num_players}{teams}"


def test_every_game_plays_over_grpc_and_replays(arena: Arena) -> None:
    games = list(configurations())
    assert len(games) == 12
    runs = {}
    for seed, game in enumerate(games):
        record = arena.folder / f"{config_id(game)}.jsonl"
        args = [*match_args(game), "--server", f"127.0.0.1:{arena.port}", "--seed", str(seed)]
        args += ["--time-control", TIME_CONTROL, "--record", str(record)]
        runs[config_id(game)] = (record, Process(command(*args), arena.folder))
    for name, (record, process) in runs.items():
        code, output = process.finish()
        assert code == 0, f"{name}: {output}"
        assert "result: normal; side " in output, f"{name}: {output}"
        assert f"record written to {record}" in output
        parsed = read_record(record)
        assert parsed.faults == (), f"{name}: {parsed.faults}"
        report = replay(parsed)
        assert report.ok, f"{name}: {report}"
        assert main(["replay", str(record)]) == 0
    storage = RatedStorage(arena.db)
    storage.open()
    try:
        stored = storage.matches(limit=100)
    finally:
        storage.close()
    assert len(stored) == len(games)
    assert {m.termination for m in stored} == {"normal"}


def test_the_readme_example_bot_joins_and_plays(arena: Arena) -> None:
    """Issue 3: a bot written from the README example joins the referee and plays a match."""
    _, filename, code = example()
    (arena.folder / filename).write_text(code, encoding="utf-8")
    status, output = Process(
        command("bot", "add", "mybot", "--db", arena.db), arena.folder
    ).finish()
    assert status == 0, output
    env = {
        "DOMINO_ARENA_TOKEN": output.splitlines()[-1],
        "DOMINO_ARENA_SERVER": f"127.0.0.1:{arena.port}",
    }
    bot = Process([sys.executable, filename], arena.folder, env)
    try:
        arena.server.wait_line("bot connected: name=mybot")
        record = arena.folder / "mybot.jsonl"
        args = ["match", "run", "passing", "--bots", "mybot,greedy-1", "--seed", "5"]
        args += ["--admin-token", ADMIN_TOKEN]
        args += ["--server", f"127.0.0.1:{arena.port}", "--time-control", TIME_CONTROL]
        status, output = Process(command(*args, "--record", str(record)), arena.folder).finish()
        assert status == 0, output
        assert "result: normal; side " in output, output
        parsed = read_record(record)
        assert parsed.seats[0] == "mybot" and parsed.faults == ()
        assert replay(parsed).ok
    finally:
        bot.popen.send_signal(signal.SIGINT)
        bot_status, bot_output = bot.finish()
    assert bot_status == 0, bot_output
    assert "Traceback" not in bot_output


ROOT: Final = Path(__file__).resolve().parents[2]
LIGHT_FILES: Final = ("pyproject.toml", "README.md", "sdk", "server", "bots", "proto")
"""What ``pip install domino-arena`` reads (as the Dockerfile copies it)."""
SERVER_ONLY: Final = ("sqlalchemy", "alembic", "trio", "prometheus_client", "starlette")


def light_venv(folder: Path) -> Path:
    """A fresh venv with the light install (``pip install domino-arena``, no extra) from a copy
    of the project's sources; return its Python."""
    source = folder / "source"
    source.mkdir(parents=True)
    for name in LIGHT_FILES:
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(origin, source / name)
    venv = folder / "light"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(source)],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return python


def test_the_light_install_plays_locally_and_runs_the_readme_bot(arena: Arena) -> None:
    """Issue 12: ``pip install domino-arena`` gives the rules, the Bot API, local play and the
    client and nothing server-side; the README bot plays a match through the referee with it."""
    python = light_venv(arena.folder / "light-install")
    for module in SERVER_ONLY:
        found = subprocess.run(
            [str(python), "-c", f"import {module}"], check=False, capture_output=True
        )
        assert found.returncode != 0, f"{module} is installed by the light install"
    cli = str(python.with_name("domino-arena"))
    played = subprocess.run(
        [cli, "play", "passing", "--bots", "greedy,random", "--seed", "1", "--quiet"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert played.returncode == 0 and "result: side " in played.stdout, played.stderr
    refused = subprocess.run([cli, "serve"], check=False, capture_output=True, text=True)
    assert refused.returncode == 2
    assert refused.stderr == (
        "domino-arena: error: 'serve' reads a database or serves, so it needs the server extra: "
        "pip install 'domino-arena[server]'\n"
    )
    _, _, code = example()
    assert code.count('name="mybot"') == 1
    (arena.folder / "lightbot.py").write_text(code.replace('name="mybot"', 'name="lightbot"'))
    status, output = Process(
        command("bot", "add", "lightbot", "--db", arena.db), arena.folder
    ).finish()
    assert status == 0, output
    env = {
        "DOMINO_ARENA_TOKEN": output.splitlines()[-1],
        "DOMINO_ARENA_SERVER": f"127.0.0.1:{arena.port}",
    }
    bot = Process([str(python), "lightbot.py"], arena.folder, env)
    try:
        arena.server.wait_line("bot connected: name=lightbot", context=[bot])
        args = ["match", "run", "straight", "--bots", "lightbot,greedy-2", "--seed", "9"]
        args += ["--admin-token", ADMIN_TOKEN, "--server", f"127.0.0.1:{arena.port}"]
        status, output = Process(
            command(*args, "--time-control", TIME_CONTROL), arena.folder
        ).finish()
        assert status == 0, output
        assert "result: normal; side " in output, output
    finally:
        bot.popen.send_signal(signal.SIGINT)
        bot_status, bot_output = bot.finish()
    assert bot_status == 0, bot_output
    assert "Traceback" not in bot_output


def test_sigterm_stops_the_referee_quickly_and_cleanly(arena: Arena) -> None:
    started = time.monotonic()
    arena.server.popen.send_signal(signal.SIGTERM)
    code, output = arena.server.finish()
    elapsed = time.monotonic() - started
    assert code == 0, output
    assert elapsed < SHUTDOWN_LIMIT, f"{elapsed:.2f} s"
    assert output.splitlines()[-1] == "domino-arena: stopped"
    assert "Traceback" not in output
    for bot in arena.bots:
        bot.popen.send_signal(signal.SIGINT)
        bot_code, bot_output = bot.finish()
        assert bot_code == 0, bot_output
        assert "Traceback" not in bot_output
