"""The referee's metrics: names, units, bounded labels, and the HTTP exposition server.

Values are read back the way Prometheus reads them: the text of :meth:`Metrics.render` (or of a
real GET on loopback) parsed by prometheus-client's own parser.
"""

from __future__ import annotations

import itertools
import math
import urllib.request
from collections.abc import Callable, Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from domino_arena.sdk.match.results import FaultKind, Termination
from domino_arena.sdk.rules import GAMES
from domino_arena.server.metrics import (
    MOVE_BUCKETS,
    STORAGE_OPERATIONS,
    Metrics,
)
from tests.fakes.clocks import FakeClock

GAME = sorted(GAMES)[0]


def samples(metrics: Metrics) -> list[Sample]:
    text = metrics.render().decode("utf-8")
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def value(metrics: Metrics, name: str, **labels: str) -> float:
    """The one sample called ``name`` with exactly ``labels``."""
    found = [s.value for s in samples(metrics) if s.name == name and s.labels == labels]
    assert len(found) == 1, f"{name}{labels}: {len(found)} samples"
    return found[0]


def test_every_domino_metric_has_the_prefix_and_a_base_unit() -> None:
    text = Metrics().render().decode("utf-8")
    names = {f.name for f in text_string_to_metric_families(text)}
    # prometheus-client adds a ``_created`` family per counter and histogram (unless
    # PROMETHEUS_DISABLE_CREATED_SERIES is set, as the container image does).
    ours = {n for n in names if not n.startswith("process_") and not n.endswith("_created")}
    assert ours == {
        "domino_arena_build_info",
        "domino_arena_matches",
        "domino_arena_matches_active",
        "domino_arena_move_seconds",
        "domino_arena_faults",
        "domino_arena_bots_connected",
        "domino_arena_tournament_games",
        "domino_arena_storage_seconds",
        "domino_arena_storage_errors",
    }
    assert "_ms" not in text and "millisecond" not in text


def test_every_label_combination_exists_at_zero_before_any_event() -> None:
    """So rate() sees the first event, and the series are exactly the bounded set."""
    metrics = Metrics()
    for game, outcome in itertools.product(GAMES, Termination):
        assert value(metrics, "domino_arena_matches_total", game=game, outcome=outcome.value) == 0
    for game, kind in itertools.product(GAMES, FaultKind):
        assert value(metrics, "domino_arena_faults_total", game=game, kind=kind.value) == 0
    for game in GAMES:
        assert value(metrics, "domino_arena_matches_active", game=game) == 0
        assert value(metrics, "domino_arena_move_seconds_count", game=game) == 0
    for operation in STORAGE_OPERATIONS:
        assert value(metrics, "domino_arena_storage_errors_total", operation=operation) == 0
    assert value(metrics, "domino_arena_bots_connected") == 0


def test_a_match_is_active_until_it_ends_and_is_counted_by_outcome() -> None:
    metrics = Metrics()
    metrics.match_started(GAME)
    metrics.match_started(GAME)
    assert value(metrics, "domino_arena_matches_active", game=GAME) == 2
    metrics.match_ended(GAME, Termination.FORFEIT)
    metrics.match_ended(GAME, "normal")
    assert value(metrics, "domino_arena_matches_active", game=GAME) == 0
    assert value(metrics, "domino_arena_matches_total", game=GAME, outcome="forfeit") == 1
    assert value(metrics, "domino_arena_matches_total", game=GAME, outcome="normal") == 1
    assert value(metrics, "domino_arena_matches_total", game=GAME, outcome="void") == 0


def test_move_times_are_seconds_in_buckets_from_a_millisecond_to_thirty_seconds() -> None:
    assert MOVE_BUCKETS[0] == 0.001
    assert MOVE_BUCKETS[-1] == 30.0
    assert list(MOVE_BUCKETS) == sorted(MOVE_BUCKETS)
    metrics = Metrics()
    metrics.move(GAME, 0.004)
    metrics.move(GAME, 2.0)
    metrics.move(GAME, 0.0)
    assert value(metrics, "domino_arena_move_seconds_count", game=GAME) == 3
    assert value(metrics, "domino_arena_move_seconds_sum", game=GAME) == pytest.approx(2.004)
    assert value(metrics, "domino_arena_move_seconds_bucket", game=GAME, le="0.005") == 2
    assert value(metrics, "domino_arena_move_seconds_bucket", game=GAME, le="1.0") == 2
    assert value(metrics, "domino_arena_move_seconds_bucket", game=GAME, le="2.5") == 3


def test_a_move_on_a_bucket_bound_counts_in_that_bucket_and_every_bucket_is_cumulative() -> None:
    metrics = Metrics()
    for seconds in (0.005, 0.0050001, 30.0, 31.0):
        metrics.move(GAME, seconds)
    assert value(metrics, "domino_arena_move_seconds_bucket", game=GAME, le="0.0025") == 0
    assert value(metrics, "domino_arena_move_seconds_bucket", game=GAME, le="0.005") == 1
    assert value(metrics, "domino_arena_move_seconds_bucket", game=GAME, le="0.01") == 2
    assert value(metrics, "domino_arena_move_seconds_bucket", game=GAME, le="30.0") == 3
    assert value(metrics, "domino_arena_move_seconds_bucket", game=GAME, le="+Inf") == 4
    assert value(metrics, "domino_arena_move_seconds_count", game=GAME) == 4
    other = sorted(GAMES)[1]
    assert value(metrics, "domino_arena_move_seconds_count", game=other) == 0


@pytest.mark.parametrize("seconds", [-0.001, math.nan])
def test_a_negative_or_nan_move_time_is_refused(seconds: float) -> None:
    with pytest.raises(ValueError, match="move: seconds must be 0 or more"):
        Metrics().move(GAME, seconds)


def test_faults_are_counted_by_game_and_kind() -> None:
    metrics = Metrics()
    metrics.fault(GAME, FaultKind.TIMEOUT)
    metrics.fault(GAME, "timeout")
    metrics.fault(GAME, FaultKind.DISCONNECTED)
    metrics.fault(GAME, FaultKind.BOT_ERROR)
    assert value(metrics, "domino_arena_faults_total", game=GAME, kind="timeout") == 2
    assert value(metrics, "domino_arena_faults_total", game=GAME, kind="bot_error") == 1
    assert value(metrics, "domino_arena_faults_total", game=GAME, kind="disconnected") == 1
    assert value(metrics, "domino_arena_faults_total", game=GAME, kind="illegal") == 0


def test_tournament_games_are_counted_by_game() -> None:
    metrics = Metrics()
    metrics.tournament_game(GAME)
    assert value(metrics, "domino_arena_tournament_games_total", game=GAME) == 1


def test_connected_bots_are_read_from_the_callback_at_each_scrape() -> None:
    metrics = Metrics()
    lobby = {"ada": 1, "bob": 2}
    metrics.watch_connected(lambda: len(lobby))
    assert value(metrics, "domino_arena_bots_connected") == 2
    del lobby["bob"]
    assert value(metrics, "domino_arena_bots_connected") == 1


def test_storage_calls_are_timed_and_failures_counted() -> None:
    clock = FakeClock(100.0)
    metrics = Metrics(clock=clock)
    with metrics.storage("save_match"):
        clock.now += 0.25
    with pytest.raises(RuntimeError, match="disk full"), metrics.storage("save_match"):
        clock.now += 0.5
        raise RuntimeError("disk full")
    name = "domino_arena_storage_seconds"
    assert value(metrics, f"{name}_count", operation="save_match") == 2
    assert value(metrics, f"{name}_sum", operation="save_match") == pytest.approx(0.75)
    assert value(metrics, f"{name}_bucket", operation="save_match", le="0.25") == 1
    assert value(metrics, "domino_arena_storage_errors_total", operation="save_match") == 1
    assert value(metrics, "domino_arena_storage_errors_total", operation="check_bot") == 0


def test_a_cancellation_through_a_storage_call_is_timed_but_not_an_error() -> None:
    class Cancelled(BaseException):
        pass

    metrics = Metrics(clock=FakeClock(100.0))
    with pytest.raises(Cancelled), metrics.storage("matches"):
        raise Cancelled
    assert value(metrics, "domino_arena_storage_seconds_count", operation="matches") == 1
    assert value(metrics, "domino_arena_storage_errors_total", operation="matches") == 0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.match_started("chess"), "unknown game 'chess': expected one of "),
        (lambda m: m.match_ended("bot-ada", "normal"), "unknown game 'bot-ada'"),
        (lambda m: m.match_ended(GAME, "won"), "unknown outcome 'won': expected one of normal, "),
        (lambda m: m.move("m-42", 1.0), "unknown game 'm-42'"),
        (lambda m: m.fault(GAME, "slow"), "unknown kind 'slow': expected one of timeout, "),
        (lambda m: m.fault("x", "timeout"), "unknown game 'x'"),
        (lambda m: m.tournament_game("x"), "unknown game 'x'"),
    ],
)
def test_an_unknown_label_value_is_refused(call: Callable[[Metrics], None], message: str) -> None:
    metrics = Metrics()
    before = samples(metrics)
    with pytest.raises(ValueError, match=message):
        call(metrics)
    after = samples(metrics)
    assert [s for s in after if s.name.startswith("domino_arena_")] == [
        s for s in before if s.name.startswith("domino_arena_")
    ]


def test_an_unknown_storage_operation_is_refused_before_the_call_runs() -> None:
    metrics = Metrics()
    ran = False
    refused = pytest.raises(ValueError, match="unknown storage operation 'drop_everything'")
    with refused, metrics.storage("drop_everything"):
        ran = True
    assert not ran


def test_the_number_of_series_does_not_grow_with_use() -> None:
    """Bounded labels: a busy referee exposes exactly as many series as a fresh one."""
    metrics = Metrics()
    fresh = {(s.name, tuple(sorted(s.labels.items()))) for s in samples(metrics)}
    for game in GAMES:
        for outcome in Termination:
            metrics.match_started(game)
            metrics.match_ended(game, outcome)
        for kind in FaultKind:
            metrics.fault(game, kind)
        metrics.move(game, 0.1)
    busy = {(s.name, tuple(sorted(s.labels.items()))) for s in samples(metrics)}
    ours = {key for key in busy if key[0].startswith("domino_arena_")}
    assert ours == {key for key in fresh if key[0].startswith("domino_arena_")}


def test_two_instances_do_not_share_values() -> None:
    first, second = Metrics(), Metrics()
    first.match_started(GAME)
    assert value(first, "domino_arena_matches_active", game=GAME) == 1
    assert value(second, "domino_arena_matches_active", game=GAME) == 0


@pytest.fixture
def served() -> Iterator[tuple[Metrics, int]]:
    metrics = Metrics()
    server = metrics.serve("127.0.0.1", 0)
    try:
        yield metrics, server.port
    finally:
        server.stop()


def test_the_http_server_on_port_0_reports_its_port_and_answers_metrics(
    served: tuple[Metrics, int],
) -> None:
    metrics, port = served
    assert port > 0
    metrics.fault(GAME, FaultKind.ILLEGAL)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        text = response.read().decode("utf-8")
    found = [
        s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "domino_arena_faults_total" and s.labels == {"game": GAME, "kind": "illegal"}
    ]
    assert found == [1.0]


def test_stopping_the_http_server_releases_the_port() -> None:
    metrics = Metrics()
    with metrics.serve("127.0.0.1", 0) as server:
        port = server.port
    server.stop()  # a second stop is harmless
    again = metrics.serve("127.0.0.1", port)
    try:
        assert again.port == port
    finally:
        again.stop()


def test_a_port_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="metrics port must be 0-65535, got 70000"):
        Metrics().serve("127.0.0.1", 70000)
