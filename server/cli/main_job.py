"""The README's main job: a real round robin of house bots through the gRPC referee.

``domino-arena round-robin`` starts an embedded referee on a free loopback port with a SQLite
file, registers one bot per entrant, starts every house bot as a separate process that dials in
over gRPC (``python -m domino_arena.bots``), runs one tournament per game (the same code the
admin API's tournaments use, so it is rated, stored and resumable), shows a progress bar, and
prints each game's official standings (the batch fit with its intervals, the table ``domino-arena
standings`` prints). Nothing is simulated: the bots are processes, the moves cross the network
stack, the results are in the database afterwards.

The same ``--seed`` gives the same records, results and standings on every run
(docs/referee.md, "Reproducible play"): each game's tournament id comes from the settings, so its
match ids and deal seeds do; every house bot plays each match from the seed the referee sends
for its seat, never from its process or the order its matches arrive in; the search bot plays
at a fixed budget of samples, not against the clock; and the records leave the think times out.

Nothing waits idle. The bot processes start first, from one interpreter that forks one process
per bot (:mod:`.bot_processes`), so they load while the database is made and the referee starts;
each then reads the referee's address and its token on its standard input (``--from-stdin``)
and dials at once. The job waits for the bots on the lobby's own events and for a bot process's
death on its launcher's report, not by polling; the games' tournaments then run at once, each
game's standings printed whole in the games' order as soon as it and those before it are over;
at the end the bots are stopped while the referee shuts down, and reaped as they exit.

The web face (``domino-arena web``, a child process: :mod:`.web_face`) serves the same database
while the job runs, following its matches live; with ``keep_web`` it stays up after the last
tournament, until Ctrl-C, so the first run ends in a browser showing the standings and replays.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from rich.console import Console

from domino_arena.server.app import App, Config, serving_gc
from domino_arena.server.cli import web_face
from domino_arena.server.cli.bot_processes import STOP_TIMEOUT, BotGroup, BotProcess
from domino_arena.server.cli.main_job_games import play_games
from domino_arena.server.cli.main_job_settings import (
    Entrant,
    GameStandings,
    MainJobError,
    Settings,
    StoppedError,
    entrant_of,
    playable,
    tournament_id,
)
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.bots import DuplicateBotError, new_token
from domino_arena.server.store.engine import display_url

__all__ = [
    "CONNECT_TIMEOUT",
    "WEB_NICENESS",
    "Entrant",
    "GameStandings",
    "MainJobError",
    "Settings",
    "StoppedError",
    "entrant_of",
    "playable",
    "run",
    "tournament_id",
]

CONNECT_TIMEOUT: Final = 60.0
"""Seconds the house bots get to start and dial in."""
WEB_NICENESS: Final = 10
"""The web face's lower CPU priority while the job plays (its start-up takes a second of CPU
the referee and the bots would otherwise share)."""


def run(
    settings: Settings, console: Console, web_socket: socket.socket | None = None
) -> list[GameStandings]:
    """Run the whole job and return every game's standings (also printed on ``console``).

    ``web_socket``: where to serve the web face (bound; None: no web face).

    Raises:
        MainJobError: the job cannot run; :class:`StoppedError` after Ctrl-C, naming the
            database that holds the results so far (a temporary one is then kept).
    """
    _exit_without_collecting()
    with contextlib.ExitStack() as stack:
        # First, so that they load while the database is made and the referee starts.
        bots = BotGroup.start(settings.entrants)
        stack.callback(bots.kill)  # when the job fails before _main reaps them
        kept: list[bool] = []
        if settings.db_url is None:
            folder = tempfile.mkdtemp(prefix="domino-arena-")
            stack.callback(_remove_unless, kept, folder)
            url = f"sqlite:///{Path(folder) / 'round-robin.db'}"
        else:
            url = settings.db_url
        results: list[GameStandings] = []
        try:
            storage = RatedStorage(url)
            storage.open()
            stack.callback(storage.close)
            console.print(f"database {display_url(url)}")
            try:
                tokens = {e.name: storage.add_bot(e.name) for e in settings.entrants}
            except DuplicateBotError as exc:
                raise MainJobError(
                    f"{exc} in {display_url(url)}: use a fresh --db or other --bots names"
                ) from None
            job = _main(
                settings,
                storage,
                tokens,
                bots,
                console,
                results=results,
                url=url,
                web_socket=web_socket,
            )
            with serving_gc():
                asyncio.run(job)
        except KeyboardInterrupt:
            if settings.keep_web and len(results) == len(playable(settings)):
                return results  # the end --web waits for
            kept.append(True)  # a temporary database too: it holds the results so far
            shown = display_url(url)
            raise StoppedError(
                f"stopped by Ctrl-C; the results so far are in {shown} "
                f"(domino-arena web --db {shown} shows them)"
            ) from None
        return results


def _exit_without_collecting() -> None:
    """Have the interpreter's exit skip its last collection: it would scan every object the
    referee loaded (numpy, scipy, SQLAlchemy, grpc), which took 1-5 s of the job's shutdown on
    a busy two-core machine, 0.1-0.2 s without (bench/README.md). Everything the job owns is
    closed by then (its database, its children, their logs); the standard streams are flushed
    by the interpreter anyway. Registered once, at exit it freezes the heap (``gc.freeze``)."""
    if not _EXIT_HOOK:
        _EXIT_HOOK.append(True)
        atexit.register(gc.freeze)


_EXIT_HOOK: list[bool] = []


def _remove_unless(kept: list[bool], folder: str) -> None:
    """Remove the temporary ``folder`` of the database, unless ``kept`` says it holds what a
    stopped job's user was told to look at."""
    if not kept:
        shutil.rmtree(folder, ignore_errors=True)


async def _main(
    settings: Settings,
    storage: RatedStorage,
    tokens: dict[str, str],
    bots: BotGroup,
    console: Console,
    *,
    results: list[GameStandings],
    url: str,
    web_socket: socket.socket | None,
) -> None:
    """Serve, play every game (each game's standings appended to ``results`` as it ends),
    then, with ``keep_web``, wait for Ctrl-C."""
    config = Config(
        host="127.0.0.1",
        port=0,
        reconnect_grace=5.0,
        think_times=False,
        relay_token=new_token(),  # its web face's: one watch per match, counted as a relay's
    )
    app = App(config, storage)
    stop = asyncio.Event()
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    serving = asyncio.ensure_future(app.serve(stop, ready.set_result))
    web: web_face.WebChild | None = None
    bots.attach()
    try:
        port = await _first(ready, serving)
        console.print(f"referee listening on 127.0.0.1:{port}")
        for bot in bots.bots:
            bot.dial(f"127.0.0.1:{port}", tokens[bot.entrant.name])
        if web_socket is not None:
            web = web_face.start(
                web_socket,
                url,
                f"127.0.0.1:{port}",
                niceness=WEB_NICENESS,
                relay_token=config.relay_token,
            )
            console.print(f"web face on {web.url} (standings, replays, live matches)")
        await _wait_connected(app, bots, serving)
        console.print(
            f"{len(bots.bots)} bots connected as separate processes: "
            + ", ".join(bot.entrant.name for bot in bots.bots)
        )
        for game in settings.games:
            if game not in playable(settings):
                console.print(f"{game.describe()}: skipped, it needs {game.num_players} entrants")
        await play_games(app, storage, settings, console, results)
        if web is not None and settings.keep_web:
            await _until_ctrl_c(web, console)
        elif web is not None:
            console.print(f"the web face on {web.url} stops with the job: --web keeps it up")
    finally:
        # The bots and the web face stop while the referee shuts down.
        stopping = asyncio.ensure_future(bots.stop())
        if web is not None and web.process.poll() is None:
            web.process.terminate()
        stop.set()
        with contextlib.suppress(Exception):
            await serving
        await stopping
        if web is not None:
            await _reap_web(web)


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


async def _exited(process: subprocess.Popen[bytes]) -> int:
    """Wait for ``process`` to exit, on its pidfd (no polling, no thread); its status."""
    if process.poll() is not None:
        return process.returncode
    loop = asyncio.get_running_loop()
    fd = os.pidfd_open(process.pid)
    gone: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not gone.done():
            gone.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await gone
    finally:
        loop.remove_reader(fd)
        os.close(fd)
    return process.wait()


async def _reap_web(web: web_face.WebChild) -> None:
    """Wait for the web face to exit (it was sent SIGTERM); kill it after :data:`STOP_TIMEOUT`."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(_exited(web.process), STOP_TIMEOUT)
    web.stop()


async def _wait_connected(app: App, group: BotGroup, serving: asyncio.Future[None]) -> None:
    """Return once every bot is connected (the lobby's events, in the arena's trio nursery).

    Raises:
        MainJobError: a bot process exited first (with its output), the referee stopped, or
            :data:`CONNECT_TIMEOUT` passed.
    """
    lobby = app.lobby
    bots: Sequence[BotProcess] = group.bots

    async def all_connected() -> None:
        for bot in bots:
            await lobby.wait_connected(bot.entrant.name)

    connected = asyncio.ensure_future(app.arena.in_trio(all_connected))
    exits = {asyncio.ensure_future(group.exited(bot)): bot for bot in bots}
    try:
        waits: list[asyncio.Future[Any]] = [connected, serving, *exits]
        done, _ = await asyncio.wait(
            waits, timeout=CONNECT_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        if connected in done:
            connected.result()
            return
        for exit_, bot in exits.items():
            if exit_ in done:
                raise MainJobError(
                    f"house bot '{bot.entrant.name}' exited with status {exit_.result()}:\n"
                    f"{bot.output()}"
                )
        if serving in done:
            serving.result()
            raise MainJobError("the referee stopped")
        names = {c.name for c in lobby.connections()}
        missing = [bot.entrant.name for bot in bots if bot.entrant.name not in names]
        raise MainJobError(f"bots not connected after {CONNECT_TIMEOUT:g} s: {', '.join(missing)}")
    finally:
        for exit_ in exits:
            exit_.cancel()
        # Not cancelled: the trio wait ends with the referee's shutdown; its error is read.
        connected.add_done_callback(_read_outcome)


def _read_outcome(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()
