"""The README's main job: a real round robin of house bots through the gRPC referee.

``domino-arena round-robin`` starts an embedded referee on a free loopback port with a SQLite
file, registers one bot per entrant, starts every house bot as a separate process that dials in
over gRPC (``python -m domino_arena.bots``), runs one tournament per game (the same code the
admin API's tournaments use, so it is rated, stored and resumable), shows a progress bar, and
prints each game's standings with Elo and its uncertainty. Nothing is simulated: the bots are
processes, the moves cross the network stack, the results are in the database afterwards.

The web face (``domino-arena web``, a child process: :mod:`.web_face`) serves the same database
while the job runs, following its matches live; with ``keep_web`` it stays up after the last
tournament, until Ctrl-C, so the first run ends in a browser showing the standings and replays.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from domino_arena.bots import HOUSE_BOTS, is_bot_spec, player_factory
from domino_arena.sdk import runner
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import Game
from domino_arena.server.app import App, Config
from domino_arena.server.cli import web_face
from domino_arena.server.cli.tables import standings_table
from domino_arena.server.ladder.elo import Rating, standings
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play.match_spec import DEFAULT_MAX_DEALS
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.play.tournament import new_tournament
from domino_arena.server.store.bots import NAME_PATTERN, NAME_RULE, DuplicateBotError
from domino_arena.server.store.engine import display_url
from domino_arena.server.store.tournaments import StoredTournament, TournamentState

CONNECT_TIMEOUT: Final = 60.0
"""Seconds the house bots get to start and dial in."""


class MainJobError(Exception):
    """The job cannot run (a bot process died, a bot never connected); the message says why."""


@dataclass(frozen=True, slots=True)
class Entrant:
    """A bot taking part: its bot name in the referee and what it runs, a house bot's name or
    a bot of one's own (``MODULE:NAME``), each in its own process."""

    name: str
    kind: str


def entrant_of(text: str) -> Entrant:
    """Parse ``greedy`` or ``greedy-2`` (a house bot with an optional suffix), or a bot of
    one's own: ``mine=./mybot.py:HeavyFirst`` (named ``mine``) or ``./mybot.py:HeavyFirst``
    (named after the class, ``heavyfirst``).

    Raises:
        ValueError: neither, a bad bot name, or a bot that cannot be loaded.
    """
    name, equals, spec = text.rpartition("=")
    if not equals:
        spec, name = text, ""
    if is_bot_spec(spec):
        name = name or re.sub(r"[^A-Za-z0-9_.-]", "-", spec.rpartition(":")[2]).lower()
        if not NAME_PATTERN.match(name):
            raise ValueError(f"'{text}': bad bot name {name!r}: {NAME_RULE}")
        try:
            player_factory(spec, 0)
        except (ImportError, AttributeError, OSError, ValueError) as exc:
            raise ValueError(f"'{text}': cannot load {spec}: {type(exc).__name__}: {exc}") from None
        return Entrant(name, spec)
    kind = text.split("-", 1)[0]
    if kind not in HOUSE_BOTS or equals:
        raise ValueError(
            f"'{text}' is not a house bot ({', '.join(sorted(HOUSE_BOTS))}) "
            "with an optional '-suffix', nor a bot of your own as [NAME=]MODULE:CLASS"
        )
    return Entrant(text, kind)


@dataclass(frozen=True, slots=True)
class Settings:
    """What to play: the games, the entrants, how often, and how."""

    games: tuple[Game, ...]
    entrants: tuple[Entrant, ...]
    games_per_pairing: int = 1
    seed: int = 1
    concurrency: int = 4
    time_control: TimeControl = field(
        default_factory=lambda: TimeControl(move=1.0, bank=10.0, grace=0.5)
    )
    fault_policy: FaultPolicy = FaultPolicy.SUBSTITUTE
    max_deals: int = DEFAULT_MAX_DEALS
    """The referee's cap on deals: a game nobody has won by then is adjudicated."""
    db_url: str | None = None
    """None: a fresh SQLite file in a temporary folder."""
    keep_web: bool = False
    """Keep the web face (and the referee) up after the tournaments, until Ctrl-C."""


@dataclass(frozen=True, slots=True)
class GameStandings:
    """The outcome of one game's tournament: its id and the ladder after it."""

    game: Game
    tournament_id: str
    games_played: int
    seconds: float
    table: list[tuple[str, Rating]]


def run(
    settings: Settings, console: Console, web_socket: socket.socket | None = None
) -> list[GameStandings]:
    """Run the whole job and return every game's standings (also printed on ``console``).

    ``web_socket``: where to serve the web face (bound; None: no web face)."""
    with contextlib.ExitStack() as stack:
        if settings.db_url is None:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="domino-arena-"))
            url = f"sqlite:///{Path(folder) / 'round-robin.db'}"
        else:
            url = settings.db_url
        storage = RatedStorage(url)
        storage.open()
        stack.callback(storage.close)
        console.print(f"database {display_url(url)}")
        try:
            tokens = {e.name: storage.add_bot(e.name) for e in settings.entrants}
        except DuplicateBotError as exc:
            raise MainJobError(
                f"{exc} in {display_url(url)}: use a fresh --db or other --entrants names"
            ) from None
        job = _main(settings, storage, tokens, console, url=url, web_socket=web_socket)
        return asyncio.run(job)


async def _main(
    settings: Settings,
    storage: RatedStorage,
    tokens: dict[str, str],
    console: Console,
    *,
    url: str,
    web_socket: socket.socket | None,
) -> list[GameStandings]:
    app = App(Config(host="127.0.0.1", port=0, reconnect_grace=5.0), storage)
    stop = asyncio.Event()
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    serving = asyncio.ensure_future(app.serve(stop, ready.set_result))
    processes: list[tuple[Entrant, subprocess.Popen[bytes], TextIO]] = []
    web: web_face.WebChild | None = None
    try:
        port = await _first(ready, serving)
        console.print(f"referee listening on 127.0.0.1:{port}")
        if web_socket is not None:
            web = web_face.start(web_socket, url, f"127.0.0.1:{port}")
            console.print(f"web face on {web.url} (standings, replays, live matches)")
        for index, entrant in enumerate(settings.entrants):
            processes.append(_start_bot(entrant, port, tokens[entrant.name], settings.seed + index))
        await _wait_connected(app, processes, serving)
        console.print(
            f"{len(processes)} bots connected as separate processes: "
            + ", ".join(e.name for e, _, _ in processes)
        )
        results = []
        for game in settings.games:
            if len(settings.entrants) < game.num_players:
                console.print(f"{game.describe()}: skipped, it needs {game.num_players} entrants")
                continue
            results.append(await _play_game(app, storage, settings, game, console))
        if web is not None and settings.keep_web:
            await _until_ctrl_c(web, console)
        elif web is not None:
            console.print(f"the web face on {web.url} stops with the job: --web keeps it up")
        return results
    finally:
        if web is not None:
            web.stop()
        stop.set()
        with contextlib.suppress(Exception):
            await serving
        for _, process, _log in processes:
            process.terminate()
        for _, process, log in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()


async def _until_ctrl_c(web: web_face.WebChild, console: Console) -> None:
    """Wait for Ctrl-C (asyncio cancels the main task on SIGINT), or for the web face to exit."""
    console.print(f"the web face stays up on {web.url} until Ctrl-C")
    try:
        code = await asyncio.to_thread(web.process.wait)
    except asyncio.CancelledError:
        console.print("stopped")
        return
    raise MainJobError(f"the web face exited with status {code}")


async def _first(ready: asyncio.Future[int], serving: asyncio.Future[None]) -> int:
    """Wait for the port, or surface why the server stopped first."""
    waits: list[asyncio.Future[Any]] = [ready, serving]
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    if not ready.done():
        serving.result()  # raises the server's error
        raise MainJobError("the referee stopped before it was ready")
    return ready.result()


def _start_bot(
    entrant: Entrant, port: int, token: str, seed: int
) -> tuple[Entrant, subprocess.Popen[bytes], TextIO]:
    log = tempfile.TemporaryFile("w+", prefix=f"{entrant.name}-")  # noqa: SIM115
    command = [
        sys.executable,
        "-m",
        "domino_arena.bots",
        entrant.name,
        "--server",
        f"127.0.0.1:{port}",
        "--bot",
        entrant.kind,
        "--seed",
        str(seed),
    ]
    env = {**os.environ, runner.TOKEN_ENV: token}
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    return entrant, process, log


async def _wait_connected(
    app: App,
    processes: Sequence[tuple[Entrant, subprocess.Popen[bytes], TextIO]],
    serving: asyncio.Future[None],
) -> None:
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while True:
        connected = {c.name for c in app.arena.lobby.connections()}
        if all(e.name in connected for e, _, _ in processes):
            return
        for entrant, process, log in processes:
            if process.poll() is not None:
                log.seek(0)
                tail = log.read()[-2000:].strip()
                raise MainJobError(
                    f"house bot '{entrant.name}' exited with status {process.returncode}:\n{tail}"
                )
        if serving.done():
            serving.result()
            raise MainJobError("the referee stopped")
        if time.monotonic() > deadline:
            missing = [e.name for e, _, _ in processes if e.name not in connected]
            raise MainJobError(
                f"bots not connected after {CONNECT_TIMEOUT:g} s: {', '.join(missing)}"
            )
        await asyncio.sleep(0.05)


async def _play_game(
    app: App, storage: RatedStorage, settings: Settings, game: Game, console: Console
) -> GameStandings:
    tournament: StoredTournament = new_tournament(
        name=f"round robin: {game.describe()}",
        game=game,
        entrants=[e.name for e in settings.entrants],
        known_bots=[e.name for e in settings.entrants],
        games_per_pairing=settings.games_per_pairing,
        time_control=settings.time_control,
        fault_policy=settings.fault_policy,
        max_deals=settings.max_deals,
        concurrency=settings.concurrency,
        wait_seconds=10.0,
        seed=settings.seed,
    )
    started = time.monotonic()
    await app.arena.create_tournament(tournament, start=True)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as progress:
        task = progress.add_task(game.describe(), total=None)
        # The runner is registered by create_tournament and removed when it stops.
        while (status := app.arena.tournament_progress(tournament.id)) is not None:
            progress.update(task, total=status.total, completed=status.done)
            await asyncio.sleep(0.1)
        row = await asyncio.to_thread(storage.tournament, tournament.id)
        if row is None or row.state is not TournamentState.FINISHED:
            state = "missing" if row is None else row.state.value
            raise MainJobError(f"tournament {tournament.id} stopped unfinished ({state})")
        played = len(await asyncio.to_thread(storage.tournament_game_indexes, tournament.id))
        progress.update(task, total=played, completed=played)
    seconds = time.monotonic() - started
    ratings = await asyncio.to_thread(storage.ratings, game.name)
    result = GameStandings(game, tournament.id, played, seconds, standings(ratings))
    title = f"{game.describe()}: {played} games in {seconds:.1f} s"
    console.print(standings_table(title, result.table))
    return result
