"""The wire never carries a tile its seat may not see (issue 3; docs/rules.md "What each player
sees").

Over whole seeded games of every configuration, every message the referee sends a seat (its
observation in a request or a resume snapshot, the public step of every action, every hand end)
is built with sdk/wire/, serialized to bytes and parsed back as the wire would, and every
``Tile`` and ``LaidTile`` anywhere in it is checked against the omniscient state: it must be in the
seat's own hand, on the table, or the seat's own Moon widow or discard when it is the bidder.
The walk follows the protobuf descriptors (``ListFields``), so a field added later is covered
without touching this file; a structural check makes a new tile-bearing field fail until someone
has reviewed it.

Since protocol version 2 an event travels inside the seat's next message (``events``); here each
event is checked at the position right after its step, and the carrying message's own content
at its own position, as tests/e2e/test_wire_leaks_grpc.py does with what the referee sends.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from typing import Final

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from domino_arena.sdk.rules import (
    DEAL,
    Discard,
    Game,
    GameState,
    LogEntry,
    MoonGame,
    MoonState,
    StraightGame,
    StraightState,
)
from domino_arena.sdk.rules.state import public_entry
from domino_arena.sdk.wire import (
    event_to_proto,
    game_to_proto,
    hand_result_to_proto,
    observation_to_proto,
    step_to_proto,
)
from domino_arena.v1 import games_pb2, referee_pb2
from tests.fakes.leaks import (
    CONFIG_IDS,
    CONFIGS,
    TILE_TYPES,
    leaks,
    seeds_for,
    tiles_in,
)

MATCH_ID: Final = "leak-test"


def on_the_wire(message: referee_pb2.RefereeMessage) -> referee_pb2.RefereeMessage:
    """Serialize and parse back, as the seat's end of the stream decodes it."""
    return referee_pb2.RefereeMessage.FromString(message.SerializeToString())


# -- the messages a seat receives ------------------------------------------------------------------


def view_message(state: GameState, seat: int, turn: int) -> referee_pb2.RefereeMessage:
    """The seat's observation: a request when it is to move (without the history, which the
    events carry), else a resume snapshot (whole)."""
    if seat == state.current_seat:
        return referee_pb2.RefereeMessage(
            request=referee_pb2.ActionRequest(
                match_id=MATCH_ID,
                turn=turn,
                observation=observation_to_proto(state.observe(seat), history=False),
                clock=referee_pb2.Clock(move_ms=1000, bank_ms=10000),
            )
        )
    observation = observation_to_proto(state.observe(seat))
    game = state.game
    return referee_pb2.RefereeMessage(
        match_start=referee_pb2.MatchStart(
            match_id=MATCH_ID,
            game=game_to_proto(game),
            seat=seat,
            partners=[s for s in game.sides[game.side_of(seat)] if s != seat],
            players=[f"bot{s}" for s in range(game.num_players)],
            resumed=True,
            snapshot=observation,
        )
    )


def observation_of(message: referee_pb2.RefereeMessage) -> games_pb2.Observation:
    """The observation inside a request or a resume snapshot."""
    if message.HasField("request"):
        return message.request.observation
    return message.match_start.snapshot


def event_message(entry: LogEntry, after: GameState, seat: int) -> referee_pb2.RefereeMessage:
    """The public step of ``entry`` as ``seat`` sees it, as the referee builds it (to carry it
    in the seat's next message)."""
    seen = public_entry(entry, seat)
    if entry.action != DEAL:
        assert after.deal_history(seat)[-1] == seen
    return referee_pb2.RefereeMessage(
        event=event_to_proto(seen, after.scores, after.deal_number, MATCH_ID)
    )


def seat_messages(
    game: Game, seed: int
) -> Iterator[tuple[GameState, int, referee_pb2.RefereeMessage]]:
    """Yield ``(state, seat, message)`` for every message of a seeded random game, decoded."""
    rng = random.Random(seed)
    state = game.new_game(seed)
    seats = range(game.num_players)
    turn = 0
    while True:
        for seat in seats:
            yield state, seat, on_the_wire(view_message(state, seat, turn))
        if state.is_terminal():
            return
        entry = LogEntry(state.current_seat, rng.choice(state.legal_actions()))
        after = state.apply(entry.action)
        turn += 1
        for seat in seats:
            yield after, seat, on_the_wire(event_message(entry, after, seat))
        if len(after.hand_results) > len(state.hand_results):
            hand_end = hand_result_to_proto(after.hand_results[-1], after.scores, MATCH_ID)
            for seat in seats:
                yield after, seat, on_the_wire(referee_pb2.RefereeMessage(hand_end=hand_end))
        state = after


# -- the leak test ---------------------------------------------------------------------------------


@pytest.mark.parametrize("game", CONFIGS, ids=CONFIG_IDS)
def test_no_message_carries_a_tile_its_seat_may_not_see(game: Game) -> None:
    messages = tiles = 0
    kinds: set[str] = set()
    for seed in seeds_for(game):
        for state, seat, message in seat_messages(game, seed):
            carried = tiles_in(message)
            found = leaks(carried, state, seat)
            assert not found, (
                f"seed {seed}, seat {seat}, {state}: {message.WhichOneof('message')} leaks "
                + "; ".join(found)
            )
            messages += 1
            tiles += len(carried)
            kinds.add(str(message.WhichOneof("message")))
    assert messages > 500 and tiles > 4000
    assert kinds == {"request", "match_start", "event", "hand_end"}


def test_the_moon_bidder_sees_its_widow_and_discard_and_nobody_else_does() -> None:
    """The allowance for the bidder's own knowledge is exercised, and it is the bidder's only."""
    bidder_saw = hidden_discards = 0
    for state, seat, message in seat_messages(MoonGame(), 5):
        assert not leaks(tiles_in(message), state, seat)
        if message.HasField("request") or message.HasField("match_start"):
            view = observation_of(message).moon
            assert isinstance(state, MoonState)
            is_bidder = state.bidder == seat
            assert view.HasField("widow") == (is_bidder and state.widow is not None)
            assert view.HasField("discard") == (is_bidder and state.discard is not None)
            bidder_saw += view.HasField("widow") and view.HasField("discard")
        elif message.HasField("event") and message.event.step.action.HasField("discard"):
            own = message.event.step.seat == seat
            assert message.event.step.action.discard.HasField("tile") == own
            hidden_discards += not own
    assert bidder_saw > 10 and hidden_discards > 2


# -- the checker itself finds leaks ----------------------------------------------------------------


def first_state(game: Game, want: Callable[[GameState], bool] = lambda s: True) -> GameState:
    """Return the first state of a seeded random game that ``want`` accepts."""
    for seed in range(20):
        rng = random.Random(seed)
        state = game.new_game(seed)
        while not state.is_terminal():
            if want(state):
                return state
            state = state.apply(rng.choice(state.legal_actions()))
    raise AssertionError("no such state")


def widow_in_hand(state: GameState) -> bool:
    """A Moon trick under way while the widow is still in the bidder's hand."""
    return (
        isinstance(state, MoonState)
        and state.bidder is not None
        and bool(state.trick)
        and state.widow in state.hand(state.bidder)
    )


@pytest.mark.parametrize("game", CONFIGS, ids=CONFIG_IDS)
def test_the_checker_flags_another_seats_tile(game: Game) -> None:
    state = first_state(game)
    message = view_message(state, 0, 0)
    assert not leaks(tiles_in(message), state, 0)
    stolen = state.hand(1)[0]
    observation_of(message).hand.add(high=stolen.high, low=stolen.low)
    assert leaks(tiles_in(on_the_wire(message)), state, 0) == [f"{stolen} from seat 1's hand"]


def test_the_checker_flags_boneyard_tiles_deep_in_a_layout() -> None:
    state = first_state(StraightGame(players=2))
    assert isinstance(state, StraightState) and state.boneyard
    message = view_message(state, 0, 0)
    buried = state.boneyard[-1]
    observation_of(message).straight.south.tiles.add(inner=buried.high, outer=buried.low)
    assert leaks(tiles_in(on_the_wire(message)), state, 0) == [f"{buried} from the boneyard"]


def test_the_checker_flags_the_widow_for_a_non_bidder() -> None:
    state = first_state(MoonGame(), widow_in_hand)
    assert isinstance(state, MoonState) and state.bidder is not None and state.widow is not None
    widow = state.widow
    bidder_view = view_message(state, state.bidder, 0)
    assert observation_of(bidder_view).moon.HasField("widow")
    assert not leaks(tiles_in(on_the_wire(bidder_view)), state, state.bidder)
    other = (state.bidder + 1) % 3
    message = view_message(state, other, 0)
    assert not leaks(tiles_in(message), state, other)
    observation_of(message).moon.widow.CopyFrom(games_pb2.Tile(high=widow.high, low=widow.low))
    assert leaks(tiles_in(on_the_wire(message)), state, other) == [f"{widow} from the widow"]


def test_the_checker_flags_a_discard_shown_to_another_seat() -> None:
    state = first_state(MoonGame(), widow_in_hand)
    assert isinstance(state, MoonState) and state.bidder is not None
    entry = next(e for e in state.history if isinstance(e.action, Discard))
    other = (state.bidder + 2) % 3
    unfiltered = referee_pb2.RefereeMessage(event=referee_pb2.Event(step=step_to_proto(entry)))
    assert leaks(tiles_in(on_the_wire(unfiltered)), state, other) == [
        f"{state.discard} from the bidder's discard"
    ]
    filtered = referee_pb2.RefereeMessage(
        event=referee_pb2.Event(step=step_to_proto(public_entry(entry, other)))
    )
    assert not leaks(tiles_in(on_the_wire(filtered)), state, other)


# -- the contract's shape --------------------------------------------------------------------------

APPROVED_OBSERVATION_TILES: Final = frozenset(
    {
        "hand",
        "legal_actions.play.tile",
        "legal_actions.discard.tile",
        "history.action.play.tile",
        "history.action.discard.tile",
        "passing.line",
        "straight.line",
        "straight.west.tiles",
        "straight.east.tiles",
        "straight.north.tiles",
        "straight.south.tiles",
        "doubles.placed",
        "doubles.drawn",
        "moon.trick.tile",
        "moon.tricks.plays.tile",
        "moon.discard",
        "moon.widow",
    }
)
"""Every field of an Observation that holds tiles, each reviewed against docs/rules.md."""


def message_type(field: FieldDescriptor) -> Descriptor:
    descriptor = field.message_type
    assert descriptor is not None, field.full_name
    return descriptor


def tile_paths(
    descriptor: Descriptor, prefix: str = "", outer: frozenset[str] = frozenset()
) -> set[str]:
    """Return the dotted paths of every tile-typed field reachable from ``descriptor``.

    A field of a type that encloses it (a RefereeBatch's messages) is not followed again: its
    tiles are those of that type, already listed.
    """
    paths: set[str] = set()
    inside = outer | {descriptor.full_name}
    for field in descriptor.fields:
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        path = f"{prefix}{field.name}"
        if message_type(field).full_name in TILE_TYPES:
            paths.add(path)
        elif message_type(field).full_name not in inside:
            paths |= tile_paths(message_type(field), f"{path}.", inside)
    return paths


def all_fields(
    descriptor: Descriptor, prefix: str = "", outer: frozenset[str] = frozenset()
) -> Iterator[tuple[str, FieldDescriptor]]:
    inside = outer | {descriptor.full_name}
    for field in descriptor.fields:
        path = f"{prefix}{field.name}"
        yield path, field
        if (
            field.type == FieldDescriptor.TYPE_MESSAGE
            and message_type(field).full_name not in inside
        ):
            yield from all_fields(message_type(field), f"{path}.", inside)


def test_every_tile_field_of_an_observation_is_reviewed() -> None:
    """A new tile-bearing field fails here until it is checked and added to the approved list."""
    assert tile_paths(games_pb2.Observation.DESCRIPTOR) == APPROVED_OBSERVATION_TILES


def test_every_tile_the_referee_sends_travels_in_an_observation_or_a_step() -> None:
    observation_holders = ("request.observation.", "match_start.snapshot.")
    event_holders = ("event.", "request.events.", "hand_end.events.", "fault.events.")
    step_tiles = ("step.action.play.tile", "step.action.discard.tile")
    expected = {
        holder + path for holder in observation_holders for path in APPROVED_OBSERVATION_TILES
    } | {holder + path for holder in (*event_holders, "match_end.events.") for path in step_tiles}
    assert tile_paths(referee_pb2.RefereeMessage.DESCRIPTOR) == expected
    batch = referee_pb2.RefereeBatch.DESCRIPTOR.fields_by_name["messages"]
    assert message_type(batch) is referee_pb2.RefereeMessage.DESCRIPTOR
    assert [f.name for f in referee_pb2.RefereeBatch.DESCRIPTOR.fields] == ["messages"]


SECRET_NAMES: Final = re.compile(
    r"boneyard|hands|other|opponent|deck|stock|shuffle|seed|widow|secret|hidden"
)


def test_no_field_sent_to_a_bot_is_named_for_hidden_information() -> None:
    """Boneyard only as a count, no hands but one's own, no seed (but the bot's own, a one-way
    hash of the match's: sdk/match/seeds.py), the widow only in MoonView."""
    offenders = []
    for path, field in all_fields(referee_pb2.RefereeMessage.DESCRIPTOR):
        if not SECRET_NAMES.search(field.name):
            continue
        if path == "match_start.bot_seed" and field.type == FieldDescriptor.TYPE_UINT64:
            continue
        if field.name == "boneyard_size" and field.type == FieldDescriptor.TYPE_UINT32:
            continue
        if (
            field.name == "widow"
            and field.containing_type is games_pb2.MoonView.DESCRIPTOR
            and not field.is_repeated
        ):
            continue
        offenders.append(path)
    assert offenders == []
    widows = [p for p, f in all_fields(referee_pb2.RefereeMessage.DESCRIPTOR) if f.name == "widow"]
    assert widows and all(p.endswith("moon.widow") for p in widows)
