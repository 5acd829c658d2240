"""Hosted bots on a scaled-out arena, for tests: :class:`HostedArena`'s interface over a match
host, a gateway and a runner of their own, each a ``domino-arena`` process on the machine's
NATS and a fresh PostgreSQL database (tests/fakes/cluster.py; docs/hosting.md: on a cluster).

The hostile tests run once on a single referee and once here: the bots, the raw opponents and
the spectating peers dial the gateway, matches run on the host through its admin API, and the
runner (``serve --role runner``) hosts the submissions from its own work directory, so the
sandboxes of this test are told from any other on the machine.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path

import grpc

from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc

from .cluster import ADMIN_TOKEN, Cluster, fresh_database
from .hosted import HostedArena
from .referee_server import ALL_GAMES, WAIT, BearerToken, Policy, RawBot, first_legal

HOST = "host-h"
GATEWAY = "gw-h"
RUNNER = "runner-h"


class ClusterReferee:
    """What a test asks of a referee, answered by a cluster: raw bots dial the gateway, the
    admin API is the host's."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.port = cluster.ports[GATEWAY]
        self.address = f"127.0.0.1:{self.port}"
        self.channel = grpc.insecure_channel(self.address)
        self.host_address = f"127.0.0.1:{cluster.ports[HOST]}"
        """Where admin clients and bot owners dial: the match host."""
        self.host_channel = grpc.insecure_channel(self.host_address)
        self.admin = admin_pb_grpc.AdminServiceStub(
            grpc.intercept_channel(self.host_channel, BearerToken(ADMIN_TOKEN))
        )
        self.bots: list[RawBot] = []

    def connect(
        self,
        name: str,
        token: str,
        policy: Policy | None = first_legal,
        games: tuple[str, ...] = ALL_GAMES,
    ) -> RawBot:
        bot = RawBot(self.channel, policy)
        self.bots.append(bot)
        bot.hello(name, token, games)
        bot.wait_kind("welcome")
        return bot

    def connected(self) -> dict[str, tuple[tuple[str, ...], int]]:
        response = self.admin.ListConnected(admin_pb.ListConnectedRequest(), timeout=WAIT)
        return {b.name: (tuple(b.games), b.matches) for b in response.bots}

    def close(self) -> None:
        for bot in self.bots:
            bot.call.cancel()
        self.channel.close()
        self.host_channel.close()


class ClusterHostedArena(HostedArena):
    """A host, a gateway and a runner on a fresh PostgreSQL database, in ``folder``."""

    def __init__(self, folder: Path, *, idle_stop_seconds: float = 1.0) -> None:
        self.folder = folder
        self.database = folder / "referee-files.db"  # a file of the arena's: never readable
        self.database.write_text("secret")
        self._stack = contextlib.ExitStack()
        db = self._stack.enter_context(fresh_database())
        self.cluster = Cluster(folder, db)
        self._stack.callback(self.cluster.stop)
        self.storage = self.cluster.storage
        self.workdir = Path(tempfile.mkdtemp(prefix="arena-hosted-cluster-"))
        self.workdir.chmod(0o755)
        self._stack.callback(shutil.rmtree, self.workdir, True)
        self.cluster.start([HOST], [GATEWAY])
        self.cluster.start_runners(
            [RUNNER], [GATEWAY], hosting_dir=self.workdir, idle_stop=idle_stop_seconds
        )
        self.referee = ClusterReferee(self.cluster)
        self._stack.callback(self.referee.close)
        self.tokens: dict[str, str] = {}

    def close(self) -> None:
        self._stack.close()
