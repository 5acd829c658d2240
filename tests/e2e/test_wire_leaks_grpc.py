"""Over real gRPC, no message the referee sends a seat holds a tile that seat may not see (issue 3).

The referee runs on 127.0.0.1:0 in a background thread (the ``Referee`` harness of
tests/server/test_service.py); four raw ``grpc.aio`` clients, authenticated bots of a temporary
SQLite database, each answer every ActionRequest with a legal action that a seeded
``random.Random`` picks from the request's own legal actions, and keep every message they get (cut
into parts, see below, each serialized again). Two matches of every game configuration (four of
Moon, with a low deal limit) run through ``AdminService.RunMatch``, all at once, so each stream
carries many matches interleaved; the whole module takes about ten seconds.

After the matches the true, omniscient positions are rebuilt by replaying each returned record with
the engine, and every message is placed among them: a request by its turn, an event by its position
in the stream of events, a hand end by its deal, the match start before the first step. Since
protocol version 2 events travel inside the seat's next message and several messages may share one
write (a RefereeBatch), so each wire message is first cut into parts: the messages of a batch, and
in each the events it carries (one part each, placed after their step) followed by the message
without them; the parts hold exactly the wire message's tiles. Each part is decoded with
``RefereeMessage.FromString`` and every ``Tile`` and ``LaidTile`` in it (found through the protobuf
descriptors, so a new field is covered without touching this file) must be in the seat's own hand at
that moment, public (laid or played to a trick), or, for the Moon bidder only, its own widow or
discard. The rules for what a seat may see are those of tests/sdk/test_wire_leaks.py, which checks
the same on messages built in process; this file checks what the running referee actually sends.

Each message is also checked against what the referee owed the seat at the position it was
placed at (the observation, the public step, the hand's score), so the placement the leak check
relies on is itself tested. A self-test plants leaks into recorded wire bytes (another seat's
tile, a boneyard tile, the widow, the bidder's discard) and requires the checker to name each.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import grpc
import pytest

from domino_arena.sdk.match.records import MatchRecord, parse_record, replay
from domino_arena.sdk.rules import (
    CHANCE,
    Discard,
    Game,
    GameState,
    LogEntry,
    MoonGame,
    MoonState,
    PassingState,
    StraightState,
    configurations,
    make_game,
)
from domino_arena.sdk.rules.state import public_entry
from domino_arena.sdk.wire import (
    action_from_proto,
    game_to_proto,
    hand_result_to_proto,
    observation_from_proto,
    step_from_proto,
    step_to_proto,
)
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import games_pb2
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.leaks import leaks, tiles_in
from tests.fakes.referee_server import ADMIN_METADATA, CARRIERS, Referee, unbatched

WAIT: Final = 60.0
"""Seconds any single wait may take before the test fails (never reached when it passes)."""

BOTS: Final = ("ann", "ben", "cat", "dan")
"""The bots; a match of N seats is played by the first N."""

MOON_MAX_DEALS: Final = 3
"""Random bidders rarely reach 21 in Moon: the referee adjudicates a Moon match after this many
deals (RunMatchRequest.max_deals), which keeps the matches short."""


def seeds_for(game: Game) -> tuple[int, ...]:
    """The referee seeds of the matches of ``game``: more for Moon, short and the only game
    with a widow."""
    return (11, 12, 13, 14) if isinstance(game, MoonGame) else (11, 12)


TIME_CONTROL: Final = pb.TimeControl(move_ms=2000, bank_ms=30_000, grace_ms=1000)
"""Generous: a bot here answers at once, and a timeout on a loaded machine would blur the
turn-to-step mapping this test checks (there must be no fault)."""

PLAY_METHOD: Final = "/domino_arena.v1.BotService/Play"


def arena_games() -> list[Game]:
    """Every game configuration."""
    return list(configurations())


def label(game: Game) -> str:
    return "-".join([game.name, *(f"{k}={v}" for k, v in game.options().items())])


GAMES: Final = arena_games()


# -- the bots -------------------------------------------------------------------------------------


def raw_bytes(data: bytes) -> bytes:
    """The response 'deserializer' of the bots: keep exactly what came off the wire."""
    return data


def parts(message: pb.RefereeMessage) -> list[pb.RefereeMessage]:
    """The parts of one (unbatched) message: each event it carries as an Event message of its
    own, in order, then the message without them. Together they hold exactly its tiles."""
    kind = message.WhichOneof("message")
    if kind not in CARRIERS or not getattr(message, kind).events:
        return [message]
    rest = pb.RefereeMessage()
    rest.CopyFrom(message)
    getattr(rest, kind).ClearField("events")
    split = [pb.RefereeMessage(event=event) for event in getattr(message, kind).events]
    split.append(rest)
    assert Counter(tiles_in(message)) == Counter(t for part in split for t in tiles_in(part))
    return split


def match_of(message: pb.RefereeMessage) -> str:
    """The match id a message belongs to ('' for the welcome)."""
    kind = message.WhichOneof("message")
    if kind is None:
        return ""
    return str(getattr(getattr(message, kind), "match_id", ""))


@dataclass
class SeatLog:
    """What one seat of one match received (wire bytes, in order) and what it answered."""

    seat: int = -1
    received: list[bytes] = field(default_factory=list)
    """The parts of the messages received (see the module's docstring), serialized."""
    replies: dict[int, games_pb2.Action] = field(default_factory=dict)
    """The action sent for each turn."""


class WireBot:
    """A bot speaking the protocol by hand over one ``grpc.aio`` ``Play`` stream.

    It answers each request with ``rng.choice(request.observation.legal_actions)``, the rng
    seeded by its name, its seat and the game, so a match is the same whenever it is replayed
    with the same referee seed however the matches interleave.
    """

    def __init__(self, channel: grpc.aio.Channel, name: str, token: str) -> None:
        self.name = name
        self.token = token
        play = channel.stream_stream(
            PLAY_METHOD,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=raw_bytes,
        )
        self.call = play()
        self.matches: dict[str, SeatLog] = {}
        self.stray: list[pb.RefereeMessage] = []
        """Messages of no match after the welcome (there should be none)."""
        self.wire_kinds: Counter[str] = Counter()
        """What each message that came off the wire was (``batch`` for a RefereeBatch)."""
        self._rngs: dict[str, random.Random] = {}
        self._ended: set[str] = set()
        self._changed = asyncio.Condition()

    async def hello(self) -> pb.Welcome:
        hello = pb.Hello(
            name=self.name,
            token=self.token,
            games=sorted({g.name for g in GAMES}),
            protocol_version=2,
            client="wire-leak-test",
        )
        await self.call.write(pb.BotMessage(hello=hello))
        data = await self.call.read()
        assert isinstance(data, bytes), f"{self.name}: the stream ended before the welcome"
        first = pb.RefereeMessage.FromString(data)
        assert first.WhichOneof("message") == "welcome", first
        return first.welcome

    async def serve(self) -> None:
        """Record and answer until the stream ends (the test cancels it)."""
        while True:
            data = await self.call.read()
            if not isinstance(data, bytes):
                return  # the end of the stream
            wire = pb.RefereeMessage.FromString(data)
            self.wire_kinds[str(wire.WhichOneof("message"))] += 1
            for message in unbatched(wire):
                await self.take(message)

    async def take(self, message: pb.RefereeMessage) -> None:
        """Record one message of a match and answer it if it is a request."""
        match_id = match_of(message)
        if not match_id:
            self.stray.append(message)
            return
        log = self.matches.setdefault(match_id, SeatLog())
        log.received.extend(part.SerializeToString() for part in parts(message))
        kind = message.WhichOneof("message")
        if kind == "match_start":
            start = message.match_start
            log.seat = start.seat
            self._rngs[match_id] = random.Random(f"{self.name}/{start.seat}/{start.game}")
        elif kind == "request":
            request = message.request
            action = self._rngs[match_id].choice(list(request.observation.legal_actions))
            log.replies[request.turn] = action
            reply = pb.ActionReply(match_id=match_id, turn=request.turn, action=action)
            await self.call.write(pb.BotMessage(reply=reply))
        elif kind == "match_end":
            async with self._changed:
                self._ended.add(match_id)
                self._changed.notify_all()

    async def wait_ended(self, match_ids: set[str]) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: match_ids <= self._ended)


@dataclass(frozen=True)
class Played:
    """One match as the referee returned it and as each seat received it."""

    game: Game
    seed: int
    response: admin_pb.RunMatchResponse
    seats: tuple[SeatLog, ...]
    """Indexed by seat."""

    @property
    def record(self) -> MatchRecord:
        return parse_record(self.response.record)

    def __str__(self) -> str:
        return f"{label(self.game)} seed {self.seed} (match {self.response.match_id})"


async def run_matches(
    admin: admin_pb_grpc.AdminServiceAsyncStub, plan: Sequence[tuple[Game, int]]
) -> list[admin_pb.RunMatchResponse]:
    """Run every match of ``plan`` at once through ``AdminService.RunMatch``."""
    return list(
        await asyncio.gather(
            *(
                admin.RunMatch(
                    admin_pb.RunMatchRequest(
                        game=game_to_proto(game),
                        bots=BOTS[: game.num_players],
                        has_seed=True,
                        seed=seed,
                        time_control=TIME_CONTROL,
                        max_deals=MOON_MAX_DEALS if isinstance(game, MoonGame) else 0,
                    ),
                    metadata=ADMIN_METADATA,
                    timeout=WAIT,
                )
                for game, seed in plan
            )
        )
    )


async def play_all(
    port: int, tokens: dict[str, str], plan: Sequence[tuple[Game, int]]
) -> list[Played]:
    """Connect the bots to the referee at ``port``, run every match of ``plan`` at once, and
    return what each seat got."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        bots = [WireBot(channel, name, tokens[name]) for name in BOTS]
        readers: list[asyncio.Task[None]] = []
        try:
            for bot in bots:
                welcome = await asyncio.wait_for(bot.hello(), WAIT)
                assert welcome.name == bot.name
                readers.append(asyncio.create_task(bot.serve()))
            matches = asyncio.create_task(
                run_matches(admin_pb_grpc.AdminServiceStub(channel), plan)
            )
            waits: list[asyncio.Future[Any]] = [matches, *readers]
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if matches not in done:
                matches.cancel()
                stopped = next(r for r in readers if r in done)
                stopped.result()  # raises what stopped the bot, if anything did
                raise AssertionError("a bot's stream ended during the matches")
            responses = matches.result()
            for index, bot in enumerate(bots):
                seated = {
                    r.match_id
                    for (game, _), r in zip(plan, responses, strict=True)
                    if index < game.num_players
                }
                await asyncio.wait_for(bot.wait_ended(seated), WAIT)
        finally:
            for bot in bots:
                bot.call.cancel()
            await asyncio.gather(*readers, return_exceptions=True)
    for bot in bots:
        assert bot.stray == [], f"{bot.name} got messages of no match: {bot.stray}"
        assert bot.wire_kinds["event"] == 0, "an event is carried, never sent on its own"
        assert bot.wire_kinds["request"] > 0, bot.wire_kinds
    return [
        Played(
            game,
            seed,
            response,
            tuple(bots[s].matches[response.match_id] for s in range(game.num_players)),
        )
        for (game, seed), response in zip(plan, responses, strict=True)
    ]


# -- the omniscient positions ---------------------------------------------------------------------


@dataclass(frozen=True)
class Timeline:
    """The positions of a replayed match and where each message belongs among them.

    ``states[k]`` is the position before step ``k``; ``states[-1]`` is the last one.
    """

    states: tuple[GameState, ...]
    entries: tuple[LogEntry, ...]
    turn_step: dict[int, int]
    """Request turn -> the step it decided. The referee numbers its requests from 1, one per
    decision when no seat faults or reconnects."""
    hand_state: dict[int, int]
    """Deal -> index of the position right after the step that scored that hand."""


def timeline(record: MatchRecord) -> Timeline:
    """Rebuild every position of ``record`` with the engine."""
    game = make_game(record.game, **record.options)
    state = game.new_game(record.seed, first_seat=record.first_seat)
    states = [state]
    entries: list[LogEntry] = []
    hand_state: dict[int, int] = {}
    for step in record.steps:
        assert step.seat == state.current_seat, f"step {len(entries)}: {step}"
        after = state.apply(step.action)
        entries.append(LogEntry(step.seat, step.action))
        for hand in after.hand_results[len(state.hand_results) :]:
            hand_state[hand.deal] = len(states)
        states.append(after)
        state = after
    decisions = [k for k, entry in enumerate(entries) if entry.seat != CHANCE]
    return Timeline(tuple(states), tuple(entries), dict(enumerate(decisions, start=1)), hand_state)


def position(message: pb.RefereeMessage, events_before: int, line: Timeline) -> int:
    """Index in ``line.states`` of the position ``message`` was sent at.

    ``events_before`` counts the events the seat received before ``message``: the referee sends
    every seat one event per step, in order.
    """
    kind = message.WhichOneof("message")
    if kind == "match_start":
        assert not message.match_start.resumed, "no seat reconnects here"
        return 0
    if kind == "request":
        turn = message.request.turn
        assert turn in line.turn_step, f"turn {turn} decides no step of the record"
        return line.turn_step[turn]
    if kind == "event":
        return events_before + 1
    if kind == "hand_end":
        deal = message.hand_end.deal
        assert deal in line.hand_state, f"deal {deal} was not scored in the record"
        return line.hand_state[deal]
    if kind == "match_end":
        return len(line.states) - 1
    raise AssertionError(f"a seat got an unexpected {kind}: {message}")


def scan(received: Sequence[bytes], seat: int, line: Timeline) -> list[str]:
    """Return a line for every tile in ``received`` that ``seat`` may not see when it gets it."""
    found: list[str] = []
    events = 0
    for number, data in enumerate(received):
        message = pb.RefereeMessage.FromString(data)
        at = position(message, events, line)
        events += message.HasField("event")
        where = f"message {number} ({message.WhichOneof('message')} at position {at})"
        found.extend(f"{where}: {leak}" for leak in leaks(tiles_in(message), line.states[at], seat))
    return found


def check_agreement(played: Played, line: Timeline) -> Counter[str]:
    """Assert that each message a seat got is the one the referee owed it where it was placed.

    This pins the placement the leak check relies on: each request holds the observation of
    the position it is placed at and its answer is the recorded step, each event is that
    step's public part, every step, decision and hand reaches each seat once and in order.
    Returns how many messages of each kind there were.
    """
    kinds: Counter[str] = Counter()
    match_id = played.response.match_id
    for seat, log in enumerate(played.seats):
        assert log.seat == seat
        messages = [pb.RefereeMessage.FromString(data) for data in log.received]
        names = [str(m.WhichOneof("message")) for m in messages]
        kinds.update(names)
        assert (names[0], names[-1]) == ("match_start", "match_end"), names
        assert (names.count("match_start"), names.count("match_end")) == (1, 1), names
        positions: list[int] = []
        events = 0
        history: list[LogEntry] = []  # the deal's steps as the seat keeps them from the events
        for message in messages:
            at = position(message, events, line)
            positions.append(at)
            state = line.states[at]
            if message.HasField("match_start"):
                start = message.match_start
                assert (start.seat, start.game) == (seat, game_to_proto(played.game))
            elif message.HasField("request"):
                request = message.request
                entry = line.entries[at]
                assert entry.seat == seat, f"turn {request.turn} asked seat {seat} for {entry}"
                assert not request.observation.history, "the events carry the history"
                observation = observation_from_proto(request.observation, history=tuple(history))
                assert observation == state.observe(seat)
                assert action_from_proto(log.replies[request.turn]) == entry.action
            elif message.HasField("event"):
                event = message.event
                assert event.step == step_to_proto(public_entry(line.entries[events], seat))
                assert (event.deal, tuple(event.scores)) == (state.deal_number, state.scores)
                step = step_from_proto(event.step)
                if step.seat == CHANCE:
                    history.clear()
                else:
                    history.append(step)
                events += 1
            elif message.HasField("hand_end"):
                (hand,) = [h for h in state.hand_results if h.deal == message.hand_end.deal]
                assert message.hand_end == hand_result_to_proto(hand, state.scores, match_id)
            else:
                assert message.match_end.result == played.response.result
        assert positions == sorted(positions), "a message came before its position"
        assert events == len(line.entries)
        own_turns = sorted(t for t, k in line.turn_step.items() if line.entries[k].seat == seat)
        assert sorted(m.request.turn for m in messages if m.HasField("request")) == own_turns
        deals = [m.hand_end.deal for m in messages if m.HasField("hand_end")]
        assert deals == sorted(line.hand_state)
    return kinds


# -- the matches ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def matches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Played]]:
    """Every configuration played over real gRPC, by label (the referee stops afterwards)."""
    storage = RatedStorage(f"sqlite:///{tmp_path_factory.mktemp('wire') / 'referee.db'}")
    storage.open()
    try:
        tokens = {name: storage.add_bot(name) for name in BOTS}
        referee = Referee(storage)
        try:
            plan = [(game, seed) for game in GAMES for seed in seeds_for(game)]
            played = asyncio.run(play_all(referee.port, tokens, plan))
        finally:
            referee.close()
    finally:
        storage.close()
    by_label: dict[str, list[Played]] = {}
    for match in played:
        by_label.setdefault(label(match.game), []).append(match)
    return by_label


def checked(played: Played) -> Timeline:
    """The timeline of a match that ended by the rules (or, Moon, at its cap on deals), with
    no fault, and replays."""
    record = played.record
    assert played.response.result.termination in (
        pb.TERMINATION_NORMAL,
        pb.TERMINATION_ADJUDICATED,
    ), played.response.result
    assert record.faults == (), f"{played}: {record.faults}"
    report = replay(record)
    assert report.ok, f"{played}: {report}"
    return timeline(record)


# -- the leak test --------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES, ids=[label(g) for g in GAMES])
def test_no_message_on_the_wire_holds_a_tile_its_seat_may_not_see(
    matches: dict[str, list[Played]], game: Game
) -> None:
    kinds: Counter[str] = Counter()
    tiles = 0
    for played in matches[label(game)]:
        line = checked(played)
        kinds += check_agreement(played, line)
        for seat, log in enumerate(played.seats):
            found = scan(log.received, seat, line)
            assert not found, f"{played}, seat {seat}:\n" + "\n".join(found)
            tiles += sum(len(tiles_in(pb.RefereeMessage.FromString(d))) for d in log.received)
    assert set(kinds) == {"match_start", "request", "event", "hand_end", "match_end"}
    count = len(seeds_for(game))
    assert kinds["request"] > 20 * count and tiles > 300 * count, (kinds, tiles)


def test_only_the_moon_bidder_gets_its_widow_and_discard(
    matches: dict[str, list[Played]],
) -> None:
    """The allowance for the bidder's own knowledge is used on the wire, and by it alone."""
    widow_seen = discards_shown = discards_hidden = 0
    for played in matches[label(MoonGame())]:
        line = checked(played)
        for seat, log in enumerate(played.seats):
            events = 0
            for data in log.received:
                message = pb.RefereeMessage.FromString(data)
                state = line.states[position(message, events, line)]
                assert isinstance(state, MoonState)
                if message.HasField("request"):
                    view = message.request.observation.moon
                    bidder = state.bidder == seat
                    assert view.HasField("widow") == (bidder and state.widow is not None)
                    assert view.HasField("discard") == (bidder and state.discard is not None)
                    widow_seen += view.HasField("widow")
                elif message.HasField("event"):
                    entry = line.entries[events]
                    events += 1
                    if isinstance(entry.action, Discard):
                        shown = message.event.step.action.discard.HasField("tile")
                        assert shown == (entry.seat == seat)
                        discards_shown += shown
                        discards_hidden += not shown
    assert widow_seen > 0 and discards_shown > 0 and discards_hidden == 2 * discards_shown


# -- the checker finds planted leaks --------------------------------------------------------------


def first_match(matches: dict[str, list[Played]], game: Game) -> tuple[Played, Timeline]:
    played = matches[label(game)][0]
    return played, checked(played)


def find(
    received: Sequence[bytes], kind: str, line: Timeline
) -> Iterator[tuple[int, pb.RefereeMessage, int]]:
    """Yield ``(index, message, position)`` for the messages of ``kind`` in ``received``."""
    events = 0
    for index, data in enumerate(received):
        message = pb.RefereeMessage.FromString(data)
        at = position(message, events, line)
        events += message.HasField("event")
        if message.WhichOneof("message") == kind:
            yield index, message, at


def planted(received: Sequence[bytes], index: int, message: pb.RefereeMessage) -> list[bytes]:
    """A copy of ``received`` with message ``index`` replaced, serialized as the wire would."""
    copy = list(received)
    copy[index] = message.SerializeToString()
    return copy


def test_the_checker_names_another_seats_tile_in_a_request(
    matches: dict[str, list[Played]],
) -> None:
    played, line = first_match(matches, make_game("passing", players=2))
    received = played.seats[0].received
    assert scan(received, 0, line) == []
    index, message, at = next(
        (i, m, a) for i, m, a in find(received, "request", line) if line.states[a].hand(1)
    )
    stolen = line.states[at].hand(1)[-1]
    message.request.observation.hand.add(high=stolen.high, low=stolen.low)
    assert scan(planted(received, index, message), 0, line) == [
        f"message {index} (request at position {at}): {stolen} from seat 1's hand"
    ]


def test_the_checker_names_a_boneyard_tile_in_an_event(
    matches: dict[str, list[Played]],
) -> None:
    played, line = first_match(matches, make_game("straight", players=3))
    received = played.seats[2].received
    assert scan(received, 2, line) == []
    index, message, at = next(
        (i, m, a)
        for i, m, a in find(received, "event", line)
        if m.event.step.action.HasField("play")
    )
    state = line.states[at]
    assert isinstance(state, StraightState | PassingState) and state.boneyard
    buried = state.boneyard[0]
    message.event.step.action.play.tile.CopyFrom(games_pb2.Tile(high=buried.high, low=buried.low))
    assert scan(planted(received, index, message), 2, line) == [
        f"message {index} (event at position {at}): {buried} from the boneyard"
    ]


def test_the_checker_names_the_widow_and_the_discard_shown_to_another_seat(
    matches: dict[str, list[Played]],
) -> None:
    played, line = first_match(matches, MoonGame())
    # A request to a seat that is not the bidder while the widow is still in the bidder's hand.
    seat, index, message, at = next(
        (seat, i, m, a)
        for seat, log in enumerate(played.seats)
        for i, m, a in find(log.received, "request", line)
        if isinstance(s := line.states[a], MoonState)
        and s.bidder is not None
        and s.bidder != seat
        and s.widow in s.hand(s.bidder)
    )
    state = line.states[at]
    assert isinstance(state, MoonState) and state.widow is not None
    widow = state.widow
    message.request.observation.moon.widow.CopyFrom(games_pb2.Tile(high=widow.high, low=widow.low))
    received = played.seats[seat].received
    assert scan(received, seat, line) == []
    assert scan(planted(received, index, message), seat, line) == [
        f"message {index} (request at position {at}): {widow} from the widow"
    ]
    # The event of the bidder's discard, as the unfiltered step would show it to another seat.
    index, message, at = next(
        (i, m, a)
        for i, m, a in find(received, "event", line)
        if m.event.step.action.HasField("discard") and m.event.step.seat != seat
    )
    discard = line.states[at]
    assert isinstance(discard, MoonState) and discard.discard is not None
    tile = discard.discard
    message.event.step.action.discard.tile.CopyFrom(games_pb2.Tile(high=tile.high, low=tile.low))
    assert scan(planted(received, index, message), seat, line) == [
        f"message {index} (event at position {at}): {tile} from the bidder's discard"
    ]
