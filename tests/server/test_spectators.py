"""Spectators: the hub the arena feeds, its messages, and ``SpectatorService.Watch`` over gRPC.

The leak test drives the hub through whole seeded games of every configuration, exactly as the
referee's ``on_step`` does, and walks every message a spectator receives (decoded from bytes,
as the wire delivers it) with the descriptor walk of tests/sdk/test_wire_leaks.py: a spectator
is no seat, so no tile of any hand, the boneyard, the widow or a discard may appear; every
tile it sees must be on the table.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import grpc
import pytest

from domino_arena.sdk.client.spectator import (
    LiveLadder,
    Lobby,
    Spectator,
    WatchedEnd,
    WatchedHandEnd,
    WatchedStep,
    WatchError,
    WatchItem,
    WatchStarted,
)
from domino_arena.sdk.match.results import FaultPolicy, MatchResult, Termination
from domino_arena.sdk.rules import (
    CHANCE,
    DEAL,
    SPECTATOR,
    Discard,
    Game,
    GameState,
    LogEntry,
    make_game,
)
from domino_arena.sdk.wire import ConversionError, game_from_proto, spectator_table_from_proto
from domino_arena.sdk.wire import spectator_table_to_proto as table_to_proto
from domino_arena.sdk.wire.observations import observation_to_proto
from domino_arena.server.feed import Dropped
from domino_arena.server.net.live_wire import spectator_message
from domino_arena.server.net.spectators import wire_of
from domino_arena.server.play.spectators import (
    NotWatchableError,
    SpectatorHub,
    Subscription,
    WatchStart,
)
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.admin_server import AdminServer, FakeLadder, served_over, stored_match
from tests.fakes.leaks import (
    CONFIG_IDS,
    CONFIGS,
    hidden_from,
    seeds_for,
    table_tiles,
    tiles_in,
)
from tests.fakes.live_match import WATCHED, normal_end, spec_of, steps
from tests.fakes.referee_server import WAIT

MATCH_ID: Final = WATCHED


def drain(subscription: Subscription) -> list[admin_pb.SpectatorMessage | Dropped]:
    """Take every item there is now as the servicer writes it: its message, decoded from the
    bytes the network layer makes once for every watcher (:func:`wire_of`)."""
    items: list[admin_pb.SpectatorMessage | Dropped] = []
    while batch := subscription.take():
        if isinstance(batch, Dropped):
            items.append(batch)
            break
        for posted, with_table in batch:
            if isinstance(posted.item, WatchStart):
                raw = spectator_message(MATCH_ID, posted.item).SerializeToString()
            else:
                raw = wire_of(subscription.match_id, posted, with_table)
            items.append(admin_pb.SpectatorMessage.FromString(raw))
    return items


def without_table(message: admin_pb.SpectatorMessage) -> bytes:
    """The message's bytes without its public table (a late watcher's backlog has none)."""
    copy = admin_pb.SpectatorMessage()
    copy.CopyFrom(message)
    copy.ClearField("table")
    return copy.SerializeToString()


# -- nothing hidden is ever shown ------------------------------------------------------------------


def spectator_leaks(message: admin_pb.SpectatorMessage, state: GameState) -> list[str]:
    hidden = hidden_from(state, SPECTATOR)
    table = table_tiles(state)
    found = []
    for tile in tiles_in(message):
        if tile in hidden:
            found.append(f"{tile} from {hidden[tile]}")
        elif tile not in table:
            found.append(f"{tile}, which is not on the table")
    return found


@pytest.mark.parametrize("game", CONFIGS, ids=CONFIG_IDS)
def test_a_spectator_never_receives_a_hidden_tile(game: Game) -> None:
    kinds: set[str] = set()
    tiles = 0
    for seed in seeds_for(game):
        hub = SpectatorHub(max_pending=100_000)
        hub.started(spec_of(game, seed))
        early = hub.subscribe(MATCH_ID)
        feed = hub.on_step(MATCH_ID)
        seen: list[bytes] = []
        late: Subscription | None = None
        state = game.new_game(seed)
        for number, step in enumerate(steps(game, seed)):
            feed(step)
            state = step.after
            for item in drain(early):
                assert isinstance(item, admin_pb.SpectatorMessage)
                kind = item.WhichOneof("message")
                assert kind is not None
                kinds.add(kind)
                found = spectator_leaks(item, state)
                assert not found, f"seed {seed}, step {step.index}: {found} in {item}"
                if kind == "event":
                    table = spectator_table_from_proto(item.table)
                    assert table == state.observe(SPECTATOR), "the table is the engine's view"
                    assert not table.hand and not table.legal_actions
                tiles += len(tiles_in(item))
                seen.append(item.SerializeToString())
            if number == 40:
                late = hub.subscribe(MATCH_ID)
                backlog = [m for m in drain(late) if not isinstance(m, Dropped)]
                assert [without_table(m) for m in backlog] == [
                    without_table(admin_pb.SpectatorMessage.FromString(raw)) for raw in seen
                ], "a late spectator gets exactly the messages so far"
                events = [i for i, m in enumerate(backlog) if m.WhichOneof("message") == "event"]
                assert [i for i, m in enumerate(backlog) if m.HasField("table")] == events[-1:]
                early_last = admin_pb.SpectatorMessage.FromString(seen[events[-1]])
                assert backlog[events[-1]].table == early_last.table, "the table after it"
        hub.ended(MATCH_ID, normal_end(state))
        (end,) = drain(early)
        assert isinstance(end, admin_pb.SpectatorMessage)
        assert end.match_end.result.termination == pb.TERMINATION_NORMAL
        if late is not None:
            assert drain(late)[-1] == end
    assert kinds == {"start", "event", "hand_end"}
    assert tiles > 0, "the walk found no tile at all: it checks nothing"


def test_a_moon_discard_reaches_spectators_without_its_tile() -> None:
    game = make_game("moon")
    hub = SpectatorHub(max_pending=100_000)
    hub.started(spec_of(game, 2))
    watcher = hub.subscribe(MATCH_ID)
    feed = hub.on_step(MATCH_ID)
    discards = 0
    for step in steps(game, 2):
        feed(step)
        for item in drain(watcher):
            assert isinstance(item, admin_pb.SpectatorMessage)
            if item.WhichOneof("message") == "event" and isinstance(step.action, Discard):
                action = item.event.step.action
                assert action.WhichOneof("kind") == "discard"
                assert not action.discard.HasField("tile")
                discards += 1
    assert discards > 0


def test_the_start_names_the_game_and_the_bots_and_a_deal_carries_no_hand() -> None:
    game = make_game("passing", players=3)
    hub = SpectatorHub(max_pending=100_000)
    hub.started(spec_of(game, 4))
    watcher = hub.subscribe(MATCH_ID)
    feed = hub.on_step(MATCH_ID)
    for step in steps(game, 4):
        feed(step)
    start, *rest = drain(watcher)
    assert isinstance(start, admin_pb.SpectatorMessage)
    assert list(start.start.players) == ["bot0", "bot1", "bot2"]
    assert start.start.game.passing.players == 3
    assert start.start.time_control.move_ms == 1000
    deals = [
        m
        for m in rest
        if isinstance(m, admin_pb.SpectatorMessage)
        and m.WhichOneof("message") == "event"
        and m.event.step.seat == CHANCE
    ]
    assert deals, "a whole Passing Game has more than one deal"
    for deal in deals:
        assert deal.event.step.action.WhichOneof("kind") == "deal"
        assert tiles_in(deal) == []


# -- the hub's bookkeeping -------------------------------------------------------------------------


def test_a_slow_spectator_is_dropped_and_told_why_while_others_go_on() -> None:
    game = make_game("passing")
    hub = SpectatorHub(max_pending=5)
    hub.started(spec_of(game))
    slow = hub.subscribe(MATCH_ID)
    quick = hub.subscribe(MATCH_ID)
    feed = hub.on_step(MATCH_ID)
    for step in list(steps(game, 3))[:20]:
        feed(step)
        drain(quick)
    items = drain(slow)
    assert isinstance(items[-1], Dropped)
    assert re.match(rf"dropped: 2\d messages of match {MATCH_ID} were waiting", items[-1].reason)
    assert "watch again" in items[-1].reason
    assert len(items) == 2  # its start, then the notice: nothing after it
    assert slow.dropped == items[-1].reason
    assert slow.take() is None
    assert quick.take() == [], "the quick one took every step and keeps its place"


def test_every_watcher_shares_each_posted_item_and_its_bytes() -> None:
    game = make_game("passing")
    hub = SpectatorHub()
    hub.started(spec_of(game))
    watchers = [hub.subscribe(MATCH_ID) for _ in range(50)]
    feed = hub.on_step(MATCH_ID)
    for step in list(steps(game, 3))[:10]:
        feed(step)
    batches = [w.take() for w in watchers]  # the backlog: the start alone
    assert all(isinstance(b, list) and len(b) == 1 for b in batches)
    taken = []
    for watcher in watchers:
        batch = watcher.take()
        assert isinstance(batch, list) and len(batch) >= 10
        taken.append(batch)
    first = taken[0]
    for batch in taken:
        assert [p for p, _ in batch] == [p for p, _ in first], "one feed, the same objects"
    wires = {id(wire_of(MATCH_ID, posted, True)) for batch in taken for posted, _ in batch[:1]}
    assert len(wires) == 1, "the first step's bytes are made once for all 50 watchers"


def test_unknown_and_ended_matches_cannot_be_watched() -> None:
    hub = SpectatorHub()
    with pytest.raises(NotWatchableError, match="no running match has id 'x'"):
        hub.subscribe("x")
    game = make_game("passing")
    hub.started(spec_of(game))
    assert hub.running() == [MATCH_ID]
    watcher = hub.subscribe(MATCH_ID)
    hub.unsubscribe(watcher)
    assert hub.watchers(MATCH_ID) == 0
    aborted = MatchResult(Termination.ABORTED, None, (0, 0), detail="referee shutting down")
    hub.ended(MATCH_ID, aborted)
    assert hub.running() == [] and hub.ended_recently(MATCH_ID)
    assert not hub.ended_recently("x")
    with pytest.raises(NotWatchableError):
        hub.subscribe(MATCH_ID)
    hub.step(MATCH_ID, LogEntry(CHANCE, DEAL), (0, 0), 1)  # ignored, no error
    hub.ended(MATCH_ID, aborted)  # twice: ignored


def test_a_spectator_of_a_match_that_ends_gets_the_end_last() -> None:
    game = make_game("passing")
    hub = SpectatorHub()
    hub.started(spec_of(game))
    watcher = hub.subscribe(MATCH_ID)
    forfeit = MatchResult(Termination.FORFEIT, 1, (3, 0), faulted_seat=0, detail="seat 0 forfeits")
    hub.ended(MATCH_ID, forfeit)
    _, end = drain(watcher)
    assert isinstance(end, admin_pb.SpectatorMessage)
    result = end.match_end.result
    assert (result.termination, result.winner, result.faulted_seat) == (
        pb.TERMINATION_FORFEIT,
        1,
        0,
    )
    assert list(result.side_of_seat) == [0, 1]


# -- Watch over gRPC -------------------------------------------------------------------------------


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[AdminServer]:
    """The spectator service (and the admin API) over a fake arena, on port 0."""
    with served_over(tmp_path / "watch.db") as server:
        yield server


def test_watch_streams_the_backlog_then_live_steps_then_the_end(referee: AdminServer) -> None:
    game = make_game("passing")
    hub = referee.hub
    game_steps = list(steps(game, 8))
    feed = hub.on_step(MATCH_ID)
    referee.call(lambda: hub.started(spec_of(game, 8)))
    for step in game_steps[:3]:
        referee.call(functools.partial(feed, step))
    stream: Any = referee.spectators.Watch(admin_pb.WatchRequest(match_id=MATCH_ID), timeout=WAIT)
    first = [next(stream) for _ in range(4)]
    assert [m.WhichOneof("message") for m in first] == ["start", "event", "event", "event"]
    assert referee.call(lambda: hub.watchers(MATCH_ID)) == 1
    for step in game_steps[3:]:
        referee.call(functools.partial(feed, step))
    final = game_steps[-1].after
    referee.call(lambda: hub.ended(MATCH_ID, normal_end(final)))
    rest = list(stream)
    assert rest[-1].WhichOneof("message") == "match_end"
    events = [m for m in first + rest if m.WhichOneof("message") == "event"]
    assert len(events) == len(game_steps)
    assert [e.event.step.seat for e in events] == [s.seat for s in game_steps]
    assert stream.code() is grpc.StatusCode.OK


def test_watch_refuses_unknown_finished_and_missing_ids(
    referee: AdminServer,
) -> None:
    storage = referee.arena.storage

    def status(match_id: str) -> tuple[grpc.StatusCode, str]:
        with pytest.raises(grpc.RpcError) as info:
            list(referee.spectators.Watch(admin_pb.WatchRequest(match_id=match_id), timeout=WAIT))
        error: Any = info.value
        return error.code(), error.details()

    assert status("") == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "match_id: missing; expected a match id",
    )
    assert status("nope") == (grpc.StatusCode.NOT_FOUND, "no match has id 'nope'")
    storage.save_match(stored_match("stored", ("alice", "bob"), 0))
    assert status("stored") == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "match stored is over: get its record with 'domino-arena record stored'",
    )
    game = make_game("passing")
    referee.call(lambda: referee.hub.started(spec_of(game, match_id="just-ended")))
    aborted = MatchResult(Termination.ABORTED, None, (0, 0))
    referee.call(lambda: referee.hub.ended("just-ended", aborted))
    code, _ = status("just-ended")
    assert code is grpc.StatusCode.FAILED_PRECONDITION


def test_a_spectator_that_falls_behind_ends_resource_exhausted(referee: AdminServer) -> None:
    game = make_game("passing")
    referee.hub.max_pending = 3
    referee.call(lambda: referee.hub.started(spec_of(game, 5)))
    stream: Any = referee.spectators.Watch(admin_pb.WatchRequest(match_id=MATCH_ID), timeout=WAIT)
    assert next(stream).WhichOneof("message") == "start"
    feed = referee.hub.on_step(MATCH_ID)
    ten = list(steps(game, 5))[:10]
    referee.call(lambda: [feed(step) for step in ten])  # at once: the stream cannot read between
    with pytest.raises(grpc.RpcError) as info:
        list(stream)
    error: Any = info.value
    assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "a match never waits for its spectators" in error.details()


def test_the_hub_refuses_a_queue_bound_below_one() -> None:
    with pytest.raises(ValueError, match="max_pending: expected at least 1, got 0"):
        SpectatorHub(max_pending=0)


def test_a_table_is_a_spectators_view_and_a_table_with_a_hand_is_refused() -> None:
    state = make_game("straight").new_game(5)
    with pytest.raises(ConversionError, match="table: the observation of seat 0"):
        table_to_proto(state.observe(0))
    seat_view = observation_to_proto(state.observe(state.current_seat))
    with pytest.raises(ConversionError, match=r"table\.hand: \d+ tiles; expected none"):
        spectator_table_from_proto(seat_view)
    del seat_view.hand[:]
    with pytest.raises(ConversionError, match=r"table\.legal_actions: \d+ actions; expected none"):
        spectator_table_from_proto(seat_view)


def test_list_live_names_the_watchable_matches_and_where_they_stand(
    referee: AdminServer,
) -> None:
    game = make_game("doubles")
    hub = referee.hub
    feed = hub.on_step(MATCH_ID)
    referee.call(lambda: hub.started(spec_of(game, 3)))
    game_steps = list(steps(game, 3))[:5]
    for step in game_steps:
        referee.call(functools.partial(feed, step))
    live = referee.spectators.ListLive(admin_pb.ListLiveRequest(), timeout=WAIT)
    (match,) = live.matches
    assert match.match_id == MATCH_ID
    assert list(match.players) == list(spec_of(game).bots)
    assert game_from_proto(match.game) == game
    assert match.steps == 5
    assert list(match.scores) == list(game_steps[-1].after.scores)
    assert match.started.seconds > 0
    assert list(live.connected) == []  # the fake arena's lobby has nobody connected
    aborted = MatchResult(Termination.ABORTED, None, game_steps[-1].after.scores)
    referee.call(lambda: hub.ended(MATCH_ID, aborted))
    assert not referee.spectators.ListLive(admin_pb.ListLiveRequest(), timeout=WAIT).matches


def test_the_sdk_spectator_lists_and_follows_a_match_in_the_rules_own_types(
    referee: AdminServer,
) -> None:
    game = make_game("moon")
    hub = referee.hub
    game_steps = list(steps(game, 4))
    feed = hub.on_step(MATCH_ID)
    referee.call(lambda: hub.started(spec_of(game, 4)))
    for step in game_steps[:3]:
        referee.call(functools.partial(feed, step))
    referee.arena.ladders["default", "moon"] = FakeLadder(
        game, TimeControl(), FaultPolicy.SUBSTITUTE, 3, 1000, 2, 77, started=4, finished=1
    )

    async def follow() -> tuple[Lobby, list[WatchItem]]:
        async with Spectator(referee.address) as spectator:
            lobby = await spectator.lobby()
            items: list[WatchItem] = []
            async for item in spectator.watch(MATCH_ID):
                items.append(item)
                if len(items) == 4:  # the start and the three steps so far
                    for step in game_steps[3:]:
                        await asyncio.to_thread(referee.call, functools.partial(feed, step))
                    end = functools.partial(hub.ended, MATCH_ID, normal_end(game_steps[-1].after))
                    await asyncio.to_thread(referee.call, end)
            with pytest.raises(WatchError) as refused:
                async for _ in spectator.watch("nobody"):
                    pass
            assert refused.value.code == "NOT_FOUND"
            return lobby, items

    lobby, items = asyncio.run(follow())
    assert lobby.ladders == (LiveLadder(game, started=4, finished=1),)
    assert [m.match_id for m in lobby.matches] == [MATCH_ID]
    assert lobby.matches[0].game == game and lobby.matches[0].steps == 3
    start, *rest = items
    assert isinstance(start, WatchStarted) and start.game == game
    watched = [i for i in rest if isinstance(i, WatchedStep)]
    assert [w.entry.seat for w in watched] == [s.seat for s in game_steps]
    assert [w.table is not None for w in watched[:3]] == [False, False, True]
    for w, step in zip(watched[2:], game_steps[2:], strict=True):
        assert w.table == step.after.observe(SPECTATOR)
    assert any(isinstance(i, WatchedHandEnd) for i in rest)
    end = rest[-1]
    assert isinstance(end, WatchedEnd) and end.termination is Termination.NORMAL


@pytest.mark.parametrize("game", CONFIGS, ids=CONFIG_IDS)
def test_steps_nobody_watched_reach_the_first_watcher_as_a_watched_match_would_send_them(
    game: Game,
) -> None:
    seed = seeds_for(game)[0]
    watched, unwatched = SpectatorHub(max_pending=100_000), SpectatorHub(max_pending=100_000)
    for hub in (watched, unwatched):
        hub.started(spec_of(game, seed))
    always = watched.subscribe(MATCH_ID)
    feeds = (watched.on_step(MATCH_ID), unwatched.on_step(MATCH_ID))
    state = game.new_game(seed)
    seen: list[admin_pb.SpectatorMessage] = []
    fed = 0
    for number, step in enumerate(steps(game, seed)):
        fed += 1
        for feed in feeds:
            feed(step)
        state = step.after
        seen.extend(m for m in drain(always) if isinstance(m, admin_pb.SpectatorMessage))
        if number == 60:
            break
    (live,) = unwatched.live()
    assert (live.steps, live.deal, live.scores) == (fed, state.deal_number, tuple(state.scores))
    late = unwatched.subscribe(MATCH_ID)
    backlog = [m for m in drain(late) if isinstance(m, admin_pb.SpectatorMessage)]
    # The same public messages as a watched match's (whose hidden tiles the test above checks).
    assert [without_table(m) for m in backlog] == [without_table(m) for m in seen]
    events = [i for i, m in enumerate(backlog) if m.WhichOneof("message") == "event"]
    assert [i for i, m in enumerate(backlog) if m.HasField("table")] == events[-1:]
    assert backlog[events[-1]].table == seen[events[-1]].table, "the table after the last step"
