"""A cluster's ladder outlives its match host: killed mid-ladder, another host takes it over.

Two match hosts, two gateways and four house bots (tests/fakes/cluster.py) on PostgreSQL and
NATS; a Passing ladder started through host-a's admin API, which stores its settings beside
the pool's lease (docs/cluster.md: ladders taken over). host-a is SIGKILLed once it stored a
few ladder games, some running: its lease expires (``--lease-seconds 3``) and host-b claims
it at its next renewal, runs the ladder from the stored settings (ListLadders on host-b lists
it) and stores new games. The games host-a was playing are void: never stored, never rated;
every stored game is rated exactly once. StopLadder through host-b ends it for good.

The waits are on the processes' lines ("match ended", "ladder taken over"), never on a
timer; the timeouts only bound a failure.
"""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path
from typing import Final

import grpc
import sqlalchemy as sa

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire.games import game_to_proto
from domino_arena.server.net.wire import time_control_to_proto
from domino_arena.server.store.tables import MATCHES, RATED_GAMES, RATING_HISTORY
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from tests.fakes.cluster import ADMIN_TOKEN, BOTS, WAIT, Cluster, cluster, match_of
from tests.fakes.cluster_play import GATEWAYS, HOSTS, PREFERRED, TIME_CONTROL, referee_of

LEASE_SECONDS: Final = 3.0
BEFORE: Final = 3
"""Ladder games host-a stores before it is killed."""
AFTER: Final = 3
"""Ladder games host-b stores after it took the ladder over."""
AUTH: Final = (("authorization", f"Bearer {ADMIN_TOKEN}"),)


def admin(arena: Cluster, node: str) -> tuple[grpc.Channel, admin_pb_grpc.AdminServiceStub]:
    """A channel to ``node``'s admin API and its stub (close the channel after use)."""
    channel = grpc.insecure_channel(f"127.0.0.1:{arena.ports[node]}")
    return channel, admin_pb_grpc.AdminServiceStub(channel)


def ladder_ids(lines: list[str], fragment: str) -> set[str]:
    """The ladder matches named in the ``fragment`` lines (``match started``/``ended``)."""
    return {match_of(line) for line in lines if fragment in line and "id=ladder-" in line}


def test_a_killed_hosts_ladder_is_taken_over_and_no_game_is_rated_twice(
    tmp_path: Path,
) -> None:
    with cluster(tmp_path, lease_seconds=LEASE_SECONDS) as arena:
        arena.start(HOSTS, GATEWAYS)
        owner, standby = HOSTS
        channel, stub = admin(arena, owner)
        with channel:
            stub.StartLadder(
                admin_pb.StartLadderRequest(
                    game=game_to_proto(make_game("passing", players=2)),
                    time_control=time_control_to_proto(TIME_CONTROL),
                    concurrency=2,
                    seed=11,
                ),
                metadata=AUTH,
                timeout=WAIT,
            )
        arena.bots(PREFERRED)
        dead = arena.hosts[owner]
        for _ in range(BEFORE):
            dead.wait_line("match ended: id=ladder-", context=arena.processes)
        # random-1 (frozen) is in a game of host-a's that cannot end without it: the kill
        # leaves a game running (that one, unless its last move was on its way already: then
        # the other table's).
        with arena.frozen("random-1", owner):
            dead.popen.send_signal(signal.SIGKILL)
            dead.popen.wait(WAIT)
        started_dead = ladder_ids(list(dead.lines), "match started: id=")
        ended_dead = ladder_ids(list(dead.lines), "match ended: id=")

        taking = arena.hosts[standby]
        line = taking.wait_line("ladder taken over: course=default game=passing")
        assert f"from={owner}" in line, line
        for _ in range(AFTER):
            taking.wait_line("match ended: id=ladder-", context=arena.processes)
        channel, stub = admin(arena, standby)
        with channel:
            listed = stub.ListLadders(admin_pb.ListLaddersRequest(), metadata=AUTH, timeout=WAIT)
            assert [(ladder.course, ladder.seed) for ladder in listed.ladders] == [("default", 11)]
            stub.StopLadder(admin_pb.StopLadderRequest(game="passing"), metadata=AUTH, timeout=WAIT)
        taking.wait_line("ladder stopped: course=default game=passing", context=arena.processes)

        with arena.storage.engine.connect() as connection:
            stored = (
                connection.execute(sa.select(MATCHES.c.id).where(MATCHES.c.id.like("ladder-%")))
                .scalars()
                .all()
            )
            rated = connection.execute(sa.select(RATED_GAMES.c.match_id)).scalars().all()
            history = Counter(connection.execute(sa.select(RATING_HISTORY.c.bot)).scalars().all())
            remaining = connection.execute(sa.text("SELECT count(*) FROM ladders")).scalar_one()
        assert remaining == 0, "a stopped ladder's settings were kept"
        # Every stored ladder game is rated exactly once, and nothing else is.
        assert sorted(rated) == sorted(set(stored)) == sorted(stored)
        hosts = Counter(
            referee_of(match)["host"] for match in map(arena.storage.match, stored) if match
        )
        assert hosts[owner] >= BEFORE and hosts[standby] >= AFTER, hosts
        # What host-a stored is what it logged as ended; the games it was playing are void.
        assert ended_dead <= set(stored)
        void = started_dead - ended_dead
        assert void, "no game was running on host-a when it died"
        assert not void & set(stored), (void, stored)
        # Each bot's rating moved once per game it played (one history point per rated game).
        ratings = arena.storage.ratings("passing")
        for bot in BOTS:
            assert ratings[bot].games == history[bot], (bot, ratings[bot], history[bot])
        assert sum(history.values()) == 2 * len(stored)
