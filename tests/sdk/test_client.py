"""The SDK client (sdk/client/, sdk/runner.py) against a scripted fake referee.

The fake is a grpc.aio ``BotService`` servicer on port 0 in the test's own event loop. It plays
the referee's side of the protocol minimally: it checks the Hello, answers Welcome or an Error,
then runs the script a test gives for that connection (send MatchStart, requests, events...;
read the replies; drop the stream). The bots are real SDK bots; the waits between reconnection
attempts go through an injected sleep that records the delay and does not wait. Every await has
a timeout that only matters if a test fails.

Ctrl-C and SIGTERM are tested on a real ``run()`` in a child process, as a person would stop it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

import grpc
import pytest

from domino_arena.sdk import (
    AsyncBot,
    AuthenticationError,
    Backoff,
    Bot,
    ConnectionLostError,
    FaultInfo,
    HandEndInfo,
    MatchEndInfo,
    MatchEvent,
    MatchStartInfo,
    ProtocolError,
    TakenOverError,
    TimeLimits,
    current_clock,
    run_async,
)
from domino_arena.sdk.client import CLIENT, PROTOCOL_VERSION, Connection, Players
from domino_arena.sdk.match.results import FaultKind
from domino_arena.sdk.rules import (
    GAMES,
    Action,
    Game,
    HandEnd,
    HandResult,
    LogEntry,
    Observation,
    Outcome,
    make_game,
)
from domino_arena.sdk.wire import (
    action_from_proto,
    event_to_proto,
    game_to_proto,
    hand_result_to_proto,
    observation_to_proto,
    step_to_proto,
)
from domino_arena.v1 import referee_pb2 as pb
from domino_arena.v1 import referee_pb2_grpc as pb_grpc

WAIT: Final = 10.0
"""Seconds a single wait may take before the test fails (never reached when it passes)."""

TOKEN: Final = "s3cret"
ROOT: Final = Path(__file__).resolve().parents[2]

T = TypeVar("T")


async def within(awaitable: Awaitable[T]) -> T:
    return await asyncio.wait_for(awaitable, WAIT)


def run_test(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(asyncio.wait_for(main(), WAIT * 3))


# -- the fake referee -----------------------------------------------------------------------------


class Stream:
    """The referee's end of one bot stream, as a script drives it."""

    def __init__(self, context: grpc.aio.ServicerContext[pb.BotMessage, pb.RefereeMessage]) -> None:
        self.context = context
        self.batches = 0
        """ReplyBatch messages read so far."""
        self._unread: list[pb.ActionReply] = []

    async def send(self, **message: Any) -> None:
        await self.context.write(pb.RefereeMessage(**message))

    async def reply(self) -> pb.ActionReply:
        """The next reply, alone or from a ReplyBatch."""
        if not self._unread:
            message = await within(self.context.read())
            assert isinstance(message, pb.BotMessage), f"the stream ended: {message!r}"
            kind = message.WhichOneof("message")
            assert kind in ("reply", "replies"), message
            if kind == "replies":
                assert len(message.replies.replies) > 1, "a batch of one is a plain reply"
                self.batches += 1
            self._unread = [message.reply] if kind == "reply" else list(message.replies.replies)
        return self._unread.pop(0)

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        await self.context.abort(code, details)


Script = Callable[[Stream], Awaitable[None]]


@dataclass(frozen=True)
class Refuse:
    """In place of a script: end the stream with this status before any Welcome."""

    code: grpc.StatusCode
    details: str


class FakeReferee(pb_grpc.BotServiceServicer):
    """Checks the Hello, welcomes a bot named ``alice`` with the right token, runs a script."""

    def __init__(self, *scripts: Script | Refuse) -> None:
        self.scripts = list(scripts)
        self.hellos: list[pb.Hello] = []
        self.ended = asyncio.Event()
        """Set when a script's stream handler finished (the bot went away or was dropped)."""

    async def Play(  # type: ignore[override]  # noqa: N802
        self,
        request_iterator: AsyncIterator[pb.BotMessage],
        context: grpc.aio.ServicerContext[pb.BotMessage, pb.RefereeMessage],
    ) -> None:
        try:
            first = await context.read()
            assert isinstance(first, pb.BotMessage)
            hello = first.hello
            self.hellos.append(hello)
            if hello.name != "alice" or hello.token != TOKEN:
                error = pb.Error(
                    code=pb.ERROR_CODE_UNAUTHENTICATED,
                    message=f"wrong token for bot '{hello.name}'",
                    field="hello.token",
                )
                await context.write(pb.RefereeMessage(error=error))
                await context.abort(grpc.StatusCode.UNAUTHENTICATED, error.message)
            script: Script | Refuse | None = self.scripts.pop(0) if self.scripts else None
            if script is None:
                await context.abort(grpc.StatusCode.UNAVAILABLE, "no script left")
            if isinstance(script, Refuse):
                await context.abort(script.code, script.details)
            welcome = pb.Welcome(name=hello.name, protocol_version=2, games=hello.games)
            await context.write(pb.RefereeMessage(welcome=welcome))
            await script(Stream(context))
        finally:
            self.ended.set()


async def serve(fake: pb_grpc.BotServiceServicer) -> tuple[grpc.aio.Server, str]:
    server = grpc.aio.server()
    pb_grpc.add_BotServiceServicer_to_server(fake, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, f"127.0.0.1:{port}"


class Sleeps:
    """An injected sleep: records each delay, waits for nothing."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)


@contextlib.contextmanager
def refused_address() -> Iterator[str]:
    """Yield an address on loopback where nothing listens, for as long as the block runs.

    The port stays bound (never listening, so a connection is refused) until the block ends,
    so nothing else can take it between choosing it and dialling it.
    """
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
        yield f"127.0.0.1:{port}"


# -- match material -------------------------------------------------------------------------------

PASSING = make_game("passing", players=2)
MOON = make_game("moon")


def start_message(match_id: str, game: Game, seat: int, **extra: Any) -> pb.MatchStart:
    return pb.MatchStart(
        match_id=match_id,
        game=game_to_proto(game),
        seat=seat,
        players=[f"p{s}" for s in range(game.num_players)],
        time_control=pb.TimeControl(move_ms=1000, bank_ms=10000, grace_ms=50),
        fault_policy=pb.FAULT_POLICY_SUBSTITUTE,
        max_strikes=3,
        **extra,
    )


def request_message(match_id: str, turn: int, observation: Observation) -> pb.ActionRequest:
    return pb.ActionRequest(
        match_id=match_id,
        turn=turn,
        observation=observation_to_proto(observation),
        clock=pb.Clock(move_ms=900, bank_ms=8000),
    )


def to_move(game: Game, seed: int) -> Observation:
    """The observation of the seat to move in a new game (after the deal)."""
    state = game.new_game(seed)
    return state.observe(state.current_seat)


class Recorder(Bot):
    """Answers the first legal action and records every hook call with its argument."""

    def __init__(self, barrier: threading.Barrier | None = None) -> None:
        self.barrier = barrier
        self.calls: list[tuple[str, object]] = []
        self.ended = asyncio.Event()
        self.threads: set[str] = set()

    def choose(self, observation: Observation) -> Action:
        self.threads.add(threading.current_thread().name)
        self.calls.append(("choose", current_clock()))
        if self.barrier is not None:
            self.barrier.wait()  # both matches must be thinking at once to pass
        return observation.legal_actions[0]

    def on_match_start(self, info: MatchStartInfo) -> None:
        self.calls.append(("start", info))

    def on_event(self, event: MatchEvent) -> None:
        self.calls.append(("event", event))

    def on_hand_end(self, hand: HandEndInfo) -> None:
        self.calls.append(("hand", hand))

    def on_fault(self, fault: FaultInfo) -> None:
        self.calls.append(("fault", fault))

    def on_match_end(self, result: MatchEndInfo) -> None:
        self.calls.append(("end", result))
        self.ended.set()

    def hooks(self, name: str) -> list[Any]:
        return [arg for call, arg in self.calls if call == name]


# -- hello, welcome and refusals ------------------------------------------------------------------


def test_hello_names_the_bot_its_games_and_the_protocol() -> None:
    async def main() -> None:
        async def script(stream: Stream) -> None:
            await stream.abort(grpc.StatusCode.UNAVAILABLE, "bye")

        fake = FakeReferee(script)
        server, address = await serve(fake)
        try:
            connection = Connection(
                Players(Recorder()), server=address, name="alice", token=TOKEN, games=["moon"]
            )
            with pytest.raises(ConnectionLostError) as lost:
                await within(connection.serve())
            assert lost.value.code == "UNAVAILABLE" and lost.value.message == "bye"
            assert connection.welcome is not None and connection.welcome.games == ("moon",)
        finally:
            await server.stop(None)
        (hello,) = fake.hellos
        assert (hello.name, hello.token, list(hello.games)) == ("alice", TOKEN, ["moon"])
        assert hello.protocol_version == PROTOCOL_VERSION == 2
        assert hello.client == CLIENT and CLIENT.startswith("domino-arena-sdk/")

    run_test(main)


def test_games_default_to_every_registered_game() -> None:
    connection = Connection(Players(Recorder()), server="x:1", name="alice", token=TOKEN)
    assert connection.games == tuple(sorted(GAMES))
    with pytest.raises(ValueError, match=r"unknown game.*chess.*expected some of doubles"):
        Connection(Players(Recorder()), server="x:1", name="a", token="t", games=["chess"])


def test_wrong_token_raises_authentication_error_with_the_referees_words_and_no_retry() -> None:
    async def main() -> None:
        fake = FakeReferee()
        server, address = await serve(fake)
        sleeps = Sleeps()
        try:
            with pytest.raises(AuthenticationError) as refused:
                await within(
                    run_async(Recorder(), server=address, name="alice", token="nope", sleep=sleeps)
                )
        finally:
            await server.stop(None)
        error = refused.value
        assert error.code == "UNAUTHENTICATED"
        assert error.message == "wrong token for bot 'alice'"
        assert not error.retryable
        assert "wrong token for bot 'alice'" in str(error)
        assert len(fake.hellos) == 1 and sleeps.delays == []

    run_test(main)


def test_a_refusing_grpc_status_without_an_in_band_error_is_typed_too() -> None:
    class Refuses(pb_grpc.BotServiceServicer):
        async def Play(  # type: ignore[override]  # noqa: N802
            self, request_iterator: AsyncIterator[pb.BotMessage], context: Any
        ) -> None:
            await context.read()
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "games: none known")

    async def main() -> None:
        server, address = await serve(Refuses())
        try:
            with pytest.raises(ProtocolError, match="INVALID_ARGUMENT: games: none known"):
                await within(run_async(Recorder(), server=address, name="alice", token=TOKEN))
        finally:
            await server.stop(None)

    run_test(main)


def test_connection_refused_is_a_lost_connection_when_not_reconnecting() -> None:
    async def main() -> None:
        with refused_address() as address, pytest.raises(ConnectionLostError) as lost:
            await within(
                run_async(Recorder(), server=address, name="a", token="t", reconnect=False)
            )
        assert lost.value.code == "UNAVAILABLE" and lost.value.retryable

    run_test(main)


# -- two matches at once --------------------------------------------------------------------------


def test_two_concurrent_matches_replies_echo_match_and_turn_and_hooks_get_sdk_types() -> None:
    bots: list[Recorder] = []
    barrier = threading.Barrier(2, timeout=WAIT)

    def factory() -> Recorder:
        bots.append(Recorder(barrier))
        return bots[-1]

    passing_view = to_move(PASSING, seed=3)
    moon_view = to_move(MOON, seed=4)
    replies: list[pb.ActionReply] = []

    async def script(stream: Stream) -> None:
        await stream.send(match_start=start_message("m1", PASSING, passing_view.seat))
        await stream.send(match_start=start_message("m2", MOON, moon_view.seat, partners=[]))
        await stream.send(request=request_message("m1", 7, passing_view))
        await stream.send(request=request_message("m2", 4, moon_view))
        replies.extend([await stream.reply(), await stream.reply()])
        (m1_reply,) = [reply for reply in replies if reply.match_id == "m1"]
        step = LogEntry(passing_view.seat, action_from_proto(m1_reply.action))
        await stream.send(event=pb.Event(match_id="m1", step=step_to_proto(step), scores=[0, 0]))
        hand = HandResult(1, HandEnd.DOMINO, (0, 23), "seat 1 went out")
        await stream.send(hand_end=hand_result_to_proto(hand, [0, 23], "m1"))
        fault = pb.Fault(match_id="m2", turn=4, kind=pb.FAULT_KIND_TIMEOUT, reason="2.1 s")
        await stream.send(fault=fault)
        for match_id, winner, sides in (("m1", 1, [0, 1]), ("m2", -1, [0, 1, 2])):
            result = pb.MatchResult(
                termination=pb.TERMINATION_NORMAL if winner >= 0 else pb.TERMINATION_ABORTED,
                winner=winner,
                scores=[40, 101] if winner >= 0 else [3, 5, 0],
                side_of_seat=sides,
                faulted_seat=-1,
                detail="side 1 reached 101" if winner >= 0 else "referee shut down",
            )
            await stream.send(match_end=pb.MatchEnd(match_id=match_id, result=result))
        await within(asyncio.gather(*(bot.ended.wait() for bot in bots)))

    async def main() -> None:
        fake = FakeReferee(script)
        server, address = await serve(fake)
        task = asyncio.create_task(
            run_async(factory, server=address, name="alice", token=TOKEN, sleep=Sleeps())
        )
        try:
            await within(fake.ended.wait())
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await server.stop(None)

    run_test(main)

    by_match = {reply.match_id: reply for reply in replies}
    assert sorted(by_match) == ["m1", "m2"]
    assert by_match["m1"].turn == 7 and by_match["m2"].turn == 4
    assert action_from_proto(by_match["m1"].action) == passing_view.legal_actions[0]
    assert action_from_proto(by_match["m2"].action) == moon_view.legal_actions[0]

    assert len(bots) == 2, "the factory makes one bot per match"
    first, second = bots
    assert not first.threads & {threading.main_thread().name}, "choose runs in a worker thread"
    (start,) = first.hooks("start")
    assert isinstance(start, MatchStartInfo)
    assert (start.match_id, start.game, start.seat) == ("m1", PASSING, passing_view.seat)
    assert start.time_limits == TimeLimits(1000, 10000, 50)
    assert start.fault_policy == "substitute" and start.max_strikes == 3
    assert start.players == ("p0", "p1") and not start.resumed and start.snapshot is None
    (clock,) = first.hooks("choose")
    assert clock is not None and (clock.move_ms, clock.bank_ms) == (900, 8000)
    assert 0.0 < clock.remaining() <= 0.9
    (event,) = first.hooks("event")
    assert isinstance(event, MatchEvent) and event.match_id == "m1"
    assert event.step == LogEntry(passing_view.seat, passing_view.legal_actions[0])
    (hand_info,) = first.hooks("hand")
    assert hand_info == HandEndInfo(
        "m1", HandResult(1, HandEnd.DOMINO, (0, 23), "seat 1 went out"), (0, 23)
    )
    (end,) = first.hooks("end")
    assert isinstance(end, MatchEndInfo)
    assert (end.termination, end.winner, end.scores, end.seat) == (
        "normal",
        1,
        (40, 101),
        passing_view.seat,
    )
    assert end.outcome == Outcome(1, (40, 101), PASSING.sides, "side 1 reached 101")

    assert second.hooks("start")[0].game == MOON
    (fault_info,) = second.hooks("fault")
    assert fault_info == FaultInfo("m2", 4, FaultKind.TIMEOUT, "2.1 s", 0, False)
    (aborted,) = second.hooks("end")
    assert (aborted.termination, aborted.winner, aborted.outcome) == ("aborted", None, None)


class Watcher(Bot):
    """Plays the first legal action; keeps every observation and every event it is given."""

    def __init__(self) -> None:
        self.observations: list[Observation] = []
        self.events: list[MatchEvent] = []
        self.ended = asyncio.Event()

    def choose(self, observation: Observation) -> Action:
        self.observations.append(observation)
        return observation.legal_actions[0]

    def on_event(self, event: MatchEvent) -> None:
        self.events.append(event)

    def on_match_end(self, result: MatchEndInfo) -> None:
        self.ended.set()


def test_a_bot_gets_whole_observations_built_from_the_events_the_messages_carry() -> None:
    """Protocol 2: requests come without history; the client keeps it from the carried events.

    The script plays a whole 2-player Passing game as the referee would talk to seat 0: each
    step's event (seat 0's own too) waits for seat 0's next message, which may be a request, a
    hand end or the match end; some messages share a RefereeBatch; one request is sent twice
    with the older turn first (the stale one is skipped, its events are not lost).
    """
    bot = Watcher()
    owed: list[Observation] = []
    steps: list[LogEntry] = []

    async def script(stream: Stream) -> None:
        state = PASSING.new_game(7, first_seat=0)
        rng = random.Random(7)
        events: list[pb.Event] = []
        await stream.send(match_start=start_message("m", PASSING, 0))
        turn = 0
        while not state.is_terminal():
            seat = state.current_seat
            if state.is_chance():
                action: Action = state.legal_actions()[0]
            elif seat == 0:
                turn += 1
                owed.append(state.observe(0))
                request = pb.RefereeMessage()
                request.request.match_id = "m"
                request.request.turn = turn
                request.request.observation.CopyFrom(
                    observation_to_proto(state.observe(0), history=False)
                )
                request.request.events.extend(events)
                events = []
                if turn % 5 == 0:  # a stale copy first: skipped, but its events count
                    stale = pb.RefereeMessage()
                    stale.CopyFrom(request)
                    stale.request.turn = turn - 1
                    request.request.ClearField("events")
                    await stream.send(batch=pb.RefereeBatch(messages=[stale, request]))
                else:
                    await stream.send(request=request.request)
                reply = await stream.reply()
                assert reply.turn == turn
                action = action_from_proto(reply.action)
            else:
                action = rng.choice(state.legal_actions())
            after = state.apply(action)
            steps.append(LogEntry(seat, action))
            events.append(event_to_proto(LogEntry(seat, action), after.scores, after.deal_number))
            for hand in after.hand_results[len(state.hand_results) :]:
                hand_end = hand_result_to_proto(hand, after.scores, "m")
                hand_end.events.extend(events)
                events = []
                await stream.send(hand_end=hand_end)
            state = after
        end = pb.MatchEnd(match_id="m", events=events)
        end.result.termination = pb.TERMINATION_NORMAL
        await stream.send(match_end=end)
        await within(bot.ended.wait())

    async def main() -> None:
        fake = FakeReferee(script)
        server, address = await serve(fake)
        task = asyncio.create_task(run_async(bot, server=address, name="alice", token=TOKEN))
        try:
            await within(fake.ended.wait())
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await server.stop(None)

    run_test(main)
    assert len(owed) > 20 and any(o.deal > 1 for o in owed), "several deals were played"
    assert bot.observations == owed
    assert [event.step for event in bot.events] == steps
    assert all(event.match_id == "m" for event in bot.events)


def test_replies_waiting_while_one_is_written_go_out_together_as_one_batch() -> None:
    """The first reply is written at once; the two made during that write share the next."""
    written: list[pb.BotMessage] = []
    first_write = asyncio.Event()
    release = asyncio.Event()
    bot = Watcher()
    views = [to_move(PASSING, seed) for seed in (1, 2, 3)]

    async def send(message: pb.BotMessage) -> None:
        written.append(message)
        first_write.set()
        await release.wait()

    async def main() -> None:
        connection = Connection(Players(bot), server="unused:1", name="alice", token=TOKEN)
        connection._send = send  # type: ignore[method-assign]  # no stream: see what is written
        for n, view in enumerate(views):
            start = start_message(f"m{n}", PASSING, view.seat)
            connection._dispatch(pb.RefereeMessage(match_start=start), 0.0)
        connection._dispatch(pb.RefereeMessage(request=request_message("m0", 1, views[0])), 0.0)
        await within(first_write.wait())
        for n in (1, 2):
            request = request_message(f"m{n}", 1, views[n])
            connection._dispatch(pb.RefereeMessage(request=request), 0.0)
        while len(connection._replies) < 2:  # both made while the first is being written
            await asyncio.sleep(0)
        release.set()
        while len(written) < 2:
            await asyncio.sleep(0)
        await connection._stop_matches()

    run_test(main)
    first, second = written
    assert first.WhichOneof("message") == "reply" and first.reply.match_id == "m0"
    assert second.WhichOneof("message") == "replies"
    assert [r.match_id for r in second.replies.replies] == ["m1", "m2"]


def test_a_shared_bot_object_serves_every_match_one_call_at_a_time() -> None:
    bot = Recorder()
    replies: list[pb.ActionReply] = []
    views = [to_move(PASSING, seed) for seed in (1, 2, 3)]

    async def script(stream: Stream) -> None:
        for n, view in enumerate(views):
            await stream.send(match_start=start_message(f"m{n}", PASSING, view.seat))
            await stream.send(request=request_message(f"m{n}", 1, view))
        replies.extend([await stream.reply() for _ in views])

    async def main() -> None:
        fake = FakeReferee(script)
        server, address = await serve(fake)
        task = asyncio.create_task(run_async(bot, server=address, name="alice", token=TOKEN))
        try:
            await within(fake.ended.wait())
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await server.stop(None)

    run_test(main)
    assert sorted(r.match_id for r in replies) == ["m0", "m1", "m2"]
    assert [s.match_id for s in bot.hooks("start")] == ["m0", "m1", "m2"]
    assert len(bot.hooks("choose")) == 3


class Broken(Bot):
    """Raises on its first request and answers text on its second."""

    def __init__(self) -> None:
        self.asked = 0

    def choose(self, observation: Observation) -> Any:
        self.asked += 1
        if self.asked == 1:
            raise RuntimeError("bug in my bot")
        return "play 6-6"


def test_a_think_cut_short_keeps_a_shared_bot_until_its_thread_is_done() -> None:
    """Cancelled mid-think (match over, connection lost), the bot stays locked: never two
    threads in one bot at once."""
    entered = threading.Event()
    release = threading.Event()
    calls: list[str] = []
    view = to_move(PASSING, seed=8)

    def slow(observation: Observation) -> object:
        calls.append("slow")
        entered.set()
        release.wait(WAIT)
        return observation.legal_actions[0]

    def quick(observation: Observation) -> object:
        calls.append("quick")
        return observation.legal_actions[-1]

    async def main() -> None:
        players = Players(Recorder())
        player = players.for_match("m1")
        assert players.for_match("m2") is player, "one bot object serves every match"
        try:
            first = asyncio.create_task(players.in_thread(player, slow, view))
            await within(asyncio.to_thread(entered.wait, WAIT))
            first.cancel()
            await asyncio.gather(first, return_exceptions=True)
            assert first.cancelled() and player.lock.locked()
            second = asyncio.create_task(players.in_thread(player, quick, view))
            for _ in range(5):
                await asyncio.sleep(0)
            assert calls == ["slow"] and not second.done()
            release.set()
            assert await within(second) == view.legal_actions[-1]
            assert calls == ["slow", "quick"] and not player.lock.locked()
        finally:
            release.set()
            players.close()

    run_test(main)


def test_a_bot_that_raises_sends_its_error_and_one_that_answers_text_an_empty_reply(
    caplog: pytest.LogCaptureFixture,
) -> None:
    view = to_move(PASSING, seed=5)
    replies: list[pb.ActionReply] = []

    async def script(stream: Stream) -> None:
        await stream.send(match_start=start_message("m1", PASSING, view.seat))
        for turn in (1, 2):
            await stream.send(request=request_message("m1", turn, view))
            replies.append(await stream.reply())

    async def main() -> None:
        fake = FakeReferee(script)
        server, address = await serve(fake)
        task = asyncio.create_task(run_async(Broken(), server=address, name="alice", token=TOKEN))
        try:
            await within(fake.ended.wait())
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await server.stop(None)

    run_test(main)
    assert [(r.match_id, r.turn, r.HasField("action")) for r in replies] == [
        ("m1", 1, False),
        ("m1", 2, False),
    ]
    assert replies[0].error == pb.BotError(type="RuntimeError", message="bug in my bot")
    assert not replies[1].HasField("error")
    text = caplog.text
    assert (
        "match m1 turn 1: choose raised RuntimeError: bug in my bot; sending it to the referee"
    ) in text
    assert 'raise RuntimeError("bug in my bot")' in text, "the traceback is logged locally"
    assert "match m1 turn 2: choose returned 'play 6-6', not an action" in text


class Thinker(AsyncBot):
    """An async bot: awaits before answering, records its hooks."""

    def __init__(self) -> None:
        self.started: list[str] = []

    async def choose(self, observation: Observation) -> Action:
        await asyncio.sleep(0)
        return observation.legal_actions[-1]

    async def on_match_start(self, info: MatchStartInfo) -> None:
        self.started.append(info.match_id)


def test_an_async_bot_is_awaited_on_the_loop() -> None:
    view = to_move(MOON, seed=9)
    bot = Thinker()
    replies: list[pb.ActionReply] = []

    async def script(stream: Stream) -> None:
        await stream.send(match_start=start_message("m9", MOON, view.seat))
        await stream.send(request=request_message("m9", 1, view))
        replies.append(await stream.reply())

    async def main() -> None:
        fake = FakeReferee(script)
        server, address = await serve(fake)
        task = asyncio.create_task(run_async(bot, server=address, name="alice", token=TOKEN))
        try:
            await within(fake.ended.wait())
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await server.stop(None)

    run_test(main)
    assert bot.started == ["m9"]
    (reply,) = replies
    assert action_from_proto(reply.action) == view.legal_actions[-1]


def test_requests_overtaken_while_the_bot_thinks_are_skipped_and_late_replies_dropped() -> None:
    """Turn 1 is answered after turns 2 and 3 arrived: its reply is dropped, 2 is never asked."""
    thinking = threading.Event()
    release = threading.Event()
    asked: list[int] = []
    other_started = asyncio.Event()

    class Slow(Bot):
        def choose(self, observation: Observation) -> Action:
            asked.append(len(asked))
            thinking.set()
            release.wait(WAIT)
            return observation.legal_actions[0]

        def on_match_start(self, info: MatchStartInfo) -> None:
            if info.match_id == "m2":
                other_started.set()  # so every message sent before it was routed

    view = to_move(PASSING, seed=6)
    replies: list[pb.ActionReply] = []

    async def script(stream: Stream) -> None:
        await stream.send(match_start=start_message("m1", PASSING, view.seat))
        await stream.send(request=request_message("m1", 1, view))
        await within(asyncio.to_thread(thinking.wait, WAIT))
        for turn in (2, 3):
            await stream.send(request=request_message("m1", turn, view))
        await stream.send(match_start=start_message("m2", PASSING, view.seat))
        await within(other_started.wait())
        release.set()
        replies.append(await stream.reply())

    async def main() -> None:
        fake = FakeReferee(script)
        server, address = await serve(fake)
        task = asyncio.create_task(run_async(Slow, server=address, name="alice", token=TOKEN))
        try:
            await within(fake.ended.wait())
        finally:
            release.set()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await server.stop(None)

    run_test(main)
    assert [(r.match_id, r.turn) for r in replies] == [("m1", 3)]
    assert asked == [0, 1], "turn 2 was never asked"


@pytest.mark.parametrize("in_band", [True, False], ids=["in-band-error", "aborted-status"])
def test_a_takeover_by_another_stream_stops_without_retrying(in_band: bool) -> None:
    """The referee says ALREADY_CONNECTED in-band, or only ends the stream with ABORTED."""
    release = asyncio.Event()

    async def script(stream: Stream) -> None:
        if in_band:
            error = pb.Error(
                code=pb.ERROR_CODE_ALREADY_CONNECTED, message="another stream took over"
            )
            await stream.send(error=error)
            await release.wait()  # the stream stays open: the error alone must stop the bot
        else:
            await stream.abort(grpc.StatusCode.ABORTED, "another stream of bot 'alice' took over")

    async def main() -> None:
        fake = FakeReferee(script)
        server, address = await serve(fake)
        sleeps = Sleeps()
        try:
            with pytest.raises(TakenOverError) as taken:
                await within(
                    run_async(Recorder(), server=address, name="alice", token=TOKEN, sleep=sleeps)
                )
        finally:
            release.set()
            await server.stop(None)
        assert sleeps.delays == [] and len(fake.hellos) == 1
        assert not taken.value.retryable
        if in_band:
            assert (taken.value.code, taken.value.message) == (
                "ALREADY_CONNECTED",
                "another stream took over",
            )
        else:
            assert taken.value.code == "ABORTED"

    run_test(main)


# -- reconnection ---------------------------------------------------------------------------------


def test_reconnects_with_backoff_and_a_resumed_match_gets_its_bot_back() -> None:
    made: list[Recorder] = []

    def factory() -> Recorder:
        made.append(Recorder())
        return made[-1]

    state = PASSING.new_game(seed=11)
    seat = state.current_seat
    first_view = state.observe(seat)
    later = state.apply(first_view.legal_actions[0])
    while later.current_seat != seat:
        later = later.apply(later.legal_actions()[0])
    second_view = later.observe(seat)
    replies: list[pb.ActionReply] = []
    done = asyncio.Event()

    async def before_drop(stream: Stream) -> None:
        await stream.send(match_start=start_message("m1", PASSING, seat))
        await stream.send(request=request_message("m1", 1, first_view))
        replies.append(await stream.reply())
        await stream.abort(grpc.StatusCode.UNAVAILABLE, "referee restarting")

    refuse = Refuse(grpc.StatusCode.INTERNAL, "not ready")

    async def after_drop(stream: Stream) -> None:
        snapshot = observation_to_proto(second_view)
        await stream.send(
            match_start=start_message("m1", PASSING, seat, resumed=True, snapshot=snapshot)
        )
        await stream.send(request=request_message("m1", 2, second_view))
        replies.append(await stream.reply())
        done.set()
        await stream.abort(grpc.StatusCode.CANCELLED, "done")

    async def main() -> None:
        fake = FakeReferee(before_drop, refuse, refuse, after_drop)
        server, address = await serve(fake)
        sleeps = Sleeps()
        task = asyncio.create_task(
            run_async(
                factory,
                server=address,
                name="alice",
                token=TOKEN,
                sleep=sleeps,
                rng=random.Random(7),
                backoff=Backoff(initial=0.1, maximum=5.0, factor=2.0, jitter=0.5),
            )
        )
        try:
            await within(done.wait())
            while len(sleeps.delays) < 4:  # the drop after the last script is retried too
                await within(asyncio.sleep(0))
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await server.stop(None)
        # attempt 0 after the welcomed stream dropped, then 1 and 2 after refusals, then 0 again
        bounds = [(0.05, 0.1), (0.1, 0.2), (0.2, 0.4), (0.05, 0.1)]
        for delay, (low, high) in zip(sleeps.delays, bounds, strict=False):
            assert low <= delay <= high, (sleeps.delays, bounds)

    run_test(main)
    assert [(r.match_id, r.turn) for r in replies] == [("m1", 1), ("m1", 2)]
    assert len(made) == 1, "the resumed match kept its bot"
    (bot,) = made
    starts = bot.hooks("start")
    assert [s.resumed for s in starts] == [False, True]
    assert starts[1].snapshot == second_view
    assert action_from_proto(replies[1].action) == second_view.legal_actions[0]


def test_backoff_grows_to_its_bound_with_jitter() -> None:
    policy = Backoff(initial=0.1, maximum=5.0, factor=2.0, jitter=0.5)
    rng = random.Random(1)
    delays = [policy.delay(n, rng) for n in range(12)]
    for n, delay in enumerate(delays):
        base = min(5.0, 0.1 * 2**n)
        assert base / 2 <= delay <= base
    assert max(delays) <= 5.0 and delays[-1] >= 2.5
    assert policy.delay(10_000, rng) <= 5.0, "no overflow after many attempts"
    assert Backoff(jitter=0.0).delay(0, rng) == 0.1


# -- stopping -------------------------------------------------------------------------------------


def test_cancelling_run_async_closes_the_stream_and_ends_quietly() -> None:
    welcomed = asyncio.Event()
    outcome: list[object] = []

    async def script(stream: Stream) -> None:
        welcomed.set()
        try:
            outcome.append(await stream.context.read())
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise

    async def main() -> None:
        fake = FakeReferee(script)
        server, address = await serve(fake)
        task = asyncio.create_task(run_async(Recorder(), server=address, name="alice", token=TOKEN))
        try:
            await within(welcomed.wait())
            task.cancel()
            results = await within(asyncio.gather(task, return_exceptions=True))
            assert isinstance(results[0], asyncio.CancelledError)
            await within(fake.ended.wait())
        finally:
            await server.stop(None)

    run_test(main)
    assert outcome in (["cancelled"], [grpc.aio.EOF]), outcome


CHILD: Final = """
import logging, sys
from domino_arena.sdk import Backoff, Bot, run
class Idle(Bot):
    def choose(self, observation):
        return observation.legal_actions[0]
run(Idle, server=sys.argv[1], name="alice", token="t", backoff=Backoff(initial=30.0))
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_run_stops_on_ctrl_c_or_sigterm_without_a_traceback(signum: signal.Signals) -> None:
    with refused_address() as address:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, address],
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert child.stderr is not None
        lines: list[str] = []
        try:
            for line in child.stderr:  # the first attempt is refused, then it waits 2.5-5 s
                lines.append(line)
                if "reconnecting in" in line:
                    break
            child.send_signal(signum)
            _, rest = child.communicate(timeout=WAIT)
        finally:
            if child.poll() is None:
                child.kill()
    log = "".join(lines) + rest
    assert child.returncode == 0, log
    assert "Traceback" not in log
    assert f"{signum.name} received: closing the connection" in log
    assert "stopped" in log
