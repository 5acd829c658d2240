"""Server time of every web page and its JSON twin over a database of 100,000 stored matches.

Usage::

    python -m bench.web_pages [--matches N] [--bots K] [--runs R] [--seed S]
                              [--db URL] [--keep PATH]

The issue's floor: with 100,000 stored matches every page and API call answers in under 100 ms
of server time (median), paginated. The script fills a database, then asks the web face
(``server/web/app.py``'s ``create_app`` over a ``RatedStorage``) for every page in-process
through Starlette's ``TestClient`` (no socket: the time is the application's, plus the
client's few hundred microseconds) ``--runs`` times, and prints per route the first (cold)
time, the median and the 90th percentile, flagging a median over 100 ms with ``OVER``. It
exits 1 only on an error (a page that does not answer 200), never because a figure is high.

The fill (``--matches``, 100,000 by default) has K bots (75) in the ladder's seatings (Passing
with 2 seats and with 4 in partnerships, Straight, Doubles, Moon), three tournaments (one big: a
duplicate Passing round robin of 50 entrants, 4 games per pairing, each deal under both
rotations, 9,800 games; two of 6 entrants) from the real scheduler (``schedule_of``), about 3%
forfeits and 1% voids. Each row copies scores, winner and record from one of a few real games of
greedy house bots, so rows are the size the referee writes. Rows go in bulk, through the
storage's own tables and row builders (``matches.match_row`` and ``seat_rows``: what ``save``
inserts), in batches; the ratings, ``rated_games`` and ``rating_history`` are what the ladder
would have written, computed by replaying :func:`elo.rate_game` over the rated games in order
(the ladder's own arithmetic), then checked against ``RatedStorage.recompute_ratings``. One
``save_match`` per row (the referee's path, ``bench/ladder_bench.py``) would take half an hour.

``--db`` is a SQLAlchemy URL, e.g. ``postgresql://postgres@127.0.0.1:5432/test``, whose tables
go in ``--schema`` (``web_bench``; kept, and reused on the next run when it holds matches:
``DROP SCHEMA web_bench CASCADE`` to start again); without it a SQLite file in a temporary
folder. ``--keep PATH`` keeps the SQLite file at PATH and, when it holds matches, reuses it
without filling. The machine's load is printed before and after.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa
from starlette.testclient import TestClient

from bench.ladder_bench import SEATINGS, result_row, samples
from domino_arena.sdk.rules import GAMES, make_game
from domino_arena.server.ladder import elo
from domino_arena.server.ladder.ratings_store import RatedStorage, rated_game_of
from domino_arena.server.store.bots import hash_token
from domino_arena.server.store.matches import StoredMatch, match_row, seat_rows
from domino_arena.server.store.tables import (
    BOTS,
    MATCH_SEATS,
    MATCHES,
    RATED_GAMES,
    RATING_HISTORY,
    RATINGS,
)
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle import deal_seed, games_of, schedule_of
from domino_arena.server.web.app import create_app

FLOOR_MS: Final = 100.0
SAMPLE_GAMES: Final = 3
BATCH: Final = 2_000
FORFEIT_SHARE: Final = 0.03
VOID_SHARE: Final = 0.01
START: Final = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
BIG: Final = "big-cup"


def a_tournament(tid: str, entrants: Sequence[str], games_per_pairing: int) -> StoredTournament:
    return StoredTournament(
        id=tid,
        name=f"The {tid}",
        game="passing",
        options=make_game("passing", players=2).options(),
        entrants=tuple(entrants),
        games_per_pairing=games_per_pairing,
        deals="duplicate",
        time_control_ms=(1000, 10000, 250),
        fault_policy="substitute",
        max_strikes=3,
        concurrency=8,
        wait_seconds=30.0,
        seed=7,
        rated=True,
        state=TournamentState.FINISHED,
        created=START,
        updated=START,
    )


def generate(
    count: int, names: Sequence[str], cups: Sequence[StoredTournament], seed: int
) -> list[StoredMatch]:
    """Return ``count`` seeded rows: every game of ``cups`` (their schedules), the rest loose,
    each big tournament's games one block in the middle of the timeline."""
    rng = random.Random(seed)
    played = [samples(s, seed, SAMPLE_GAMES) for s in SEATINGS]
    weights = [s.weight for s in SEATINGS]
    rows: list[StoredMatch] = []

    def row(kind: int, seats: tuple[str, ...], **fields: Any) -> StoredMatch:
        return result_row(rng, SEATINGS[kind], rng.choice(played[kind]), seats, **fields)

    cup_rows: list[StoredMatch] = []
    for cup in cups:
        for g in schedule_of(cup):
            cup_rows.append(
                row(
                    0,
                    g.seats,
                    tournament_id=cup.id,
                    game_index=g.index,
                    deal_id=g.deal_id,
                    rotation=g.rotation,
                )
            )
            cup_rows[-1] = dataclasses.replace(cup_rows[-1], seed=deal_seed(cup, g.deal_id))
    loose = count - len(cup_rows)
    for _ in range(loose):
        kind = rng.choices(range(len(SEATINGS)), weights)[0]
        rows.append(row(kind, tuple(rng.sample(names, len(SEATINGS[kind].side_of_seat)))))
    middle = len(rows) // 2
    ordered = rows[:middle] + cup_rows + rows[middle:]
    return [
        dataclasses.replace(m, id=f"m-{n:07d}", created=START + dt.timedelta(seconds=30 * n))
        for n, m in enumerate(ordered)
    ]


def fill(storage: RatedStorage, matches: Sequence[StoredMatch], names: Sequence[str]) -> None:
    """Write the bots, the matches with their seats, and what the ladder would have written."""
    token_hash = hash_token("bench-token")
    with storage.engine.begin() as connection:
        connection.execute(
            BOTS.insert(),
            [
                {"name": n, "token_hash": token_hash, "created": START, "token_issued": START}
                for n in names
            ],
        )
    ratings: dict[str, dict[str, elo.Rating]] = {}
    seq = 0
    for start in range(0, len(matches), BATCH):
        batch = matches[start : start + BATCH]
        rated, history = [], []
        for m in batch:
            if not m.moves_ratings:
                continue
            seq += 1
            pool = ratings.setdefault(m.game, {})
            changed = elo.rate_game(pool, rated_game_of(m))
            pool.update(changed)
            rated.append({"seq": seq, "pool": m.game, "match_id": m.id})
            history += [
                {"seq": seq, "bot": b, "pool": m.game, "rating": r.rating}
                for b, r in changed.items()
            ]
        with storage.engine.begin() as connection:
            connection.execute(MATCHES.insert(), [match_row(m) for m in batch])
            connection.execute(MATCH_SEATS.insert(), [r for m in batch for r in seat_rows(m)])
            if rated:
                connection.execute(RATED_GAMES.insert(), rated)
                connection.execute(RATING_HISTORY.insert(), history)
        print(f"  {start + len(batch):,} stored", file=sys.stderr, end="\r", flush=True)
    with storage.engine.begin() as connection:
        connection.execute(
            RATINGS.insert(),
            [
                {"pool": pool, "bot": bot, **_values(r)}
                for pool, by_bot in ratings.items()
                for bot, r in by_bot.items()
            ],
        )
        if connection.dialect.name == "postgresql":
            connection.execute(
                sa.text("SELECT setval(pg_get_serial_sequence('rated_games', 'seq'), :s)"),
                {"s": seq},
            )
        else:
            connection.execute(sa.text("ANALYZE"))
    print(file=sys.stderr)


def _values(r: elo.Rating) -> dict[str, Any]:
    return {
        "rating": r.rating,
        "games": r.games,
        "wins": r.wins,
        "draws": r.draws,
        "losses": r.losses,
        "faults": r.faults,
        "information": r.information,
    }


def routes(storage: RatedStorage) -> list[str]:
    """Every page the benchmark asks for (each also under /api)."""
    busiest = max(storage.ratings("passing").items(), key=lambda kv: kv[1].games)[0]
    [replayed] = storage.matches(1, game="moon", offset=50, records=False)
    total = storage.tournament_game_count(BIG)
    pages = [
        "/",
        *(f"/games/{g}/standings" for g in GAMES),
        "/games/passing/standings?page=2",
        "/games/passing/standings?sort=games",
        "/games/passing/standings?sort=interval&per_page=100",
        "/games/passing/standings?players=4",
        "/games/passing/standings?players=2&sort=games",
        "/tournaments",
        f"/tournaments/{BIG}",
        f"/tournaments/{BIG}?page={max(1, total // 50)}",
        f"/tournaments/{BIG}?deals_page=20&per_page=100",
        f"/bots/{busiest}",
        "/matches",
        "/matches?game=moon",
        f"/matches?bot={busiest}",
        f"/matches?bot={busiest}&game=straight",
        f"/matches?tournament={BIG}",
        "/matches?page=400",
        "/matches?page=900&per_page=100",
        f"/matches?bot={busiest}&page=40",
        f"/matches/{replayed.id}?step=10",
        f"/matches/{replayed.id}",
    ]
    return [p for page in pages for p in (page, "/api" + page)]


def run(client: TestClient, paths: Sequence[str], runs: int) -> list[tuple[str, list[float]]]:
    """Time each path ``runs`` times (plus the first, cold, call listed first)."""
    timed = []
    for path in paths:
        times = []
        for _ in range(runs + 1):
            began = time.perf_counter()
            answer = client.get(path)
            times.append(1e3 * (time.perf_counter() - began))
            if answer.status_code != 200:
                raise RuntimeError(f"{path}: status {answer.status_code}: {answer.text[:300]}")
        timed.append((path, times))
    return timed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--matches", type=int, default=100_000, metavar="N")
    parser.add_argument("--bots", type=int, default=75, metavar="K")
    parser.add_argument("--runs", type=int, default=20, metavar="R", help="timed calls per page")
    parser.add_argument("--seed", type=int, default=1, metavar="S")
    parser.add_argument("--db", metavar="URL", help="a SQLAlchemy URL (default: a SQLite file)")
    parser.add_argument("--keep", type=Path, metavar="PATH", help="keep/reuse the SQLite file")
    parser.add_argument(
        "--schema",
        default="web_bench",
        help="PostgreSQL: the schema to fill (created if missing; reused when filled)",
    )
    args = parser.parse_args(argv)
    folder = tempfile.TemporaryDirectory()
    path = args.keep or Path(folder.name) / "web-bench.db"
    url = args.db or f"sqlite:///{path}"
    postgres = url.startswith("postgresql")
    print(f"{os.cpu_count()} CPUs, load {_load()}; database {url.split('@')[-1]}")
    storage = RatedStorage(url, schema=args.schema if postgres else None)
    began = time.perf_counter()
    storage.open()
    reuse = bool(storage.matches(1, records=False))
    if not reuse:
        names = [f"bot-{n:02d}" for n in range(args.bots)]
        cups = [
            a_tournament(BIG, names[:50], 4),
            a_tournament("small-a", names[50:56], 2),
            a_tournament("small-b", names[60:66], 2),
        ]
        matches = generate(args.matches, names, cups, args.seed)
        print(f"generated {len(matches):,} rows in {time.perf_counter() - began:.1f} s")
        for cup in cups:
            storage.add_tournament(cup)
        fill(storage, matches, names)
        for pool in storage.pools():
            if storage.recompute_ratings(pool) != storage.ratings(pool):
                raise RuntimeError(f"pool {pool}: the filled ratings are not the ladder's")
        print(f"filled in {time.perf_counter() - began:.1f} s (ratings == the ladder's replay)")
    else:
        print(f"reusing the filled database ({args.schema if postgres else path})")
    stored = storage.matches(1, records=False)
    client = TestClient(create_app(storage, tournament_total=lambda t: len(games_of(t, storage))))
    print(f"timing {args.runs} calls per page; load {_load()}")
    timed = run(client, routes(storage), args.runs)
    width = max(len(p) for p, _ in timed)
    print(f"\n{'route':<{width}} {'first ms':>9} {'median':>8} {'p90':>8}")
    over = 0
    for p, times in timed:
        warm = sorted(times[1:])
        median = statistics.median(warm)
        p90 = warm[min(len(warm) - 1, int(0.9 * len(warm)))]
        flag = "  OVER" if median > FLOOR_MS else ""
        over += bool(flag)
        print(f"{p:<{width}} {times[0]:>9.1f} {median:>8.1f} {p90:>8.1f}{flag}")
    print(
        f"\n{len(timed)} routes, {over} with a median over {FLOOR_MS:.0f} ms; "
        f"newest match {stored[0].id if stored else None}; load {_load()}"
    )
    storage.close()
    folder.cleanup()
    return 0


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
