"""The main job's games (:mod:`.main_job`): one tournament per game, all at once.

Each game's tournament plays at the job's ``--concurrency`` tables while the others play too; a
progress bar each. A game's standings are printed whole once it and the games before it are
over, so the output comes in the games' order whatever order they end in; and every record is
the one sequential play would store (docs/referee.md, "Reproducible play"): a tournament's match
ids and deal seeds come from its own id, and each bot plays a match from the seed the referee
sends for its seat, whatever else it plays meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from domino_arena.sdk.rules import Game
from domino_arena.server.app import App
from domino_arena.server.cli.main_job_settings import (
    GameStandings,
    MainJobError,
    Settings,
    playable,
    tournament_id,
)
from domino_arena.server.cli.standings import print_batch
from domino_arena.server.cli.tables import standings_table
from domino_arena.server.ladder.elo import standings
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.admin_requests import RequestError
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle import new_tournament
from domino_arena.v1 import admin_pb2

Fit: TypeAlias = Callable[..., Awaitable[admin_pb2.BatchStandings]]
"""The official standings' fit: :func:`domino_arena.server.net.admin_standings.batch_answer`."""


@dataclass(frozen=True, slots=True)
class _Played:
    """A game's tournament, over: what :func:`_show` prints in the games' order."""

    standings: GameStandings
    unfitted: str | None
    """Why there are no official standings (None: there are)."""
    bar: TaskID


async def play_games(
    app: App,
    storage: RatedStorage,
    settings: Settings,
    console: Console,
    results: list[GameStandings],
) -> None:
    """Play every playable game's tournament at once (each at ``settings.concurrency`` tables),
    a progress bar each; print each game's standings whole, in the games' order, as soon as it
    and the games before it are over, and append them to ``results`` in that order.

    Every record is the one sequential play would store: a tournament's match ids and deal
    seeds come from its own id (:func:`tournament_id`), and each bot plays a match from the
    seed the referee sends for its seat, whatever else it plays meanwhile.
    """
    games = playable(settings)
    # The fit's numpy and scipy take about a second of CPU to import: in a thread while the
    # games play, not at the job's start (where every step waits for the one before).
    fit = asyncio.ensure_future(asyncio.to_thread(_load_fit))
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as progress:
        tasks = [
            asyncio.ensure_future(_play_game(app, storage, settings, game, progress, fit=fit))
            for game in games
        ]
        try:
            shown = 0
            pending: set[asyncio.Future[_Played]] = set(tasks)
            while shown < len(tasks):
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()  # a tournament that failed fails the job now
                while shown < len(tasks) and tasks[shown].done():
                    played = tasks[shown].result()
                    progress.remove_task(played.bar)  # its line below says it all
                    results.append(_show(played, console))
                    shown += 1
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, fit, return_exceptions=True)


def _load_fit() -> Fit:
    """Import the official standings' fit (:func:`.admin_standings.batch_answer`)."""
    from domino_arena.server.net.admin_standings import batch_answer  # noqa: PLC0415

    return batch_answer


def _show(played: _Played, console: Console) -> GameStandings:
    """Print a game's outcome: its games and seconds, its official standings (or why there are
    none, and the live ladder instead)."""
    outcome = played.standings
    described = outcome.game.describe()
    console.print(f"{described}: {outcome.games_played} games in {outcome.seconds:.1f} s")
    if outcome.official is not None:
        print_batch(console, outcome.official, los=False)
    else:
        console.print(f"{described}: no official standings: {played.unfitted}")
        console.print(standings_table(f"{described}: live Elo ladder", outcome.table))
    return outcome


async def _play_game(
    app: App,
    storage: RatedStorage,
    settings: Settings,
    game: Game,
    progress: Progress,
    *,
    fit: asyncio.Future[Fit],
) -> _Played:
    """Play ``game``'s tournament to its end with a progress bar; its standings, unprinted."""
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
        tournament_id=tournament_id(settings, game),
    )
    started = time.monotonic()
    await app.director.create_tournament(tournament, start=True)
    task = progress.add_task(game.describe(), total=None)
    # The runner is registered by create_tournament and removed when it stops.
    while (status := app.director.tournament_progress(tournament.id)) is not None:
        progress.update(task, total=status.total, completed=status.done)
        await asyncio.sleep(0.1)
    row = await asyncio.to_thread(storage.tournament, tournament.id)
    if row is None or row.state is not TournamentState.FINISHED:
        state = "missing" if row is None else row.state.value
        raise MainJobError(f"tournament {tournament.id} stopped unfinished ({state})")
    played = len(await asyncio.to_thread(storage.tournament_game_indexes, tournament.id))
    progress.update(task, total=played, completed=played)
    seconds = time.monotonic() - started
    live = standings(await asyncio.to_thread(storage.ratings, game.name))
    official, unfitted = await _official(await asyncio.shield(fit), storage, game, tournament.id)
    outcome = GameStandings(game, tournament.id, played, seconds, official, live)
    return _Played(outcome, unfitted, task)


async def _official(
    fit: Fit,
    storage: RatedStorage,
    game: Game,
    tournament: str,
) -> tuple[admin_pb2.BatchStandings | None, str | None]:
    """The tournament's official standings as ``domino-arena standings --tournament`` fits them
    (``fit``: :func:`.admin_standings.batch_answer`, the same fit, printed as the same table by
    :func:`_show`); None and the reason when its
    games cannot be fitted.

    The matches are fitted in the order of their ids, not of their storing, so that the
    bootstrap's intervals are the same on every run too.
    """

    def matches(*args: Any, **kwargs: Any) -> list[StoredMatch]:
        return sorted(storage.matches(*args, **kwargs), key=lambda m: m.id)

    request = admin_pb2.GetStandingsRequest(game=game.name, batch=True, tournament_id=tournament)
    try:
        return await fit(matches, request, game.name, tournament), None
    except RequestError as exc:
        return None, str(exc)
