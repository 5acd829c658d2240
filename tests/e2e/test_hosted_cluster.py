"""Hosted bots on a scaled-out arena: runners of their own beside a gateway and a match host
(docs/hosting.md, "On a cluster").

Two runners (``serve --role runner``, each hosting at most two bots) dial the gateway as the
hosted bots' remote clients; the ownership leases in PostgreSQL share the four bots between
them, and the host plays a round robin of them (two Python submissions, two stdio programs)
with every game stored once and nobody faulted. Then one runner is killed: its sandboxes die
with it, its leases expire, and a runner started after takes its bots over.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Final

import pytest

from domino_arena.server.store import ownership
from domino_arena.server.store.bots import create_bot
from domino_arena.server.store.tournaments import TournamentState
from tests.fakes.cluster import WAIT, Cluster, cluster
from tests.fakes.cluster_play import charged, stored_once, tournament
from tests.fakes.hosted import PYTHON_BOT, STDIO_BOT, polled, store_version

HOSTED: Final = ("py-1", "py-2", "io-3", "io-4")
LEASE_SECONDS: Final = 4.0

pytestmark = pytest.mark.skipif(
    not Path("/usr/bin/bwrap").exists(), reason="bubblewrap is not installed"
)


def leases(arena: Cluster) -> dict[str, str]:
    """Which runner holds each hosted bot's lease now: bot -> node."""
    return {
        owner.key.removeprefix("hosted:"): owner.node
        for owner in ownership.owners(arena.storage.engine)
        if owner.key.startswith("hosted:")
    }


def wait_leases(arena: Cluster, nodes: set[str]) -> dict[str, str]:
    """Wait until every hosted bot's lease is held by one of ``nodes``."""
    return polled(
        lambda: leases(arena),
        lambda held: set(held) == set(HOSTED) and set(held.values()) <= nodes,
        lambda held: f"leases {held}, wanted all on {nodes}",
        wait=WAIT,
    )


def test_runners_share_the_hosted_bots_by_lease_and_a_dead_ones_bots_move(
    tmp_path: Path,
) -> None:
    with cluster(tmp_path, lease_seconds=LEASE_SECONDS) as arena:
        engine = arena.storage.engine
        for name in HOSTED:
            create_bot(engine, name)
            python = name.startswith("py")
            store_version(
                engine,
                tmp_path,
                name,
                {"bot.py": PYTHON_BOT if python else STDIO_BOT},
                command=None if python else "python3 bot.py",
                games=("passing",),
            )
        t, total = tournament(arena.storage, entrants=HOSTED, state=TournamentState.CREATED)
        arena.start(["host-a"], ["gw-a"])
        arena.start_runners(["runner-1", "runner-2"], ["gw-a"], max_hosted=2)
        held = wait_leases(arena, {"runner-1", "runner-2"})
        assert Counter(held.values()) == {"runner-1": 2, "runner-2": 2}, held
        for _ in HOSTED:
            arena.hosts["host-a"].wait_line("bot connected: name=", context=arena.processes)

        arena.start_tournament("host-a", t.id)
        arena.hosts["host-a"].wait_line(f"tournament finished: id={t.id}", context=arena.processes)
        for match in stored_once(arena.storage, t.id, total):
            assert match.termination == "normal", (match.id, match.detail)
            assert charged(match) == [], match.id

        moved = sorted(bot for bot, node in held.items() if node == "runner-1")
        arena.runners["runner-1"].stop()  # SIGKILL: no release, its leases expire
        arena.start_runners(["runner-3"], ["gw-a"], max_hosted=2)
        now_held = wait_leases(arena, {"runner-2", "runner-3"})
        assert sorted(b for b, node in now_held.items() if node == "runner-3") == moved
