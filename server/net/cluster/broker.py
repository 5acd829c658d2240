"""One NATS connection per process (nats-py), and a publisher that never blocks its caller.

The seats of a match (trio, as a guest on the asyncio loop) and the gRPC handlers (asyncio)
send with plain calls that must not block or await (docs/decisions.md: decision 10); nats-py's
``publish`` is a coroutine. :meth:`Broker.post` therefore queues the message and wakes one
asyncio task that publishes everything waiting, in order: a move costs a list append and, for
the first message of a burst, one future set.

The connection reconnects by itself, forever (a NATS restart, a moved server): nats-py keeps
the subscriptions and buffers what is published meanwhile (up to :data:`PENDING_BYTES`), and
:attr:`Broker.connected` and the ``on_state`` callback say when the broker is away, which the
role's gRPC health check reports (Kubernetes readiness). Past the buffer a message is dropped
and counted (:attr:`Broker.dropped`); what that costs a match is the match's own business (a
request that never arrives is a timeout the referee voids, see docs/cluster.md).

TLS and credentials come from :mod:`~domino_arena.server.net.cluster.broker_security`: before
dialling, :func:`server_info` reads the broker's ``INFO`` line over a plain TCP connection (no
credential is sent on it), so a broker that does not match the options is refused with one
sentence naming the flag; a broker that refuses the credentials or the TLS handshake is a
failure at once, not retried until the connect timeout.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.errors import Error as NatsError

from domino_arena.server.net.cluster.broker_security import (
    BrokerConfigError,
    BrokerError,
    BrokerSecurity,
    split_url,
)
from domino_arena.server.net.cluster.subjects import DEFAULT_CLUSTER, Subjects

LOG: Final = logging.getLogger("domino_arena.server.cluster")

PENDING_BYTES: Final = 64 * 1024 * 1024
"""What nats-py may buffer while the server is away (its default, 2 MiB, is a second of a busy
host's moves)."""
CONNECT_TIMEOUT: Final = 5.0
"""Seconds to reach the broker at start before the process gives up with an error."""
RECONNECT_WAIT: Final = 0.5
"""Seconds between two reconnection attempts (nats-py's default is 2)."""
MAX_INFO_BYTES: Final = 64 * 1024
"""The longest ``INFO`` line :func:`server_info` reads (a server's is about 1 KiB; a
cluster's lists its routes' URLs)."""

Handler = Callable[[Msg], Awaitable[None]]


async def server_info(url: str) -> dict[str, Any]:
    """The ``INFO`` the NATS server at ``url`` sends first to every client (whether it
    requires TLS, authentication, ...), read over plain TCP before any TLS.

    Raises:
        OSError: nobody answers there.
        ValueError: what answers is not a NATS server.
    """
    _, host, port = split_url(url)
    reader, writer = await asyncio.open_connection(host, port, limit=MAX_INFO_BYTES)
    try:
        line = await reader.readline()
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    verb, _, body = line.partition(b" ")
    if verb != b"INFO":
        raise ValueError(f"not a NATS server: it said {line[:40]!r}")
    info: dict[str, Any] = json.loads(body)
    return info


class Broker:
    """The process's connection to NATS at ``url``, named ``node`` (seen in NATS monitoring),
    in the cluster named ``cluster`` (the subjects' prefix).

    ``on_state`` is called with True when the connection is (again) up and False when it is
    lost, on the asyncio loop.
    """

    def __init__(
        self,
        url: str,
        node: str,
        on_state: Callable[[bool], None] | None = None,
        cluster: str = DEFAULT_CLUSTER,
        security: BrokerSecurity | None = None,
    ) -> None:
        self.url = url
        self.node = node
        self.security: Final = security or BrokerSecurity()
        """TLS and credentials (``serve --nats-*``; the default: plaintext, none)."""
        self.subjects: Final = Subjects(cluster)
        """The subjects of this process's cluster."""
        self.published = 0
        """Messages handed to the broker since the start."""
        self.received = 0
        """Messages taken from the broker since the start (counted by the handlers' owners)."""
        self.dropped = 0
        """Messages the broker refused (its buffer full while it was away)."""
        self._on_state = on_state
        self._client: Client | None = None
        self._queue: collections.deque[tuple[str, bytes, dict[str, str] | None]] = (
            collections.deque()
        )
        self._wake: asyncio.Future[None] | None = None
        self._publisher: asyncio.Task[None] | None = None
        self._closing = False

    @property
    def connected(self) -> bool:
        client = self._client
        return client is not None and client.is_connected

    async def connect(self) -> None:
        """Connect and start the publisher.

        Raises:
            BrokerError: NATS is not reachable at ``url`` within :data:`CONNECT_TIMEOUT`, does
                not match :attr:`security`, or refuses its credentials or its TLS.
        """

        async def disconnected() -> None:
            if self._closing:
                return
            LOG.warning("broker connection lost: %s (reconnecting)", self.url)
            self._state(False)

        async def reconnected() -> None:
            LOG.info("broker connection back: %s", self.url)
            self._state(True)

        last_error: list[Exception] = []
        refused: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def error(exc: Exception) -> None:
            LOG.debug("broker: %s", exc)
            last_error[:] = [exc]
            why = self.security.refusal(self.url, exc)
            if why is not None and not refused.done():
                refused.set_result(why)

        await self._check_broker()
        # nats-py retries the first connection as it reconnects, forever; a broker that cannot
        # be reached at start is an error of the command line, reported at once, and so is one
        # that refuses this process's credentials or TLS (``refused``).
        client = Client()
        connecting = asyncio.create_task(
            client.connect(
                self.url,
                name=self.node,
                connect_timeout=int(CONNECT_TIMEOUT),
                allow_reconnect=True,
                max_reconnect_attempts=-1,
                reconnect_time_wait=RECONNECT_WAIT,  # type: ignore[arg-type]  # a float: it sleeps that long
                ping_interval=5,
                max_outstanding_pings=3,
                pending_size=PENDING_BYTES,
                disconnected_cb=disconnected,
                reconnected_cb=reconnected,
                error_cb=error,
                **self.security.options(),
            ),
            name="broker connect",
        )
        await asyncio.wait(
            (connecting, refused), timeout=CONNECT_TIMEOUT, return_when="FIRST_COMPLETED"
        )
        failure: str | None = None
        if refused.done():
            failure = refused.result()
        elif not connecting.done():
            cause = last_error[0] if last_error else TimeoutError()
            failure = (
                f"--nats: cannot reach the broker at {self.url} within {CONNECT_TIMEOUT:g} s: "
                f"{str(cause) or type(cause).__name__}"
            )
        elif (exc := connecting.exception()) is not None:
            failure = self.security.refusal(self.url, exc) or (
                f"--nats: cannot reach the broker at {self.url}: {str(exc) or type(exc).__name__}"
            )
        if failure is not None:
            self._closing = True
            connecting.cancel()
            with contextlib.suppress(BaseException):
                await connecting
            with contextlib.suppress(Exception):
                await client.close()
            raise BrokerError(failure)
        self._client = client
        self._publisher = asyncio.create_task(self._publish(), name="broker publisher")
        LOG.info("broker connected: %s as %s (%s)", self.url, self.node, self.security.describe())
        self._state(True)

    async def _check_broker(self) -> None:
        """Refuse, before dialling, a broker that is absent or does not match the options."""
        try:
            info = await asyncio.wait_for(server_info(self.url), CONNECT_TIMEOUT)
        except (OSError, ValueError, TimeoutError) as exc:
            raise BrokerError(
                f"--nats: cannot reach the broker at {self.url}: {str(exc) or type(exc).__name__}"
            ) from None
        try:
            self.security.check(self.url, info)
        except BrokerConfigError as exc:
            raise BrokerError(str(exc)) from None

    def _state(self, up: bool) -> None:
        if self._on_state is not None:
            self._on_state(up)

    def post(self, subject: str, payload: bytes, headers: dict[str, str] | None = None) -> None:
        """Queue a message for ``subject``; never blocks, never raises (see the module)."""
        self._queue.append((subject, payload, headers))
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    async def subscribe(self, subject: str, handler: Handler) -> Subscription:
        """Call ``handler`` (a coroutine function) for every message on ``subject``, in order."""
        assert self._client is not None, "connect first"
        return await self._client.subscribe(subject, cb=handler)

    def new_inbox(self) -> str:
        """A subject of this connection's own, for answers meant for it alone."""
        assert self._client is not None, "connect first"
        return self._client.new_inbox()

    async def request(self, subject: str, payload: bytes, timeout: float) -> bytes | None:
        """The first answer to a request on ``subject``, or None if none came in ``timeout`` s
        (nobody answers: e.g. no host runs the match asked for)."""
        assert self._client is not None, "connect first"
        try:
            answer = await self._client.request(subject, payload, timeout=timeout)
        except (TimeoutError, NatsError):
            return None
        return answer.data

    async def gather(self, subject: str, payload: bytes, window: float) -> list[bytes]:
        """Every answer to a request on ``subject`` that comes within ``window`` seconds (a
        question to all the hosts, each answering for itself)."""
        client = self._client
        assert client is not None, "connect first"
        inbox = self.new_inbox()
        answers: list[bytes] = []

        async def take(msg: Msg) -> None:
            answers.append(msg.data)

        subscription = await client.subscribe(inbox, cb=take)
        try:
            await client.publish(subject, payload, reply=inbox)
            await asyncio.sleep(window)
        finally:
            await subscription.unsubscribe()
        return answers

    async def flush(self) -> None:
        """Return once everything queued so far is published and the server has seen it."""
        while self._queue:
            await asyncio.sleep(0)
        if self._client is not None and self._client.is_connected:
            await self._client.flush()

    async def _publish(self) -> None:
        queue = self._queue
        while True:
            while not queue:
                self._wake = asyncio.get_running_loop().create_future()
                try:
                    await self._wake
                finally:
                    self._wake = None
            client = self._client
            assert client is not None
            while queue:
                subject, payload, headers = queue.popleft()
                try:
                    await client.publish(subject, payload, headers=headers)
                    self.published += 1
                except NatsError as exc:
                    self.dropped += 1
                    LOG.warning("broker: a message to %s dropped: %s", subject, exc)

    async def close(self) -> None:
        """Publish what waits, then drain and close the connection (at shutdown)."""
        client = self._client
        if client is None:
            return
        self._closing = True
        try:
            if client.is_connected:
                await asyncio.wait_for(self.flush(), CONNECT_TIMEOUT)
        except (TimeoutError, NatsError) as exc:
            LOG.warning("broker: %d messages not published at shutdown: %s", len(self._queue), exc)
        if self._publisher is not None:
            self._publisher.cancel()
        try:
            await client.close()
        except NatsError as exc:  # closing an already closed connection
            LOG.debug("broker close: %s", exc)
        self._client = None
