"""The rules <-> protobuf layer (sdk/wire/): round trips and every malformed message.

The referee validates exactly what a bot sent and a bot sees exactly the rules library's own
types, so every observation of every game must survive encode, serialize, parse and decode
unchanged, and every malformed message must be refused with the field path and what was expected
(the referee sends that text back to the bot).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from domino_arena.sdk.rules import (
    CHANCE,
    DEAL,
    DOUBLE_SIX,
    DRAW,
    NO_TRUMP,
    PASS,
    TRUMP_DOUBLES,
    Action,
    Bid,
    Deal,
    Discard,
    DoublesGame,
    Game,
    GameState,
    HandEnd,
    HandResult,
    LogEntry,
    MoonGame,
    Observation,
    PassingGame,
    Play,
    StraightGame,
    Tile,
    Trump,
    configurations,
    make_game,
    parse_action,
)
from domino_arena.sdk.wire import (
    ConversionError,
    action_from_proto,
    action_to_proto,
    common,
    game_from_proto,
    game_to_proto,
    hand_end_from_kind,
    hand_end_kind,
    hand_result_from_proto,
    hand_result_to_proto,
    observation_from_proto,
    observation_to_proto,
    outcome_from_proto,
    step_from_proto,
    step_to_proto,
    tiles_actions,
)
from domino_arena.v1 import games_pb2, referee_pb2

CONFIGS = list(configurations())
CONFIG_IDS = ["-".join([g.name, *(f"{k}={v}" for k, v in g.options().items())]) for g in CONFIGS]


def seeds_for(game: Game) -> range:
    """Seeded games per configuration: random Moon games run to hundreds of deals, so fewer."""
    return range(2) if isinstance(game, MoonGame) else range(4)


def random_game(game: Game, seed: int) -> Iterator[GameState]:
    """Yield every state of a game played with seeded random legal actions, the last included."""
    rng = random.Random(seed)
    state = game.new_game(seed)
    yield state
    while not state.is_terminal():
        state = state.apply(rng.choice(state.legal_actions()))
        yield state


def rest_of_set(*used: str) -> list[Tile]:
    """Return the tiles of the set not named in ``used``, for the boneyard of a position."""
    named = {Tile.parse(text) for text in used}
    return [t for t in DOUBLE_SIX if t not in named]


def over_the_wire(observation: Observation) -> Observation:
    """Encode, serialize to bytes, parse and decode, as referee and bot do."""
    data = observation_to_proto(observation).SerializeToString()
    return observation_from_proto(games_pb2.Observation.FromString(data))


def error_of(call: Callable[[], object]) -> str:
    with pytest.raises(ConversionError) as caught:
        call()
    return str(caught.value)


# -- observations: whole games -------------------------------------------------------------------


@pytest.mark.parametrize("game", CONFIGS, ids=CONFIG_IDS)
def test_every_observation_of_seeded_games_round_trips(game: Game) -> None:
    kinds: set[type] = set()
    views = 0
    for seed in seeds_for(game):
        for state in random_game(game, seed):
            for seat in range(game.num_players):
                observation = state.observe(seat)
                back = over_the_wire(observation)
                assert back == observation, f"seed {seed}, seat {seat}, {state}"
                assert type(back) is type(observation)
                views += 1
            kinds.update(type(a) for a in state.legal_actions())
    assert views > 100
    # The games went through several hands: plays, draws or bids, and the chance step.
    assert {Play, Deal} <= kinds and len(kinds) >= 3, kinds


def test_moon_observations_carry_every_phase_and_private_field() -> None:
    """The Moon view's optional parts (trump, leader, discard, widow) all appear and survive."""
    seen: set[str] = set()
    for state in random_game(MoonGame(), 2):
        for seat in range(3):
            observation = state.observe(seat)
            message = observation_to_proto(observation)
            view = message.moon
            seen.add(games_pb2.MoonPhase.Name(view.phase))
            for field in ("discard", "widow"):
                if view.HasField(field):
                    seen.add(field)
            if view.trump_named:
                seen.add(games_pb2.TrumpSuit.Name(view.trump.suit))
            if any(
                s.action.HasField("discard") and not s.action.discard.HasField("tile")
                for s in message.history
            ):
                seen.add("hidden discard")
            assert over_the_wire(observation) == observation
    for expected in (
        "MOON_PHASE_BIDDING",
        "MOON_PHASE_DISCARD",
        "MOON_PHASE_TRUMP",
        "MOON_PHASE_PLAYING",
        "MOON_PHASE_DEAL",
        "MOON_PHASE_OVER",
        "TRUMP_SUIT_NUMBER",
        "TRUMP_SUIT_DOUBLES",
        "TRUMP_SUIT_NONE",
        "discard",
        "widow",
        "hidden discard",
    ):
        assert expected in seen, expected


def test_straight_spinner_arms_and_doubles_drawn_tile_round_trip() -> None:
    """Positions built by hand reach the parts random games rarely show in one place."""
    arms = {"W": ["5-3", "3-3"], "E": ["5-1"], "N": ["5-6"], "S": ["5-4", "4-4"]}
    hands = [["6-1", "2-2"], ["4-0", "3-0"]]
    straight = StraightGame(players=2).from_position(
        hands=hands,
        boneyard=rest_of_set(
            "5-5", *hands[0], *hands[1], *(t for arm in arms.values() for t in arm)
        ),
        spinner="5-5",
        arms=arms,
        seat=0,
        scores=[10, 245],
    )
    observation = straight.observe(0)
    message = observation_to_proto(observation)
    assert message.straight.has_spinner and message.straight.spinner == 5
    assert [(t.inner, t.outer) for t in message.straight.south.tiles] == [(5, 4), (4, 4)]
    assert over_the_wire(observation) == observation

    doubles = DoublesGame(players=2).from_position(
        hands=[["6-6", "6-1", "5-0"], ["4-0", "3-0"]],
        boneyard=rest_of_set("6-6", "6-1", "5-0", "4-0", "3-0", "5-5", "5-2"),
        placed=["5-5", "5-2 5"],
        seat=0,
        drawn="5-0",
    )
    mover, other = doubles.observe(0), doubles.observe(1)
    assert observation_to_proto(mover).doubles.HasField("drawn")
    assert not observation_to_proto(other).doubles.HasField("drawn")
    assert over_the_wire(mover) == mover
    assert over_the_wire(other) == other


def test_an_all_default_view_is_still_present_on_the_wire() -> None:
    """Four-player Straight deals all 28 tiles: seat 0 opening, boneyard 0, empty layout."""
    game = StraightGame(players=4)
    seed = next(s for s in range(100) if game.new_game(s).current_seat == 0)
    observation = game.new_game(seed).observe(0)
    message = games_pb2.Observation.FromString(
        observation_to_proto(observation).SerializeToString()
    )
    assert message.WhichOneof("view") == "straight"
    assert observation_from_proto(message) == observation


def test_encoded_messages_are_independent_copies() -> None:
    """The encoder copies cached messages; changing a result must not change the next one."""
    play = Play(Tile(6, 4), "E")
    first = action_to_proto(play)
    first.play.tile.high = 1
    assert action_to_proto(play).play.tile.high == 6
    state = PassingGame(players=2).new_game(3)
    message = observation_to_proto(state.observe(0))
    message.hand[0].high = 0
    message.game.passing.players = 9
    again = observation_to_proto(state.observe(0))
    assert again.hand[0].high == state.hand(0)[0].high
    assert again.game.passing.players == 2
    step = step_to_proto(LogEntry(0, play))
    step.action.play.end = games_pb2.LINE_END_W
    assert step_to_proto(LogEntry(0, play)).action.play.end == games_pb2.LINE_END_E


def test_message_caches_stay_bounded() -> None:
    for value in range(common.CACHE_LIMIT + 10):
        assert action_from_proto(action_to_proto(Bid(value))) == Bid(value)
    assert len(tiles_actions._ACTIONS) <= common.CACHE_LIMIT
    assert len(tiles_actions._ACTIONS_BY_VALUE) <= common.CACHE_LIMIT


# -- actions ---------------------------------------------------------------------------------------

ALL_ACTIONS: list[Action] = [
    *(Play(t) for t in DOUBLE_SIX),
    *(Play(t, end) for t in DOUBLE_SIX for end in ("W", "E", "N", "S")),
    *(Play(t, str(n)) for t in DOUBLE_SIX for n in range(7)),
    DRAW,
    PASS,
    DEAL,
    *(Bid(v) for v in (0, 3, 4, 5, 6, 7, 21, 99)),
    *(Discard(t) for t in DOUBLE_SIX),
    *(Trump(s) for s in (*range(7), TRUMP_DOUBLES, NO_TRUMP)),
]


def test_every_action_round_trips_through_text_and_proto() -> None:
    for action in ALL_ACTIONS:
        text = str(action)
        assert parse_action(text) == action
        data = action_to_proto(action).SerializeToString()
        back = action_from_proto(games_pb2.Action.FromString(data))
        assert back == action, text
        assert str(back) == text
        assert action_from_proto(action_to_proto(parse_action(text))) == parse_action(text)


@pytest.mark.parametrize(
    ("action", "wire"),
    [
        (
            Play(Tile(6, 5)),
            games_pb2.Action(play=games_pb2.PlayAction(tile=games_pb2.Tile(high=6, low=5))),
        ),
        (
            Play(Tile(4, 6), "E"),
            games_pb2.Action(
                play=games_pb2.PlayAction(
                    tile=games_pb2.Tile(high=6, low=4), end=games_pb2.LINE_END_E
                )
            ),
        ),
        (
            Play(Tile(5, 5), "S"),
            games_pb2.Action(
                play=games_pb2.PlayAction(
                    tile=games_pb2.Tile(high=5, low=5), end=games_pb2.LINE_END_S
                )
            ),
        ),
        (
            Play(Tile(6, 4), "4"),
            games_pb2.Action(
                play=games_pb2.PlayAction(
                    tile=games_pb2.Tile(high=6, low=4), end=games_pb2.LINE_END_NUMBER, number=4
                )
            ),
        ),
        (
            Play(Tile(6, 0), "0"),
            games_pb2.Action(
                play=games_pb2.PlayAction(
                    tile=games_pb2.Tile(high=6, low=0), end=games_pb2.LINE_END_NUMBER, number=0
                )
            ),
        ),
        (Bid(21), games_pb2.Action(bid=games_pb2.BidAction(value=21))),
        (
            Discard(Tile(3, 1)),
            games_pb2.Action(discard=games_pb2.DiscardAction(tile=games_pb2.Tile(high=3, low=1))),
        ),
        (Discard(None), games_pb2.Action(discard=games_pb2.DiscardAction())),
        (
            Trump(0),
            games_pb2.Action(
                trump=games_pb2.TrumpAction(suit=games_pb2.TRUMP_SUIT_NUMBER, number=0)
            ),
        ),
        (
            Trump(TRUMP_DOUBLES),
            games_pb2.Action(trump=games_pb2.TrumpAction(suit=games_pb2.TRUMP_SUIT_DOUBLES)),
        ),
        (
            Trump(NO_TRUMP),
            games_pb2.Action(trump=games_pb2.TrumpAction(suit=games_pb2.TRUMP_SUIT_NONE)),
        ),
        (DRAW, games_pb2.Action(draw=games_pb2.DrawAction())),
        (DEAL, games_pb2.Action(deal=games_pb2.DealAction())),
    ],
    ids=str,
)
def test_actions_have_the_documented_wire_form(action: Action, wire: games_pb2.Action) -> None:
    assert action_to_proto(action) == wire


def test_pass_is_the_pass_branch() -> None:
    message = action_to_proto(PASS)
    assert message.WhichOneof("kind") == "pass"
    assert action_from_proto(message) == PASS


def test_a_hidden_discard_is_a_step_but_never_a_bot_action() -> None:
    hidden = games_pb2.Action(discard=games_pb2.DiscardAction())
    step = games_pb2.Step(seat=2, action=hidden)
    assert step_from_proto(step) == LogEntry(2, Discard(None))
    assert step_to_proto(LogEntry(2, Discard(None))) == step
    assert error_of(lambda: action_from_proto(hidden)) == (
        "action.discard.tile: missing; expected the tile to discard"
    )


def test_steps_round_trip_with_the_chance_seat() -> None:
    for entry in (LogEntry(CHANCE, DEAL), LogEntry(3, Play(Tile(2, 1), "N")), LogEntry(0, PASS)):
        data = step_to_proto(entry).SerializeToString()
        assert step_from_proto(games_pb2.Step.FromString(data)) == entry


# -- malformed actions -----------------------------------------------------------------------------


def play(**fields: Any) -> games_pb2.Action:
    return games_pb2.Action(play=games_pb2.PlayAction(**fields))


def tile(high: int, low: int) -> games_pb2.Tile:
    return games_pb2.Tile(high=high, low=low)


def trump(suit: int, number: int = 0) -> games_pb2.Action:
    return games_pb2.Action(trump=games_pb2.TrumpAction(suit=suit, number=number))  # type: ignore[arg-type]


MALFORMED_ACTIONS: list[tuple[str, games_pb2.Action, str]] = [
    (
        "empty",
        games_pb2.Action(),
        "action: missing; expected one of play, draw, pass, bid, discard, trump, deal",
    ),
    ("play-no-tile", play(), "action.play.tile: missing; expected the tile to play"),
    (
        "play-no-tile-with-end",
        play(end=games_pb2.LINE_END_W),
        "action.play.tile: missing; expected the tile to play",
    ),
    ("tile-high", play(tile=tile(7, 1)), "action.play.tile.high: 7; expected a number 0-6"),
    ("tile-low", play(tile=tile(6, 9)), "action.play.tile.low: 9; expected a number 0-6"),
    (
        "tile-order",
        play(tile=tile(4, 6)),
        "action.play.tile: high 4 below low 6; expected the higher number in high: high 6, low 4",
    ),
    (
        "end-number-7",
        play(tile=tile(6, 4), end=games_pb2.LINE_END_NUMBER, number=7),
        "action.play.number: 7; expected a number 0-6, the end's number",
    ),
    (
        "number-without-number-end",
        play(tile=tile(6, 4), end=games_pb2.LINE_END_W, number=4),
        "action.play.number: 4 without LINE_END_NUMBER; expected 0 unless end is NUMBER",
    ),
    (
        "number-on-opening",
        play(tile=tile(6, 4), number=4),
        "action.play.number: 4 without LINE_END_NUMBER; expected 0 unless end is NUMBER",
    ),
    (
        "unknown-end",
        play(tile=tile(6, 4), end=9),
        "action.play.end: unknown value 9; expected LINE_END_UNSPECIFIED (the opening tile, "
        "Moon), LINE_END_W, LINE_END_E, LINE_END_N, LINE_END_S or LINE_END_NUMBER",
    ),
    (
        "discard-no-tile",
        games_pb2.Action(discard=games_pb2.DiscardAction()),
        "action.discard.tile: missing; expected the tile to discard",
    ),
    (
        "discard-bad-tile",
        games_pb2.Action(discard=games_pb2.DiscardAction(tile=tile(8, 0))),
        "action.discard.tile.high: 8; expected a number 0-6",
    ),
    (
        "trump-unspecified",
        trump(games_pb2.TRUMP_SUIT_UNSPECIFIED),
        "action.trump.suit: missing; expected TRUMP_SUIT_NUMBER with a number 0-6, "
        "TRUMP_SUIT_DOUBLES or TRUMP_SUIT_NONE",
    ),
    (
        "trump-unknown",
        trump(12),
        "action.trump.suit: unknown value 12; expected TRUMP_SUIT_NUMBER with a number 0-6, "
        "TRUMP_SUIT_DOUBLES or TRUMP_SUIT_NONE",
    ),
    (
        "trump-number-7",
        trump(games_pb2.TRUMP_SUIT_NUMBER, 7),
        "action.trump.number: 7; expected a number 0-6, the trump suit",
    ),
    (
        "trump-doubles-with-number",
        trump(games_pb2.TRUMP_SUIT_DOUBLES, 3),
        "action.trump.number: 3 without TRUMP_SUIT_NUMBER; expected 0 unless suit is NUMBER",
    ),
]


@pytest.mark.parametrize(
    ("message", "expected"),
    [(m, e) for _, m, e in MALFORMED_ACTIONS],
    ids=[name for name, _, _ in MALFORMED_ACTIONS],
)
def test_malformed_actions_name_the_field(message: games_pb2.Action, expected: str) -> None:
    # Through bytes, as the referee receives it: unknown enum values survive parsing.
    parsed = games_pb2.Action.FromString(message.SerializeToString())
    assert error_of(lambda: action_from_proto(parsed)) == expected


def test_conversion_error_carries_its_parts_and_the_callers_path() -> None:
    with pytest.raises(ConversionError) as caught:
        action_from_proto(play(tile=tile(7, 0)), "reply.action")
    error = caught.value
    assert isinstance(error, ValueError)
    assert (error.field, error.problem, error.expected) == (
        "reply.action.play.tile.high",
        "7",
        "a number 0-6",
    )
    assert str(error) == "reply.action.play.tile.high: 7; expected a number 0-6"


def test_well_formed_but_illegal_actions_decode() -> None:
    """Malformed is what the text would not parse; a bid of 3 is merely illegal (the engine's)."""
    assert action_from_proto(games_pb2.Action(bid=games_pb2.BidAction(value=3))) == Bid(3)
    assert parse_action("bid 3") == Bid(3)
    assert action_from_proto(play(tile=tile(6, 4), end=games_pb2.LINE_END_NUMBER, number=2)) == (
        Play(Tile(6, 4), "2")
    )


def test_actions_with_no_wire_form_are_refused() -> None:
    assert error_of(lambda: action_to_proto(Play(Tile(6, 4), "X"))) == (
        "action.play.end: 'X'; expected W, E, N, S or (Doubles) a digit 0-6"
    )
    assert error_of(lambda: action_to_proto(Bid(-1))) == (
        "action.bid.value: -1; expected a whole number 0 or more"
    )


def test_malformed_steps_name_the_field() -> None:
    assert error_of(lambda: step_from_proto(games_pb2.Step(seat=1))) == (
        "step.action: missing; expected the action taken"
    )
    bad_seat = games_pb2.Step(seat=-2, action=games_pb2.Action(draw=games_pb2.DrawAction()))
    assert error_of(lambda: step_from_proto(bad_seat, "event.step")) == (
        "event.step.seat: -2; expected a seat 0 or more, or -1 for the deal"
    )
    no_tile = games_pb2.Step(seat=0, action=play(end=games_pb2.LINE_END_E))
    assert error_of(lambda: step_from_proto(no_tile)) == (
        "step.action.play.tile: missing; expected the tile to play"
    )


# -- games -----------------------------------------------------------------------------------------

ALL_GAMES: list[Game] = [
    *CONFIGS,
    *(PassingGame(players=n, target_rule="pagat") for n in (2, 3, 4)),
    PassingGame(players=4, partnerships=True, target_rule="pagat"),
    MoonGame(),
]


@pytest.mark.parametrize("game", ALL_GAMES, ids=repr)
def test_games_round_trip_with_their_options(game: Game) -> None:
    data = game_to_proto(game).SerializeToString()
    back = game_from_proto(games_pb2.GameConfig.FromString(data))
    assert back == game
    assert back.options() == game.options()
    assert make_game(game.name, **back.options()) == game


def test_game_wire_forms() -> None:
    assert game_to_proto(PassingGame(players=4, partnerships=True, target_rule="pagat")) == (
        games_pb2.GameConfig(
            passing=games_pb2.PassingOptions(
                players=4, partnerships=True, target_rule=games_pb2.TARGET_RULE_PAGAT
            )
        )
    )
    assert game_to_proto(MoonGame()) == games_pb2.GameConfig(moon=games_pb2.MoonOptions())
    assert game_to_proto(DoublesGame(players=3)) == games_pb2.GameConfig(
        doubles=games_pb2.DoublesOptions(players=3)
    )
    unspecified = games_pb2.GameConfig(passing=games_pb2.PassingOptions(players=3))
    assert game_from_proto(unspecified) == PassingGame(players=3, target_rule="gamerules")
    empty_moon = games_pb2.GameConfig(moon=games_pb2.MoonOptions())
    assert game_from_proto(empty_moon) == MoonGame()


MALFORMED_GAMES: list[tuple[str, games_pb2.GameConfig, str]] = [
    (
        "empty",
        games_pb2.GameConfig(),
        "game: missing; expected one of doubles, moon, passing, straight",
    ),
    (
        "passing-no-players",
        games_pb2.GameConfig(passing=games_pb2.PassingOptions()),
        "game.passing.players: missing; expected a number of players: 2, 3, 4",
    ),
    (
        "straight-5",
        games_pb2.GameConfig(straight=games_pb2.StraightOptions(players=5)),
        "game.straight.players: 5; expected a number of players: 2, 3, 4",
    ),
    (
        "doubles-1",
        games_pb2.GameConfig(doubles=games_pb2.DoublesOptions(players=1)),
        "game.doubles.players: 1; expected a number of players: 2, 3, 4",
    ),
    (
        "straight-3-partners",
        games_pb2.GameConfig(straight=games_pb2.StraightOptions(players=3, partnerships=True)),
        "game.straight.partnerships: true with 3 players; expected partnerships only with 4",
    ),
    (
        "passing-target-rule",
        games_pb2.GameConfig(
            passing=games_pb2.PassingOptions(players=2, target_rule=7)  # type: ignore[arg-type]
        ),
        "game.passing.target_rule: unknown value 7; expected TARGET_RULE_GAMERULES or "
        "TARGET_RULE_PAGAT",
    ),
    (
        "moon-deal-limit",
        games_pb2.GameConfig(moon=games_pb2.MoonOptions(deal_limit=50)),
        "game.moon.deal_limit: 50 (a retired option); expected 0: Moon plays on by the rules; "
        "cap deals with the referee's max_deals",
    ),
]


@pytest.mark.parametrize(
    ("message", "expected"),
    [(m, e) for _, m, e in MALFORMED_GAMES],
    ids=[name for name, _, _ in MALFORMED_GAMES],
)
def test_malformed_games_name_the_field(message: games_pb2.GameConfig, expected: str) -> None:
    parsed = games_pb2.GameConfig.FromString(message.SerializeToString())
    assert error_of(lambda: game_from_proto(parsed)) == expected


def test_an_unknown_game_or_observation_type_has_no_wire_form() -> None:
    class Odd(Game):
        name = "odd"
        title = "Odd"

        @property
        def num_players(self) -> int:
            return 2

        @property
        def sides(self) -> tuple[tuple[int, ...], ...]:
            return ((0,), (1,))

        @property
        def target(self) -> int:
            return 1

        def options(self) -> dict[str, Any]:
            return {}

        def new_game(self, seed: int, *, first_seat: int | None = None) -> GameState:
            raise NotImplementedError

        def from_position(self, **position: Any) -> GameState:
            raise NotImplementedError

    assert error_of(lambda: game_to_proto(Odd())) == (
        "game: a Odd; expected one of doubles, moon, passing, straight"
    )
    plain = Observation(PassingGame(), 0, 0, (), (), (7, 7), (0, 0), 1, (), 0)
    assert error_of(lambda: observation_to_proto(plain)) == (
        "observation: a Observation; expected the observation of doubles, moon, passing or straight"
    )


# -- malformed observations ------------------------------------------------------------------------


def sample(game: Game, want: Callable[[Observation], bool]) -> games_pb2.Observation:
    """Return the wire form of the first observation of a seeded game that ``want`` accepts."""
    for seed in range(5):
        for state in random_game(game, seed):
            for seat in range(game.num_players):
                observation = state.observe(seat)
                if want(observation):
                    return observation_to_proto(observation)
    raise AssertionError("no such observation")


def passing_sample() -> games_pb2.Observation:
    return sample(
        PassingGame(players=2),
        lambda o: len(o.legal_actions) > 2 and len(o.history) > 2,
    )


def moon_sample() -> games_pb2.Observation:
    def playing_with_tricks(o: Observation) -> bool:
        message = observation_to_proto(o)
        return bool(message.moon.tricks) and bool(message.moon.trick) and o.legal_actions != ()

    return sample(MoonGame(), playing_with_tricks)


def straight_sample() -> games_pb2.Observation:
    return sample(StraightGame(players=2), lambda o: bool(o.legal_actions))


def doubles_sample() -> games_pb2.Observation:
    return sample(DoublesGame(players=2), lambda o: len(o.history) > 3)


Breaker = Callable[[games_pb2.Observation], None]


def _clear_game(m: games_pb2.Observation) -> None:
    m.ClearField("game")


def _parent(message: games_pb2.Observation, path: str) -> tuple[Any, str]:
    """Return the message holding the field at dotted ``path`` (numbers index lists)."""
    *parents, name = path.split(".")
    target: Any = message
    for part in parents:
        target = target[int(part)] if part.isdigit() else getattr(target, part)
    return target, name


def _set(path: str, value: object) -> Breaker:
    def breaker(m: games_pb2.Observation) -> None:
        target, name = _parent(m, path)
        setattr(target, name, value)

    return breaker


def _clear(path: str) -> Breaker:
    def breaker(m: games_pb2.Observation) -> None:
        target, name = _parent(m, path)
        target.ClearField(name)

    return breaker


def _all(*breakers: Breaker) -> Breaker:
    def breaker(m: games_pb2.Observation) -> None:
        for each in breakers:
            each(m)

    return breaker


def _do(action: Callable[[games_pb2.Observation], object]) -> Breaker:
    def breaker(m: games_pb2.Observation) -> None:
        action(m)

    return breaker


MALFORMED_OBSERVATIONS: list[tuple[str, Callable[[], games_pb2.Observation], Breaker, str]] = [
    (
        "no-game",
        passing_sample,
        _clear_game,
        "observation.game: missing; expected the game and its options",
    ),
    (
        "game-players",
        passing_sample,
        _set("game.passing.players", 6),
        "observation.game.passing.players: 6; expected a number of players: 2, 3, 4",
    ),
    ("seat", passing_sample, _set("seat", 5), "observation.seat: 5; expected a seat 0-1"),
    (
        "current-seat",
        passing_sample,
        _set("current_seat", -3),
        "observation.current_seat: -3; expected a seat 0-1, -1 (a deal) or -2 (over)",
    ),
    (
        "legal-action-without-tile",
        passing_sample,
        _do(lambda m: m.legal_actions[1].play.ClearField("tile")),
        "observation.legal_actions[1].play.tile: missing; expected the tile to play",
    ),
    (
        "legal-action-missing",
        passing_sample,
        _do(lambda m: m.legal_actions[0].Clear()),
        "observation.legal_actions[0]: missing; expected one of play, draw, pass, bid, discard, "
        "trump, deal",
    ),
    (
        "hand-tile",
        passing_sample,
        _set("hand.0.high", 7),
        "observation.hand[0].high: 7; expected a number 0-6",
    ),
    (
        "history-action",
        passing_sample,
        _do(lambda m: m.history[2].ClearField("action")),
        "observation.history[2].action: missing; expected the action taken",
    ),
    (
        "history-seat-chance-floor",
        passing_sample,
        _set("history.0.seat", -2),
        "observation.history[0].seat: -2; expected a seat 0 or more, or -1 for the deal",
    ),
    (
        "history-seat-players",
        passing_sample,
        _set("history.1.seat", 2),
        "observation.history[1].seat: 2; expected a seat 0-1 or -1",
    ),
    (
        "hand-sizes",
        passing_sample,
        _do(lambda m: m.hand_sizes.append(3)),
        "observation.hand_sizes: 3 values; expected one per seat, 2",
    ),
    (
        "scores",
        passing_sample,
        _do(lambda m: m.ClearField("scores")),
        "observation.scores: 0 values; expected one per side, 2",
    ),
    (
        "no-view",
        passing_sample,
        _do(lambda m: m.ClearField("passing")),
        "observation.view: missing; expected the passing view of a passing game",
    ),
    (
        "wrong-view",
        passing_sample,
        _do(lambda m: m.moon.SetInParent()),
        "observation.view: a moon view; expected the passing view of a passing game",
    ),
    (
        "passing-line",
        passing_sample,
        _set("passing.line.0.outer", 7),
        "observation.passing.line[0].outer: 7; expected a number 0-6",
    ),
    (
        "passing-ends-without-flag",
        passing_sample,
        _set("passing.has_ends", False),
        "observation.passing.west: an end without has_ends; expected has_ends set with west, east",
    ),
    (
        "passing-east",
        passing_sample,
        _set("passing.east", 9),
        "observation.passing.east: 9; expected a number 0-6",
    ),
    (
        "passing-starter",
        passing_sample,
        _set("passing.starter", 2),
        "observation.passing.starter: 2; expected a seat 0-1",
    ),
    (
        "straight-arms-without-spinner",
        straight_sample,
        _do(lambda m: m.straight.north.tiles.add(inner=5, outer=2)),
        "observation.straight.has_spinner: false with arms; expected has_spinner set with arms",
    ),
    (
        "straight-spinner",
        straight_sample,
        _all(
            _clear("straight.line"), _set("straight.spinner", 7), _set("straight.has_spinner", True)
        ),
        "observation.straight.spinner: 7; expected a number 0-6",
    ),
    (
        "straight-line-beside-spinner",
        straight_sample,
        _all(
            _do(lambda m: m.straight.line.add(inner=1, outer=2)), _set("straight.has_spinner", True)
        ),
        "observation.straight.line: tiles beside a spinner; expected the arms once has_spinner",
    ),
    (
        "straight-arm-tile",
        straight_sample,
        _all(
            _clear("straight.line"),
            _set("straight.has_spinner", True),
            _do(lambda m: m.straight.east.tiles.add(inner=3, outer=8)),
        ),
        "observation.straight.east.tiles[0].outer: 8; expected a number 0-6",
    ),
    (
        "doubles-ends",
        doubles_sample,
        _do(lambda m: m.doubles.ends.insert(0, 7)),
        "observation.doubles.ends[0]: 7; expected a number 0-6",
    ),
    (
        "doubles-unlocked",
        doubles_sample,
        _do(lambda m: m.doubles.unlocked.insert(0, 9)),
        "observation.doubles.unlocked[0]: 9; expected a number 0-6",
    ),
    (
        "doubles-placed",
        doubles_sample,
        _all(_set("doubles.placed.1.high", 2), _set("doubles.placed.1.low", 5)),
        "observation.doubles.placed[1]: high 2 below low 5; expected the higher number in high: "
        "high 5, low 2",
    ),
    (
        "doubles-drawn",
        doubles_sample,
        _do(lambda m: m.doubles.drawn.MergeFrom(games_pb2.Tile(high=9))),
        "observation.doubles.drawn.high: 9; expected a number 0-6",
    ),
    (
        "moon-phase-missing",
        moon_sample,
        _set("moon.phase", 0),
        "observation.moon.phase: missing; expected a MoonPhase",
    ),
    (
        "moon-phase-unknown",
        moon_sample,
        _set("moon.phase", 42),
        "observation.moon.phase: unknown value 42; expected a MoonPhase",
    ),
    (
        "moon-bid",
        moon_sample,
        _set("moon.bids.0.value", 3),
        "observation.moon.bids[0].value: 3; expected 0 (a pass), 4-7 or 21",
    ),
    (
        "moon-bid-seat",
        moon_sample,
        _set("moon.bids.0.seat", 3),
        "observation.moon.bids[0].seat: 3; expected a seat 0-2",
    ),
    (
        "moon-contract",
        moon_sample,
        _set("moon.contract", 8),
        "observation.moon.contract: 8; expected 4-7 or 21",
    ),
    (
        "moon-trump",
        moon_sample,
        _set("moon.trump.suit", 0),
        "observation.moon.trump.suit: missing; expected TRUMP_SUIT_NUMBER with a number 0-6, "
        "TRUMP_SUIT_DOUBLES or TRUMP_SUIT_NONE",
    ),
    (
        "moon-leader",
        moon_sample,
        _set("moon.leader", 4),
        "observation.moon.leader: 4; expected a seat 0-2",
    ),
    (
        "moon-trick-tile",
        moon_sample,
        _do(lambda m: m.moon.trick[0].ClearField("tile")),
        "observation.moon.trick[0].tile: missing; expected the tile played",
    ),
    (
        "moon-trick-tile-number",
        moon_sample,
        _set("moon.trick.0.tile.low", 7),
        "observation.moon.trick[0].tile.low: 7; expected a number 0-6",
    ),
    (
        "moon-tricks-seat",
        moon_sample,
        _set("moon.tricks.0.plays.1.seat", 3),
        "observation.moon.tricks[0].plays[1].seat: 3; expected a seat 0-2",
    ),
    (
        "moon-tricks-winner",
        moon_sample,
        _set("moon.tricks.0.winner", 5),
        "observation.moon.tricks[0].winner: 5; expected a seat 0-2",
    ),
    (
        "moon-tricks-won",
        moon_sample,
        _do(lambda m: m.moon.tricks_won.__delitem__(-1)),
        "observation.moon.tricks_won: 2 values; expected one per seat, 3",
    ),
    (
        "moon-widow",
        moon_sample,
        _do(lambda m: m.moon.widow.MergeFrom(games_pb2.Tile(high=3, low=4))),
        "observation.moon.widow: high 3 below low 4; expected the higher number in high: "
        "high 4, low 3",
    ),
]


@pytest.mark.parametrize(
    ("build", "breaker", "expected"),
    [(b, br, e) for _, b, br, e in MALFORMED_OBSERVATIONS],
    ids=[name for name, _, _, _ in MALFORMED_OBSERVATIONS],
)
def test_malformed_observations_name_the_field(
    build: Callable[[], games_pb2.Observation], breaker: Breaker, expected: str
) -> None:
    message = build()
    assert observation_from_proto(message) is not None  # valid before it is broken
    breaker(message)
    parsed = games_pb2.Observation.FromString(message.SerializeToString())
    assert error_of(lambda: observation_from_proto(parsed)) == expected


# -- hand and match results ------------------------------------------------------------------------


@pytest.mark.parametrize("end", list(HandEnd), ids=lambda e: e.value)
def test_hand_results_round_trip(end: HandEnd) -> None:
    result = HandResult(3, end, (0, 12, 0), "seat 1 went out")
    message = hand_result_to_proto(result, (4, 30, 9), match_id="m-1")
    parsed = referee_pb2.HandEnd.FromString(message.SerializeToString())
    assert parsed.match_id == "m-1"
    assert list(parsed.scores) == [4, 30, 9]
    assert parsed.end == hand_end_kind(end)
    assert referee_pb2.HandEndKind.Name(parsed.end) == "HAND_END_KIND_" + end.name
    assert hand_result_from_proto(parsed) == result


def test_hand_results_of_real_games_round_trip() -> None:
    for game in CONFIGS:
        rng = random.Random(1)
        last = game.new_game(1)
        while not last.is_terminal():
            last = last.apply(rng.choice(last.legal_actions()))
        assert last.hand_results
        for result in last.hand_results:
            back = hand_result_from_proto(hand_result_to_proto(result, last.scores))
            assert back == result


def test_unknown_hand_end_kinds_are_refused() -> None:
    assert error_of(lambda: hand_end_from_kind(0)) == (
        "hand_end.end: missing; expected a HandEndKind"
    )
    assert error_of(lambda: hand_result_from_proto(referee_pb2.HandEnd(end=99))) == (  # type: ignore[arg-type]
        "hand_end.end: unknown value 99; expected a HandEndKind"
    )


def test_outcomes_from_match_results() -> None:
    game = StraightGame(players=4, partnerships=True)
    won = referee_pb2.MatchResult(
        termination=referee_pb2.TERMINATION_NORMAL, winner=1, scores=[120, 255], detail="d"
    )
    outcome = outcome_from_proto(won, game)
    assert outcome is not None
    assert (outcome.winner, outcome.scores, outcome.detail) == (1, (120, 255), "d")
    assert outcome.winning_seats == (1, 3)
    void = referee_pb2.MatchResult(termination=referee_pb2.TERMINATION_VOID, winner=-1)
    assert outcome_from_proto(void, game) is None
    bad = referee_pb2.MatchResult(winner=2)
    assert error_of(lambda: outcome_from_proto(bad, game)) == (
        "match_result.winner: 2; expected a side 0-1 or -1"
    )
