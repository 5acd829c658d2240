"""A scaled-out arena as separate processes: two match hosts, two gateways, four house bots.

Every process is a ``domino-arena`` subprocess (``serve --role host|gateway``, ``bot run``) on
the machine's NATS (nats://127.0.0.1:4222, under a cluster name of this test's own) and a
PostgreSQL database of its own (tests/fakes/cluster.py). Two bots dial gateway ``gw-a`` first,
the other two ``gw-b``, so every match seats bots that came through different gateways.

Two tournaments run at once, one on each host: the first (all four bots) is stored RUNNING
before both hosts start together, so they race for its lease at start and exactly one must win
it; the second (two bots, one on each gateway) is started through the other host's admin API,
which leases it to that host. Both must end with
every game stored exactly once, each record replaying and naming, in its header, the host
that ran it and the gateway of each seat's stream; and every log record of every role names
its node. The waits are on the processes' output lines, never on a timer.

The test runs twice: on the machine's NATS, and on a broker of its own that requires mutual TLS
and an nkey (tests/fakes/secure_nats.py), which every role dials with ``--nats tls://...`` and
the ``--nats-*`` files, as a deployment does (docs/cluster.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from domino_arena.server.store.tournaments import TournamentState
from tests.fakes.cluster import cluster
from tests.fakes.cluster_play import (
    GATEWAYS,
    HOSTS,
    PREFERRED,
    charged,
    referee_of,
    stored_once,
    tournament,
)
from tests.fakes.secure_nats import secure_nats


@pytest.fixture(params=["machine", "tls-nkey"])
def broker(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The cluster's settings of its broker: the machine's NATS, or a secured one."""
    with ExitStack() as stack:
        if request.param == "machine":
            yield {}
            return
        secured = stack.enter_context(secure_nats(tmp_path, "nkey"))
        yield {"nats": secured.url, "nats_flags": secured.flags()}


def test_bots_on_two_gateways_play_two_hosts_tournaments_each_game_stored_once(
    tmp_path: Path, broker: dict[str, Any]
) -> None:
    with cluster(tmp_path, **broker) as arena:
        first, first_total = tournament(arena.storage, seed=7)
        pair = ("random-1", "random-3")  # one on each gateway
        second, second_total = tournament(
            arena.storage, entrants=pair, seed=8, state=TournamentState.CREATED
        )
        arena.start(HOSTS, GATEWAYS)
        if broker:  # every role, serving, said how it dials the broker
            for role in (*arena.hosts.values(), *arena.gateways.values()):
                said = f"on the broker {broker['nats']} (mutual TLS, nkey)"
                assert any(said in line for line in role.lines), role
        # Both hosts found the first one RUNNING at their start: the lease gives it to one.
        owner, _ = arena.first_line(f"tournament running: id={first.id}", arena.hosts)
        (other,) = set(HOSTS) - {owner}
        arena.start_tournament(other, second.id)
        arena.bots(PREFERRED)
        for node in HOSTS:
            for _ in PREFERRED:  # every host sees every bot, through its own gateway
                line = arena.hosts[node].wait_line("bot connected: name=", context=arena.processes)
                name = line.split("name=", 1)[1].split()[0]
                assert f"gateway='{PREFERRED[name][0]}'" in line, line
        runs = {owner: first.id, other: second.id}
        for node, tournament_id in runs.items():
            arena.hosts[node].wait_line(
                f"tournament finished: id={tournament_id}", context=arena.processes
            )

        for node, tournament_id in runs.items():
            (elsewhere,) = set(HOSTS) - {node}  # no host played the other's tournament
            assert not [
                line for line in arena.hosts[elsewhere].lines if f"id={tournament_id}" in line
            ]
        for node in (*HOSTS, *GATEWAYS):
            records = arena.records_of(node)
            assert records, node
            assert all(line.endswith(f" node='{node}'") for line in records), records

        for (tournament_id, total), node in zip(
            ((first.id, first_total), (second.id, second_total)), (owner, other), strict=True
        ):
            for match in stored_once(arena.storage, tournament_id, total):
                assert match.termination == "normal", (match.id, match.detail)
                assert charged(match) == [], match.id
                gateways = [[PREFERRED[seat][0]] for seat in match.seats]
                assert referee_of(match) == {"host": node, "gateways": gateways}, match.id
