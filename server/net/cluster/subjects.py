"""The NATS subjects and headers the gateways and the match hosts speak (docs/cluster.md).

Per bot and per match (issue 15): a host writes to a bot on ``<cluster>.bot.<bot>`` whichever
gateway holds it, and a gateway writes a bot's replies to the subject the host named for that
match (``<cluster>.match.<host>.<match>``), so a host needs one wildcard subscription for all
its matches. Every subject starts with the cluster's name (``--cluster``, default
:data:`DEFAULT_CLUSTER`), so several arenas (or tests) can share one NATS without hearing each
other. Names are made subject tokens by :func:`token`, which maps every character outside
``[A-Za-z0-9_-]`` to ``~`` and two hex digits: one-to-one, so two bots never share a subject,
and a ``.`` in a bot name does not split its subject.
"""

from __future__ import annotations

import os
import re
import socket
from typing import Final

DEFAULT_CLUSTER: Final = "da"

CONNECTION: Final = "Da-Conn"
"""Header: the gateway's id of the bot stream a message is for (host -> gateway) or came from
(gateway -> host). A message for a stream that is no longer the bot's is dropped."""
NODE: Final = "Da-Node"
"""Header: the node that sent the message (the host or the gateway), for logs and records."""
CUT: Final = "Da-Cut"
"""Header (host -> gateway): cut the stream off for a limit; the value is ``limit reason``."""

_PLAIN: Final = re.compile(r"[A-Za-z0-9_-]")


def token(name: str) -> str:
    """``name`` as one subject token, one-to-one (see the module's docstring)."""
    if name and all(_PLAIN.fullmatch(char) for char in name):
        return name
    return "".join(
        char if _PLAIN.fullmatch(char) else "".join(f"~{b:02x}" for b in char.encode())
        for char in name
    )


class Subjects:
    """The subjects of the cluster named ``cluster``."""

    def __init__(self, cluster: str = DEFAULT_CLUSTER) -> None:
        prefix = token(cluster)
        self.cluster = cluster
        self.presence: Final = f"{prefix}.presence"
        """A gateway's news: a bot connected or disconnected (JSON, :mod:`.presence`)."""
        self.heartbeat: Final = f"{prefix}.gateway.heartbeat"
        """Every gateway's whole list of connected bots, every few seconds."""
        self.host_heartbeat: Final = f"{prefix}.host.heartbeat"
        """Every host's node name, every few seconds: a gateway aborts the matches of a host
        that fell silent (it died; its tournament games are played again elsewhere)."""
        self.sync: Final = f"{prefix}.presence.sync"
        """A starting host asks every gateway for its heartbeat now."""
        self.revoke: Final = f"{prefix}.revoke"
        """A host tells the gateways a bot's token was withdrawn (JSON: name, reason)."""
        self.watch: Final = f"{prefix}.watch"
        """A gateway asks the hosts for a match's spectator items (:mod:`.spectating`)."""
        self.watch_stop: Final = f"{prefix}.watch.stop"
        """A gateway's spectator left: its host stops publishing to it."""
        self.live: Final = f"{prefix}.live"
        """A gateway asks every host for its watchable matches (``ListLive``)."""
        self._prefix = prefix

    def bot(self, name: str) -> str:
        """The subject a bot's messages go to, read by the gateway that holds its stream."""
        return f"{self._prefix}.bot.{token(name)}"

    def host_matches(self, node: str) -> str:
        """The wildcard subject of every match the host ``node`` runs (its one subscription)."""
        return f"{self._prefix}.match.{token(node)}.>"

    def match(self, node: str, match_id: str) -> str:
        """The subject the replies of the match ``match_id`` go to, on the host ``node``."""
        return f"{self._prefix}.match.{token(node)}.{token(match_id)}"


def default_node(role: str) -> str:
    """A node name unique on this machine: the role, the host name (the pod in Kubernetes)
    and the process id."""
    return f"{role}-{socket.gethostname()}-{os.getpid()}"
