"""The NATS subjects the gateways and the match hosts speak (docs/cluster.md).

Per bot stream and per host (issue 15): a host writes to a bot's stream on
``<cluster>.bot.<bot>.<stream>.<host>.<kind>`` whichever gateway holds it (the gateway
subscribes to ``<cluster>.bot.<bot>.>``), and a gateway writes a bot's replies to
``<cluster>.match.<host>.<stream>``, so a host needs one wildcard subscription for all its
matches (the reply names its match). The stream's id and the sender's node ride in the subject,
not in NATS headers (issue 34): a subject is split once, where headers cost nats-py a parse of
their own on every message (about 10 µs a move). Every subject starts with the cluster's name
(``--cluster``, default :data:`DEFAULT_CLUSTER`), so several arenas (or tests) can share one
NATS without hearing each other. Names are made subject tokens by :func:`token`, which maps
every character outside ``[A-Za-z0-9_-]`` to ``~`` and two hex digits: one-to-one (undone by
:func:`untoken`), so two bots never share a subject, and a ``.`` in a bot name does not split
its subject.
"""

from __future__ import annotations

import os
import re
import socket
from typing import Final

DEFAULT_CLUSTER: Final = "da"

MESSAGE: Final = "m"
"""Kind (host -> gateway): the payload is a ``RefereeMessage`` (a ``RefereeBatch`` for several)."""
CUT: Final = "cut"
"""Kind (host -> gateway): cut the stream off for a limit; the payload is ``limit reason``."""

_PLAIN: Final = re.compile(r"[A-Za-z0-9_-]")
_PLAIN_NAME: Final = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPED: Final = re.compile(r"(?:~[0-9a-f]{2})+")


def token(name: str) -> str:
    """``name`` as one subject token, one-to-one (see the module's docstring)."""
    if _PLAIN_NAME.fullmatch(name):
        return name
    return "".join(
        char if _PLAIN.fullmatch(char) else "".join(f"~{b:02x}" for b in char.encode())
        for char in name
    )


def untoken(text: str) -> str:
    """The name :func:`token` made ``text`` of (undecodable escapes are kept as they are)."""
    if "~" not in text:
        return text
    return _ESCAPED.sub(
        lambda run: bytes.fromhex(run.group().replace("~", "")).decode(errors="replace"), text
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
        """The wildcard subject of every message for the bot ``name``'s streams, read by the
        gateway that holds its stream now."""
        return f"{self._prefix}.bot.{token(name)}.>"

    def to_stream(self, name: str, stream: str, node: str, kind: str = MESSAGE) -> str:
        """The subject the host ``node`` writes to the bot ``name``'s stream ``stream`` on:
        ``kind`` :data:`MESSAGE` or :data:`CUT`."""
        return f"{self._prefix}.bot.{token(name)}.{token(stream)}.{token(node)}.{kind}"

    def host_matches(self, node: str) -> str:
        """The wildcard subject of every match the host ``node`` runs (its one subscription)."""
        return f"{self._prefix}.match.{token(node)}.*"

    def reply(self, node_token: str, stream: str) -> str:
        """The subject a bot's replies on ``stream`` go to, for the host whose node name is
        the token ``node_token`` (as a host's subject named it)."""
        return f"{self._prefix}.match.{node_token}.{token(stream)}"


def parts(subject: str) -> list[str]:
    """A subject's tokens: for the host's ``to_stream`` subjects ``[cluster, "bot", bot,
    stream, node, kind]``; for a ``reply`` ``[cluster, "match", node, stream]`` (no token
    holds a dot: :func:`token`)."""
    return subject.split(".")


def default_node(role: str) -> str:
    """A node name unique on this machine: the role, the host name (the pod in Kubernetes)
    and the process id."""
    return f"{role}-{socket.gethostname()}-{os.getpid()}"
