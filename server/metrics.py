"""Every metric of the referee, defined once (docs/decisions.md: decision 14).

Names carry the ``domino_arena_`` prefix and base units (seconds). Labels are bounded by
construction: a game name from :data:`~domino_arena.sdk.rules.GAMES`, a
:class:`~.seats.Termination`, a :class:`~.seats.FaultKind` or a storage operation from
:data:`STORAGE_OPERATIONS`; anything else raises :class:`ValueError`, so a bot name or a match id
can never become a label and blow up the number of series. Every allowed label combination is
created up front, so each series exists (at 0) from the first scrape and ``rate()`` and
``increase()`` see the first event.

A :class:`Metrics` owns its own :class:`~prometheus_client.CollectorRegistry`: tests and several
referees in one process never collide in the global one. Its methods are plain, cheap and
thread-safe (prometheus-client locks each value), so the trio guest and the storage worker
threads call them directly.
"""

from __future__ import annotations

import bisect
import enum
import importlib.metadata
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from threading import Thread
from types import TracebackType
from typing import Final, Protocol, TypeVar
from wsgiref.simple_server import WSGIServer

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    ProcessCollector,
    generate_latest,
    start_http_server,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from domino_arena.sdk.match.results import FaultKind, Termination
from domino_arena.sdk.rules import GAMES

PREFIX: Final = "domino_arena"

MOVE_BUCKETS: Final = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
"""Think time from a local bot's millisecond to a tournament's longest move (seconds)."""

STORAGE_BUCKETS: Final = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)  # fmt: skip
"""A database call, from a SQLite read to a PostgreSQL commit under load (seconds)."""

STORAGE_OPERATIONS: Final = frozenset(
    {
        "open",
        "add_bot",
        "check_bot",
        "bot_names",
        "save_match",
        "match",
        "matches",
        "ratings",
        "rated_games",
        "recompute_ratings",
        "pools",
        "add_tournament",
        "tournament",
        "tournaments",
        "set_tournament_state",
        "tournament_game_indexes",
        "schema_version",
    }
)
"""The storage calls that are timed: :class:`~.storage.Storage`'s methods that touch the
database. A new one is added here, which keeps the ``operation`` label bounded."""

_E = TypeVar("_E", bound=enum.Enum)


@dataclass(frozen=True, slots=True)
class MetricsServer:
    """The HTTP exposition server :meth:`Metrics.serve` started (a daemon thread)."""

    host: str
    port: int
    """The port bound, the real one when 0 was asked for."""
    _httpd: WSGIServer
    _thread: Thread

    def stop(self) -> None:
        """Stop serving, release the port and wait for the thread; calling it again is harmless."""
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join()
        # shutdown() alone keeps the socket open (prometheus/client_python#1068).
        self._httpd.server_close()

    def __enter__(self) -> MetricsServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


class Metrics:
    """The referee's metrics and the calls that record them.

    Args:
        clock: the monotonic clock (seconds) :meth:`storage` times with; tests pass a fake one.
    """

    def __init__(self, *, clock: Callable[[], float] = time.perf_counter) -> None:
        self.registry: Final = CollectorRegistry(auto_describe=True)
        self._clock = clock
        registry = self.registry
        games = sorted(GAMES)

        ProcessCollector(registry=registry)
        build = Info(f"{PREFIX}_build", "The running referee's version.", registry=registry)
        build.info({"version": _version()})

        matches = Counter(
            f"{PREFIX}_matches",
            "Matches finished, by game and how they ended (normal, forfeit, void, aborted).",
            ("game", "outcome"),
            registry=registry,
        )
        self._matches = {
            (game, outcome): matches.labels(game, outcome.value)
            for game in games
            for outcome in Termination
        }
        active = Gauge(
            f"{PREFIX}_matches_active",
            "Matches being played now, by game.",
            ("game",),
            registry=registry,
        )
        self._active = {game: active.labels(game) for game in games}
        self._moves = _MoveTimes(games)
        registry.register(self._moves)
        faults = Counter(
            f"{PREFIX}_faults",
            "Faults charged to bots, by game and kind "
            "(timeout, illegal, malformed, disconnected, bot_error).",
            ("game", "kind"),
            registry=registry,
        )
        self._faults = {
            (game, kind): faults.labels(game, kind.value) for game in games for kind in FaultKind
        }
        self._connected = Gauge(
            f"{PREFIX}_bots_connected",
            "Bots with an open stream to the referee.",
            registry=registry,
        )
        tournament_games = Counter(
            f"{PREFIX}_tournament_games",
            "Tournament games finished, by game: a tournament's progress.",
            ("game",),
            registry=registry,
        )
        self._tournament_games = {game: tournament_games.labels(game) for game in games}
        storage_seconds = Histogram(
            f"{PREFIX}_storage_seconds",
            "Time of a storage call, by operation, failed calls included.",
            ("operation",),
            buckets=STORAGE_BUCKETS,
            registry=registry,
        )
        storage_errors = Counter(
            f"{PREFIX}_storage_errors",
            "Storage calls that raised, by operation.",
            ("operation",),
            registry=registry,
        )
        self._storage = {
            operation: (storage_seconds.labels(operation), storage_errors.labels(operation))
            for operation in sorted(STORAGE_OPERATIONS)
        }

    # -- what the referee calls ----------------------------------------------------------------

    def match_started(self, game: str) -> None:
        """Count a match of ``game`` as active; :meth:`match_ended` ends it."""
        self._active[_game(game)].inc()

    def match_ended(self, game: str, outcome: Termination | str) -> None:
        """Count a finished match of ``game`` and how it ended; it is no longer active."""
        termination = _member(Termination, outcome, "outcome")
        self._matches[_game(game), termination].inc()
        self._active[game].dec()

    def move(self, game: str, seconds: float) -> None:
        """Record a bot's think time for one move of ``game`` (seconds, not milliseconds)."""
        if not seconds >= 0:  # also refuses NaN
            raise ValueError(f"move: seconds must be 0 or more, got {seconds!r}")
        self._moves.observe(_game(game), seconds)

    def fault(self, game: str, kind: FaultKind | str) -> None:
        """Count a fault charged to a bot in a match of ``game``."""
        self._faults[_game(game), _member(FaultKind, kind, "kind")].inc()

    def tournament_game(self, game: str) -> None:
        """Count one finished game of a tournament (on top of :meth:`match_ended`)."""
        self._tournament_games[_game(game)].inc()

    def watch_broker(self, role: str, broker: BrokerCounts) -> None:
        """Export a cluster role's node and its broker connection, read at every scrape: the
        ``role`` and node name (an info metric: one series per process, so bounded), whether
        the broker is connected, and the messages published, received and dropped."""
        Info(
            f"{PREFIX}_node",
            "This process's role in the cluster and its node name.",
            registry=self.registry,
        ).info({"role": role, "node": broker.node})
        self.registry.register(_BrokerCollector(broker))

    def watch_connected(self, count: Callable[[], int]) -> None:
        """Read the number of connected bots from ``count`` at every scrape.

        ``count`` is called from the exposition server's thread: it must be cheap and only
        read (``len()`` of the lobby's table is).
        """
        self._connected.set_function(lambda: float(count()))

    @contextmanager
    def storage(self, operation: str) -> Iterator[None]:
        """Time the storage call in the ``with`` block; count it as an error if it raises.

        Only an :class:`Exception` is an error: a cancellation passing through (a
        :class:`BaseException`) is timed but is not the database's failure.
        """
        if operation not in STORAGE_OPERATIONS:
            expected = ", ".join(sorted(STORAGE_OPERATIONS))
            raise ValueError(f"unknown storage operation {operation!r}: expected one of {expected}")
        seconds, errors = self._storage[operation]
        start = self._clock()
        try:
            yield
        except Exception:
            errors.inc()
            raise
        finally:
            seconds.observe(max(0.0, self._clock() - start))

    # -- exposition ----------------------------------------------------------------------------

    def render(self) -> bytes:
        """The metrics in Prometheus' text format, as a scrape of ``/metrics`` returns them."""
        return generate_latest(self.registry)

    def serve(self, host: str, port: int) -> MetricsServer:
        """Serve ``/metrics`` over HTTP on ``host:port`` from a daemon thread.

        Port 0 binds any free port; the returned server's ``port`` is the real one and its
        ``stop`` is what to call at shutdown.

        Raises:
            ValueError: a port outside 0-65535.
            OSError: the address cannot be bound (in use, not local).
        """
        if not 0 <= port <= 65535:
            raise ValueError(f"metrics port must be 0-65535, got {port}")
        httpd, thread = start_http_server(port, addr=host, registry=self.registry)
        return MetricsServer(host, httpd.server_port, httpd, thread)


class BrokerCounts(Protocol):
    """What the metrics read of a broker connection (``server/net/cluster/broker.py``)."""

    @property
    def node(self) -> str: ...
    @property
    def connected(self) -> bool: ...
    @property
    def published(self) -> int: ...
    @property
    def received(self) -> int: ...
    @property
    def dropped(self) -> int: ...


class _BrokerCollector(Collector):
    """A cluster role's broker connection, read at scrape time (plain counts on the loop)."""

    def __init__(self, broker: BrokerCounts) -> None:
        self._broker = broker

    def collect(self) -> Iterator[Metric]:
        broker = self._broker
        yield GaugeMetricFamily(
            f"{PREFIX}_broker_connected",
            "1 while this process is connected to the message broker (NATS), else 0.",
            value=1.0 if broker.connected else 0.0,
        )
        messages = CounterMetricFamily(
            f"{PREFIX}_broker_messages",
            "Messages through the broker: published, received, dropped (its buffer full).",
            labels=("direction",),
        )
        messages.add_metric(["published"], float(broker.published))
        messages.add_metric(["received"], float(broker.received))
        messages.add_metric(["dropped"], float(broker.dropped))
        yield messages


class _MoveTimes(Collector):
    """``domino_arena_move_seconds``: a histogram kept as plain counts per game.

    A move is the referee's most frequent event; prometheus-client's histogram takes a lock
    and walks the buckets for each value (about 2 us, a few percent of the referee's time per
    move), where this takes one bisect and two additions under one lock. The scrape turns the
    counts into the same histogram family (cumulative buckets, ``+Inf``, count, sum).
    """

    NAME: Final = f"{PREFIX}_move_seconds"
    HELP: Final = "Bots' think time per move as the referee measured it, send to receive."

    def __init__(self, games: Iterable[str]) -> None:
        self._lock = threading.Lock()
        self._counts = {game: [0] * (len(MOVE_BUCKETS) + 1) for game in games}
        """Per game, the moves in each bucket (not cumulative; the last one is ``+Inf``)."""
        self._sums = dict.fromkeys(self._counts, 0.0)
        self._bounds = [_go_float(bound) for bound in MOVE_BUCKETS] + ["+Inf"]

    def observe(self, game: str, seconds: float) -> None:
        """Count one move of ``game`` (a known game, ``seconds`` >= 0: checked by the caller)."""
        index = bisect.bisect_left(MOVE_BUCKETS, seconds)  # the first bucket with seconds <= le
        with self._lock:
            self._counts[game][index] += 1
            self._sums[game] += seconds

    def describe(self) -> Iterator[HistogramMetricFamily]:
        yield HistogramMetricFamily(self.NAME, self.HELP, labels=("game",))

    def collect(self) -> Iterator[HistogramMetricFamily]:
        family = HistogramMetricFamily(self.NAME, self.HELP, labels=("game",))
        with self._lock:
            taken = [(game, list(c), self._sums[game]) for game, c in self._counts.items()]
        for game, counts, total in taken:
            cumulative, buckets = 0, []
            for bound, count in zip(self._bounds, counts, strict=True):
                cumulative += count
                buckets.append((bound, float(cumulative)))
            family.add_metric((game,), buckets, total)
        yield family


def _go_float(bound: float) -> str:
    """A bucket bound as prometheus-client writes ``le`` (``1.0``, ``0.005``)."""
    return repr(float(bound))


def _member(kind: type[_E], value: _E | str, label: str) -> _E:
    """``value`` as a member of enum ``kind``, by member or by its text."""
    if isinstance(value, kind):
        return value
    for member in kind:
        if member.value == value:
            return member
    expected = ", ".join(str(m.value) for m in kind)
    raise ValueError(f"unknown {label} {value!r}: expected one of {expected}")


def _game(game: str) -> str:
    """``game`` if it is a registered game's name."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}: expected one of {', '.join(sorted(GAMES))}")
    return game


def _version() -> str:
    try:
        return importlib.metadata.version("domino-arena")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
