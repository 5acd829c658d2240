"""A scaled-out arena's failures, each mid-tournament, with nothing lost or counted twice.

The cluster is made of ``domino-arena`` subprocesses (tests/fakes/cluster.py): match hosts and
gateways (``serve --role``) on NATS and on a PostgreSQL database of the test's own, and four
house bots (``bot run``) that dial the gateways as one gRPC target, each preferring one. A
small round robin is stored RUNNING before the hosts start (a host takes it up at its start,
as after a crash). Each test breaks one thing while games are being played and stored:

- a match host is killed (SIGKILL): its tournament's lease expires (``--lease-seconds 3``) and
  the other host, which did not play it so far, takes the tournament over and finishes it;
- a gateway is killed (SIGKILL) while one of its bots is in a match: its bots reconnect
  through the other gateway and keep their seats, no seat is charged a fault, and the match
  record lists both gateways for that bot's seat;
- the broker restarts: a private ``nats-server`` on a reserved port (never the machine's,
  which other tests use meanwhile) is killed and started again on the same port. Who is back
  on it first is set with a TCP proxy (tests/fakes/tcp_proxy.py) held cut in front of one
  process: the host last, then a gateway last (the seats the host resumed at its return were
  lost on the way to a gateway not back yet: they resume again when the gateway says it is);
- the database is unreachable for a while: the hosts reach PostgreSQL through a TCP proxy
  that is cut until the writer has failed twice, then restored;
- a role whose broker is not there at all exits 1 naming it, instead of hanging.

A bot frozen with SIGSTOP in a running match (:meth:`~tests.fakes.cluster.Cluster.frozen`)
makes sure a match is under way when something breaks: it cannot end without the bot.

Each one ends with the tournament finished and every game of its schedule stored exactly once,
each record replaying. The waits are on the processes' output lines (the bot's "match ...
started", the host's "match ended", "tournament taken over", "broker connection back"),
never on a timer; the timeouts only bound a failure.
"""

from __future__ import annotations

import signal
import subprocess
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import pytest
from sqlalchemy.engine import make_url

from domino_arena.server.store.matches import StoredMatch
from tests.fakes.cluster import WAIT, Cluster, cluster, private_nats
from tests.fakes.cluster_play import (
    GATEWAYS,
    HOSTS,
    PREFERRED,
    charged,
    referee_of,
    stored_once,
    tournament,
)
from tests.fakes.processes import Process, command, reserved_port
from tests.fakes.tcp_proxy import TcpProxy

BEFORE: Final = 3
"""Games a host stores before the failure (of the tournament's 12)."""
LEASE_SECONDS: Final = 3.0
GIVE_UP: Final = 30.0
"""Seconds a role whose broker is not there may take to exit (it gives up after 5 s)."""


def play_until_stored(arena: Cluster, host: str, games: int = BEFORE) -> None:
    """Start the bots and return once ``host`` stored ``games`` games (it logs each one)."""
    arena.bots(PREFERRED)
    for _ in range(games):
        arena.hosts[host].wait_line("match ended: id=", context=arena.processes)


def clean(matches: list[StoredMatch]) -> None:
    """Check that every game ended normally and charged no seat a fault."""
    for match in matches:
        assert match.termination == "normal", (match.id, match.detail)
        assert charged(match) == [], match.id


@pytest.mark.parametrize("format", ["round-robin", "swiss", "knockout"])
def test_a_killed_hosts_tournament_is_taken_over_by_the_other_host_each_game_once(
    tmp_path: Path, format: str
) -> None:
    """Both hosts find the tournament RUNNING at their start; one wins its lease and plays
    it alone. Killed after some games, its lease expires and the other host takes the
    tournament over: the games stored before the kill stay the dead host's, the game that
    was running is played again from its start, the rest are the new owner's. A Swiss or
    knockout round the dead host stored is finished by the new owner, never seated again."""
    with cluster(tmp_path, lease_seconds=LEASE_SECONDS) as arena:
        t, total = tournament(arena.storage, format=format)
        arena.start(HOSTS, GATEWAYS)
        owner, _ = arena.first_line(f"tournament running: id={t.id}", arena.hosts)
        (standby,) = set(HOSTS) - {owner}
        play_until_stored(arena, owner)
        # Exactly one host plays it: the other one never started a game of it.
        assert not [line for line in arena.hosts[standby].lines if f"id={t.id}" in line]
        dead = arena.hosts[owner]
        dead.popen.send_signal(signal.SIGKILL)
        dead.popen.wait(WAIT)
        before = arena.storage.tournament_game_indexes(t.id)
        assert BEFORE <= len(before) < total, "the tournament ended before the kill"
        seated = arena.storage.tournament_rounds(t.id)

        taking = arena.hosts[standby]
        line = taking.wait_line(f"tournament taken over: id={t.id}", context=arena.processes)
        assert f"from={owner}" in line, line
        taking.wait_line(f"tournament finished: id={t.id}", context=arena.processes)

        matches = stored_once(arena.storage, t.id, total)
        clean(matches)
        hosts = {m.game_index: referee_of(m)["host"] for m in matches}
        assert {hosts[i] for i in before} == {owner}, hosts
        assert {h for i, h in hosts.items() if i not in before} == {standby}, hosts
        assert arena.storage.tournament_rounds(t.id)[: len(seated)] == seated


def test_a_killed_gateways_bots_keep_their_seats_through_the_other_gateway(
    tmp_path: Path,
) -> None:
    """gw-a dies while random-1, one of its bots, is in a match: random-1 and greedy-2
    reconnect through gw-b (the next address of their target) within the reconnect grace,
    the match resumes on the new stream, nobody is charged a fault, and the record lists
    both gateways for random-1's seat."""
    with cluster(tmp_path) as arena:
        t, total = tournament(arena.storage)
        arena.start(HOSTS[:1], GATEWAYS)
        host = arena.hosts[HOSTS[0]]
        arena.bots(PREFERRED)
        for _ in PREFERRED:  # both of gw-a's bots are on it when it dies
            host.wait_line("bot connected: name=", context=arena.processes)
        # random-1 (on gw-a) is frozen in a match that cannot end without it when gw-a dies.
        with arena.frozen("random-1", HOSTS[0]) as match_id:
            dead = arena.gateways["gw-a"]
            dead.popen.send_signal(signal.SIGKILL)
            dead.popen.wait(WAIT)
        frozen = arena.bot["random-1"]
        frozen.wait_line(f"match {match_id} resumed", context=arena.processes)
        host.wait_line(f"tournament finished: id={t.id}", context=arena.processes)
        for name in ("random-1", "greedy-2"):
            assert [
                line
                for line in host.lines
                if f"bot connected: name={name} " in line and "gateway='gw-b'" in line
            ], name

        matches = stored_once(arena.storage, t.id, total)
        clean(matches)  # the reconnections charged nobody a disconnect
        for match in matches:
            gateways = referee_of(match)["gateways"]
            for seat, seen in zip(match.seats, gateways, strict=True):
                assert seen in (["gw-a"], ["gw-b"], ["gw-a", "gw-b"]), (match.id, gateways)
                if PREFERRED[seat][0] == "gw-b":
                    assert seen == ["gw-b"], (match.id, gateways)
            if match.id == match_id:
                assert gateways[match.seats.index("random-1")] == ["gw-a", "gw-b"], gateways


def test_a_restarted_broker_loses_and_doubles_no_game(tmp_path: Path) -> None:
    """The broker dies and comes back on its address; the host is back on it after the
    gateways (its NATS connection goes through a proxy held cut until they are back), so
    the seats it resumes reach every bot (the other order is the next test's)."""
    with reserved_port() as port, TcpProxy(("127.0.0.1", port)) as held:
        broker = private_nats(port, tmp_path)
        try:
            with cluster(tmp_path, nats=f"nats://127.0.0.1:{port}") as arena:
                t, total = tournament(arena.storage)
                arena.start(HOSTS[:1], GATEWAYS, brokers={HOSTS[0]: held.url("nats")})
                host = arena.hosts[HOSTS[0]]
                play_until_stored(arena, HOSTS[0])
                broker = restart(arena, broker, port, held, list(arena.gateways.values()))
                assert len(arena.storage.tournament_game_indexes(t.id)) < total
                held.restore()
                host.wait_line("broker connection back", context=arena.processes)
                # A match that ran through the outage goes on where it was.
                arena.first_line(" resumed: ", arena.bot)
                host.wait_line(f"tournament finished: id={t.id}", context=arena.processes)
                clean(stored_once(arena.storage, t.id, total))
        finally:
            broker.stop()


def test_a_gateway_back_on_the_broker_after_its_host_gets_its_bots_seats_resumed(
    tmp_path: Path,
) -> None:
    """As the previous test, but gw-b is back on the broker after the host (its NATS
    connection held cut through a proxy until the host is back): random-3, on gw-b, frozen
    in a running match, must still get that match resumed once gw-b is back, and not be
    charged a timeout for the host's messages that went nowhere."""
    with reserved_port() as port, TcpProxy(("127.0.0.1", port)) as held:
        broker = private_nats(port, tmp_path)
        try:
            with cluster(tmp_path, nats=f"nats://127.0.0.1:{port}") as arena:
                t, total = tournament(arena.storage)
                arena.start(HOSTS[:1], GATEWAYS, brokers={"gw-b": held.url("nats")})
                host = arena.hosts[HOSTS[0]]
                play_until_stored(arena, HOSTS[0], games=1)
                with arena.frozen("random-3", HOSTS[0]) as match_id:
                    broker = restart(arena, broker, port, held, (host, arena.gateways["gw-a"]))
                    held.restore()
                    arena.gateways["gw-b"].wait_line("broker connection back")
                host.wait_line(f"tournament finished: id={t.id}", context=arena.processes)
                matches = stored_once(arena.storage, t.id, total)
                (frozen,) = [m for m in matches if m.id == match_id]
                assert charged(frozen) == [], "random-3's seat was never resumed"
                resumed = f"match {match_id} resumed"
                assert [line for line in arena.bot["random-3"].lines if resumed in line]
                clean(matches)
        finally:
            broker.stop()


def restart(
    arena: Cluster, broker: Process, port: int, held: TcpProxy, back: Sequence[Process]
) -> Process:
    """Kill the broker; once every role lost it, cut ``held`` (the processes dialling
    through it stay away), start a new broker on the same port, and return it once the
    processes ``back`` are on it again."""
    broker.popen.send_signal(signal.SIGKILL)
    broker.popen.wait(WAIT)
    for role in (*arena.hosts.values(), *arena.gateways.values()):
        role.wait_line("broker connection lost", context=arena.processes)
    held.cut()
    broker = private_nats(port, arena.cwd)
    for returned in back:
        returned.wait_line("broker connection back", context=arena.processes)
    return broker


def test_a_database_outage_delays_the_writes_and_loses_no_game(tmp_path: Path) -> None:
    """The hosts lose PostgreSQL while games end: the results wait in the writer, which
    retries (the host logs each failed try), and are stored once it is back; the lease (30
    s) outlives the outage, so the owner keeps the tournament."""
    with cluster(tmp_path) as arena:
        t, total = tournament(arena.storage)
        url = make_url(arena.db)
        assert url.host is not None and url.port is not None
        with TcpProxy((url.host, url.port)) as proxy:
            proxied = url.set(port=proxy.port).render_as_string(hide_password=False)
            arena.start(HOSTS, GATEWAYS[:1], host_db=proxied)
            owner, _ = arena.first_line(f"tournament running: id={t.id}", arena.hosts)
            arena.bots(dict.fromkeys(PREFERRED, GATEWAYS[:1]))
            for _ in range(BEFORE):
                arena.hosts[owner].wait_line("match ended: id=", context=arena.processes)
            proxy.cut()
            arena.hosts[owner].wait_line("not stored (try 2)", context=arena.processes)
            assert proxy.refused > 0  # the hosts knocked meanwhile
            assert len(arena.storage.tournament_game_indexes(t.id)) < total
            proxy.restore()
            arena.hosts[owner].wait_line(f"tournament finished: id={t.id}", context=arena.processes)
            matches = stored_once(arena.storage, t.id, total)
            clean(matches)
            assert {referee_of(m)["host"] for m in matches} == {owner}


@pytest.mark.parametrize("role", ["host", "gateway"])
def test_a_role_whose_broker_cannot_be_reached_exits_1_naming_it(tmp_path: Path, role: str) -> None:
    """A mistyped --nats must fail at once, not hang a deployment: nats-py would retry the
    first connection forever; the role gives up after its connect timeout."""
    with reserved_port() as port:  # bound, never listening: nobody answers there
        url = f"nats://127.0.0.1:{port}"
        args = ["serve", "--role", role, "--nats", url, "--port", "0"]
        args += ["--db", f"sqlite:///{tmp_path / 'arena.db'}", "--cluster", f"t-{uuid.uuid4()}"]
        done = subprocess.run(
            command(*args),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=GIVE_UP,
            check=False,
        )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert url in done.stderr, done.stderr
    assert "serving on" not in done.stdout
