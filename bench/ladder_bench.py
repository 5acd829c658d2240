"""Time to store rated results and to recompute the standings, on SQLite and on PostgreSQL.

Usage::

    python bench/ladder_bench.py [--results N] [--backend sqlite|postgresql|both]
                                 [--path single|batch|both] [--in-flight M] [--bots K]
                                 [--seed S] [--postgres-url URL]

The issue asks for the time to store 100,000 results (``--results``, the default) and to
recompute the standings. Results go in through one of the product's two paths (``--path``):

* ``batch`` (the default): the referee's ladder writer (``server/store/writer.py``'s
  ``Writer.save_match``), called by up to ``--in-flight`` concurrent finished games (512) as the
  arena calls it: the games queued while a transaction is written share the next one (group
  commit, up to 256 a transaction), their ratings moved in memory in order and written once.
* ``single``: one ``RatedStorage.save_match`` call per result, one transaction each (the path
  every result took before group commit): the match row and, for a rated match, its bots'
  ratings locked, moved and written, and ``rated_games``.
* ``both``: single, then batch, each on a fresh database, and the ratio of their times.

The rows are generated before the clock starts, from ``--seed``: K bots (20 by default) in four
pools, as the referee stores them: Passing Game with 2 seats and with 4 seats in partnerships,
Straight and Doubles with 2 seats, Three-Player Moon with 3. Each row takes its scores, winner,
detail and record text from one of a few real games played in-process by greedy house bots
(``domino_arena.sdk.local.play_game``, ``records.record_lines``), so the rows are the size the
referee writes (13-35 kB of record each); the record names other players than the row's seats,
which nothing here reads. About 3% of the results are forfeits (a seat charged 3 faults, its
side ranked last) and 1% are void (stored, never rated).

Then, per pool, *recompute* is ``RatedStorage.recompute_ratings(pool)`` (read the pool's rated
games in order, replay the Elo ladder) and *read* is ``RatedStorage.ratings(pool)`` (the standings
the ladder keeps). The two must be equal; if they are not, that is an error and the script
exits 1. It also exits 1 on any other error, never because a figure is low.

SQLite is a fresh file in a temporary folder. PostgreSQL is ``--postgres-url`` (the machine's
server by default) in a fresh schema, dropped afterwards. With fewer than 100,000 results, the
times for 100,000 are also printed, scaled linearly and marked *extrapolated*; storing slows as
tables grow, so they are a floor. The machine is shared: the CPU count and load are printed
before and after each run.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import trio

from domino_arena.bots import make_bot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.records import forfeit_winner, record_lines
from domino_arena.sdk.rules import make_game
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.engine import display_url
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.writer import Writer

ISSUE_RESULTS: Final = 100_000
IN_FLIGHT: Final = 512
"""Finished games waiting for the writer at most, on the batch path."""
POSTGRES_URL: Final = "postgresql://postgres@127.0.0.1:5432/test"
SAMPLE_GAMES: Final = 4
"""Real games played per seating; every row reuses one of them."""
FORFEIT_SHARE: Final = 0.03
VOID_SHARE: Final = 0.01
FORFEIT_STRIKES: Final = 3


@dataclass(frozen=True, slots=True)
class Seating:
    """One kind of row: a game, its options, how seats form sides, and how often it comes."""

    game: str
    options: dict[str, Any]
    side_of_seat: tuple[int, ...]
    weight: int


SEATINGS: Final = (
    Seating("passing", {"players": 2}, (0, 1), 4),
    Seating("passing", {"players": 4, "partnerships": True}, (0, 1, 0, 1), 2),
    Seating("straight", {"players": 2}, (0, 1), 2),
    Seating("doubles", {"players": 2}, (0, 1), 1),
    Seating("moon", {}, (0, 1, 2), 1),
)


@dataclass(frozen=True, slots=True)
class Sample:
    """What a real game left behind: the fields a row copies."""

    scores: tuple[int, ...]
    winner: int | None
    detail: str
    record: str
    options: dict[str, Any]
    """The game's options in full (the seating's and the defaults)."""


def samples(seating: Seating, seed: int, count: int = SAMPLE_GAMES) -> list[Sample]:
    """Play ``count`` real games of ``seating`` between greedy house bots."""
    game = make_game(seating.game, **seating.options)
    found = []
    for n in range(count):
        bots = [make_bot("greedy", seed + 10 * n + seat) for seat in range(game.num_players)]
        result = play_game(game, bots, seed=seed + n)
        outcome = result.outcome
        text = "".join(line + "\n" for line in record_lines(result.record))
        found.append(Sample(outcome.scores, outcome.winner, outcome.detail, text, game.options()))
    return found


def result_row(
    rng: random.Random,
    seating: Seating,
    sample: Sample,
    seats: tuple[str, ...],
    **fields: Any,
) -> StoredMatch:
    """A stored result of ``sample`` with ``seats``, as the referee writes one: rated and
    normal, or (by :data:`FORFEIT_SHARE` and :data:`VOID_SHARE`) a forfeit or a void.
    ``fields``: the row's ``id``, ``created`` and any other field of :class:`StoredMatch`."""
    match = StoredMatch(
        **{"id": "", "created": dt.datetime(2026, 1, 1, tzinfo=dt.UTC), **fields},
        game=seating.game,
        options=sample.options,
        seats=seats,
        seed=rng.getrandbits(63),
        termination="normal",
        winner=sample.winner,
        scores=sample.scores,
        faulted_seat=None,
        fault=None,
        detail=sample.detail,
        record=sample.record,
        side_of_seat=seating.side_of_seat,
        faults=(0,) * len(seats),
        rated=True,
    )
    draw = rng.random()
    if draw < FORFEIT_SHARE:
        seat = rng.randrange(len(seats))
        side = seating.side_of_seat[seat]
        return dataclasses.replace(
            match,
            termination="forfeit",
            winner=forfeit_winner(sample.scores, side),
            faulted_seat=seat,
            fault="timeout",
            detail=f"seat {seat} forfeited after {FORFEIT_STRIKES} faults",
            faults=tuple(FORFEIT_STRIKES if s == seat else 0 for s in range(len(seats))),
        )
    if draw < FORFEIT_SHARE + VOID_SHARE:
        return dataclasses.replace(
            match, termination="void", winner=None, detail="voided by the referee"
        )
    return match


def generate(count: int, bots: int, seed: int) -> list[StoredMatch]:
    """Return ``count`` seeded results, each a row as the referee would store it."""
    rng = random.Random(seed)
    names = [f"bot-{n:02d}" for n in range(bots)]
    played = [samples(s, seed) for s in SEATINGS]
    weights = [s.weight for s in SEATINGS]
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    matches = []
    for number in range(count):
        kind = rng.choices(range(len(SEATINGS)), weights)[0]
        seating = SEATINGS[kind]
        sample = rng.choice(played[kind])
        seats = tuple(rng.sample(names, len(seating.side_of_seat)))
        match = result_row(
            rng,
            seating,
            sample,
            seats,
            id=f"bench-{number:07d}",
            created=start + dt.timedelta(seconds=30 * number),
        )
        matches.append(match)
    return matches


@dataclass(frozen=True, slots=True)
class PoolTimes:
    """How long one pool's standings took to recompute from its games, and to read."""

    pool: str
    games: int
    """Bot-games: the ``games`` of every bot of the pool, so a 3-seat game counts 3."""
    bots: int
    recompute: float
    read: float


@dataclass(frozen=True, slots=True)
class BackendResult:
    """One database's figures, with the machine's load averages before and after."""

    backend: str
    path: str
    results: int
    store_seconds: float
    pools: list[PoolTimes]
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]


class MismatchError(Exception):
    """The recomputed standings of a pool differ from the stored ones."""


Progress = Callable[[int], None]


def store_single(storage: RatedStorage, matches: Sequence[StoredMatch], progress: Progress) -> None:
    """Store each match in its own transaction (``RatedStorage.save_match``)."""
    for number, match in enumerate(matches, 1):
        if not storage.save_match(match):
            raise RuntimeError(f"match {match.id} was refused as stored already")
        progress(number)


def store_batch(
    storage: RatedStorage, matches: Sequence[StoredMatch], progress: Progress, in_flight: int
) -> None:
    """Store the matches through the ladder writer, ``in_flight`` saves waiting at most."""
    writer = Writer(storage)
    stored = 0

    async def save(match: StoredMatch, limit: trio.Semaphore) -> None:
        nonlocal stored
        try:
            if not await writer.save_match(match):
                raise RuntimeError(f"match {match.id} was refused as stored already")
        finally:
            limit.release()
        stored += 1
        progress(stored)

    async def main() -> None:
        limit = trio.Semaphore(in_flight)
        async with trio.open_nursery() as nursery:
            for match in matches:
                await limit.acquire()
                nursery.start_soon(save, match, limit)

    trio.run(main)
    print(f"  {len(matches):,} stored in {writer.batches:,} transactions", file=sys.stderr)


def run_backend(
    backend: str,
    storage: RatedStorage,
    matches: Sequence[StoredMatch],
    pools: Sequence[str],
    *,
    path: str,
    in_flight: int = IN_FLIGHT,
) -> BackendResult:
    """Store every match through ``storage`` by ``path``, then recompute and read every pool."""
    load_before = os.getloadavg()
    report_every = max(1, len(matches) // 10)
    began = time.perf_counter()

    def progress(number: int) -> None:
        if number % report_every == 0:
            elapsed = time.perf_counter() - began
            print(
                f"  {backend} {path}: {number:,} stored in {elapsed:.1f} s "
                f"({number / elapsed:,.0f}/s)",
                file=sys.stderr,
                flush=True,
            )

    if path == "single":
        store_single(storage, matches, progress)
    else:
        store_batch(storage, matches, progress, in_flight)
    store_seconds = time.perf_counter() - began
    times = []
    for pool in pools:
        began = time.perf_counter()
        recomputed = storage.recompute_ratings(pool)
        recompute = time.perf_counter() - began
        began = time.perf_counter()
        stored = storage.ratings(pool)
        read = time.perf_counter() - began
        if recomputed != stored:
            differ = sorted(
                b for b in recomputed.keys() | stored.keys() if recomputed.get(b) != stored.get(b)
            )
            raise MismatchError(
                f"{backend}: pool {pool}: recomputed standings differ from the stored ones "
                f"for {len(differ)} bot(s), e.g. {differ[:3]}"
            )
        games = sum(r.games for r in stored.values())
        times.append(PoolTimes(pool, games, len(stored), recompute, read))
    return BackendResult(
        backend, path, len(matches), store_seconds, times, load_before, os.getloadavg()
    )


def print_result(result: BackendResult) -> None:
    count = result.results
    print(
        f"\n{result.backend}, {result.path} path: {count:,} results stored in "
        f"{result.store_seconds:.1f} s = "
        f"{count / result.store_seconds:,.0f} results/s "
        f"({1e3 * result.store_seconds / count:.2f} ms each); "
        f"load {_load(result.load_before)} -> {_load(result.load_after)}"
    )
    print(f"  {'pool':<10}{'bot-games':>10}{'bots':>6}{'recompute s':>13}{'read s':>9}")
    for pool in result.pools:
        print(
            f"  {pool.pool:<10}{pool.games:>10,}{pool.bots:>6}"
            f"{pool.recompute:>13.2f}{pool.read:>9.4f}"
        )
    recompute = sum(p.recompute for p in result.pools)
    read = sum(p.read for p in result.pools)
    print(f"  {'all':<10}{'':>10}{'':>6}{recompute:>13.2f}{read:>9.4f}   recompute == stored: yes")
    if count != ISSUE_RESULTS:
        scale = ISSUE_RESULTS / count
        print(
            f"  EXTRAPOLATED to {ISSUE_RESULTS:,} results (linear, a floor): store "
            f"{result.store_seconds * scale:.0f} s, recompute {recompute * scale:.1f} s"
        )


def _load(load: tuple[float, float, float]) -> str:
    return "/".join(f"{x:.1f}" for x in load)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--results",
        type=int,
        default=ISSUE_RESULTS,
        metavar="N",
        help=f"results to store (default {ISSUE_RESULTS:,})",
    )
    parser.add_argument(
        "--backend", choices=("sqlite", "postgresql", "both"), default="both", help="(both)"
    )
    parser.add_argument(
        "--path",
        choices=("single", "batch", "both"),
        default="batch",
        help="one transaction per result, the ladder writer's group commit, or both (batch)",
    )
    parser.add_argument(
        "--in-flight",
        type=int,
        default=IN_FLIGHT,
        metavar="M",
        help=f"batch path: finished games waiting for the writer at most (default {IN_FLIGHT})",
    )
    parser.add_argument("--bots", type=int, default=20, metavar="K", help="bots (default 20)")
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="seed (default 1)")
    parser.add_argument(
        "--postgres-url", default=POSTGRES_URL, metavar="URL", help=f"(default {POSTGRES_URL})"
    )
    args = parser.parse_args(argv)
    if args.results < 1:
        parser.error(f"--results: expected at least 1, got {args.results}")
    if args.in_flight < 1:
        parser.error(f"--in-flight: expected at least 1, got {args.in_flight}")
    if args.bots < max(len(s.side_of_seat) for s in SEATINGS):
        parser.error(f"--bots: expected at least 4 (the largest table), got {args.bots}")
    print(
        f"{os.cpu_count()} CPUs, load {_load(os.getloadavg())}; generating {args.results:,} "
        f"results for {args.bots} bots (seed {args.seed})",
        flush=True,
    )
    matches = generate(args.results, args.bots, args.seed)
    pools = sorted({s.game for s in SEATINGS})
    backends = ("sqlite", "postgresql") if args.backend == "both" else (args.backend,)
    paths = ("single", "batch") if args.path == "both" else (args.path,)
    try:
        for backend in backends:
            results = [
                run_one(
                    backend,
                    matches,
                    pools,
                    path=path,
                    postgres_url=args.postgres_url,
                    in_flight=args.in_flight,
                )
                for path in paths
            ]
            for result in results:
                print_result(result)
            if len(results) == 2:
                single, batch = results
                print(
                    f"  {backend}: batch stores {single.store_seconds / batch.store_seconds:.1f}x "
                    f"as fast as single; store + recompute "
                    f"{_total(single):.1f} s -> {_total(batch):.1f} s"
                )
    except Exception as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


def _total(result: BackendResult) -> float:
    return result.store_seconds + sum(p.recompute for p in result.pools)


def sqlite_settings(storage: RatedStorage) -> str:
    """The settings of the store's SQLite connections that its write speed hangs on."""
    with storage.engine.connect() as connection:
        values = {
            name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()
            for name in ("journal_mode", "synchronous", "page_size", "wal_autocheckpoint")
        }
    return ", ".join(f"{name}={value}" for name, value in values.items())


def run_one(
    backend: str,
    matches: Sequence[StoredMatch],
    pools: Sequence[str],
    *,
    path: str,
    postgres_url: str,
    in_flight: int,
) -> BackendResult:
    """Run ``path`` on a fresh database of ``backend``."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="ladder-bench-") as folder:
            storage = RatedStorage(f"sqlite:///{Path(folder) / 'ladder.db'}")
            storage.open()
            print(f"  sqlite: {sqlite_settings(storage)}", file=sys.stderr)
            try:
                return run_backend(backend, storage, matches, pools, path=path, in_flight=in_flight)
            finally:
                storage.close()
    storage = RatedStorage(postgres_url, schema=f"ladder_bench_{uuid.uuid4().hex[:12]}")
    print(f"  {display_url(postgres_url)}, schema {storage.schema}", file=sys.stderr)
    storage.open()
    try:
        return run_backend(backend, storage, matches, pools, path=path, in_flight=in_flight)
    finally:
        storage.drop()
        storage.close()


if __name__ == "__main__":
    sys.exit(main())
