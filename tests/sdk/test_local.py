"""Local play (sdk/local.py) and the house bots: whole games in-process, hooks, bad bots.

Every registered game is played with every player count it accepts, so a game works here the
moment it is added to the registry.
"""

from __future__ import annotations

import importlib.util
import itertools
from typing import Any

import pytest

from domino_arena.bots import (
    HOUSE_BOTS,
    GreedyBot,
    RandomBot,
    UnknownBotError,
    UnsupportedGameError,
    make_bot,
)
from domino_arena.bots import greedy as greedy_module
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.local import (
    BotActionError,
    play_game,
)
from domino_arena.sdk.match.notices import Step
from domino_arena.sdk.match.records import parse_record, record_lines, replay
from domino_arena.sdk.match.results import Termination
from domino_arena.sdk.match.seeds import bot_seed
from domino_arena.sdk.rules import (
    CHANCE,
    DEAL,
    DRAW,
    GAMES,
    Action,
    Game,
    IllegalActionError,
    Observation,
    Outcome,
    make_game,
)
from domino_arena.sdk.rules.dealing import first_seat as dealt_first_seat
from tests.fakes.bots import Fixed, ModestBot
from tests.fakes.games import CONFIG_IDS, CONFIGS, play_random, random_bots


def test_configs_cover_every_passing_table() -> None:
    passing = [options for name, options in CONFIGS if name == "passing"]
    assert passing == [
        {"players": 2},
        {"players": 3},
        {"players": 4},
        {"players": 4, "partnerships": True},
    ]


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_games_play_to_the_end_and_replay(name: str, options: dict[str, Any], seed: int) -> None:
    result = play_random(name, options, seed)
    state = result.state
    assert state.is_terminal()
    assert result.outcome == state.outcome()
    history = state.history
    assert [(s.seat, s.action) for s in result.record.steps] == [
        (e.seat, e.action) for e in history
    ]
    assert result.think_ms == (None,) * len(history)
    assert result.record.game == name
    assert result.record.options == state.game.options()
    assert str(replay(result.record)) == f"OK: {len(history)} steps, result matches"


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=CONFIG_IDS)
def test_same_seed_same_game_other_seed_other_game(name: str, options: dict[str, Any]) -> None:
    first = play_random(name, options, 5)
    again = play_random(name, options, 5)
    other = play_random(name, options, 6)
    assert first.record == again.record
    assert first.record.steps != other.record.steps


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=CONFIG_IDS)
def test_first_seat_is_resolved_and_recorded(name: str, options: dict[str, Any]) -> None:
    game = make_game(name, **options)
    seed = 12
    default = play_game(game, random_bots(game, seed), seed, timer=None)
    assert default.record.first_seat == dealt_first_seat(seed, game.num_players)
    explicit = play_game(
        game, random_bots(game, seed), seed, first_seat=default.record.first_seat, timer=None
    )
    assert explicit.record == default.record
    last = game.num_players - 1
    chosen = play_game(game, random_bots(game, seed), seed, first_seat=last, timer=None)
    assert chosen.record.first_seat == last
    assert replay(chosen.record).ok


def test_first_seat_starts_the_passing_game() -> None:
    game = make_game("passing", players=3)
    for seat in range(3):
        result = play_game(game, random_bots(game, 4), 4, first_seat=seat, timer=None)
        assert result.record.steps[0].seat == seat


class Recorder(ModestBot):
    """A modest random bot that remembers every hook call and observation it gets."""

    name = "recorder"

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.started: list[tuple[Game, int]] = []
        self.ended: list[tuple[Outcome, int]] = []
        self.observations: list[Observation] = []

    def choose(self, observation: Observation) -> Action:
        assert not self.ended, "choose after on_game_end"
        assert self.started, "choose before on_game_start"
        self.observations.append(observation)
        return super().choose(observation)

    def on_game_start(self, game: Game, seat: int) -> None:
        self.started.append((game, seat))

    def on_game_end(self, outcome: Outcome, seat: int) -> None:
        self.ended.append((outcome, seat))


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=CONFIG_IDS)
def test_bots_see_their_own_seat_and_get_both_hooks(name: str, options: dict[str, Any]) -> None:
    game = make_game(name, **options)
    bots = [Recorder(seat) for seat in range(game.num_players)]
    result = play_game(game, bots, 3, timer=None)
    for seat, bot in enumerate(bots):
        assert bot.started == [(game, seat)]
        assert bot.ended == [(result.outcome, seat)]
        for observation in bot.observations:
            assert observation.seat == seat
            assert observation.current_seat == seat
            assert observation.legal_actions
    asked = sum(len(bot.observations) for bot in bots)
    assert asked == sum(1 for s in result.record.steps if s.seat != CHANCE)
    assert result.record.seats == ("recorder",) * game.num_players


def test_uniform_random_bots_play_passing_to_the_end() -> None:
    for players in (2, 3, 4):
        game = make_game("passing", players=players)
        bots: list[Bot] = [RandomBot(bot_seed(2, s)) for s in range(players)]
        result = play_game(game, bots, 2)
        assert result.state.is_terminal()
        assert result.record.seats == ("random",) * players
        assert replay(result.record).ok


def test_a_game_without_a_winner_is_adjudicated_at_max_deals() -> None:
    game = make_game("passing", players=2)
    played = play_game(game, random_bots(game, 1), 1, max_deals=2)
    state, result = played.state, played.result
    assert state.is_chance() and state.outcome() is None
    assert state.deal_number == 2
    assert len(state.hand_results) == 2
    assert result.termination is Termination.ADJUDICATED
    assert result.scores == state.scores
    top = max(state.scores)
    assert result.winner == (state.scores.index(top) if state.scores.count(top) == 1 else None)
    scores = "/".join(str(s) for s in state.scores)
    assert result.detail.startswith(
        f"adjudicated: no winner by the rules after 2 deals, the referee's cap (max_deals); "
        f"scores {scores}: "
    )
    assert played.record.result.termination is Termination.ADJUDICATED
    assert played.record.result.winner == result.winner
    assert replay(played.record).ok


def test_an_adjudicated_tie_at_the_top_is_a_draw() -> None:
    game = make_game("moon")
    for seed in range(200):
        played = play_game(game, random_bots(game, seed), seed, max_deals=1)
        scores = played.result.scores
        if played.result.termination is Termination.ADJUDICATED and scores.count(max(scores)) > 1:
            break
    else:
        pytest.fail("no tie at the top after one deal in 200 seeds")
    assert played.result.winner is None
    assert "share the highest score, a draw between them" in played.result.detail
    assert played.record.result.winner is None
    assert replay(played.record).ok
    text = "".join(line + "\n" for line in record_lines(played.record))
    assert parse_record(text) == played.record, "a tied adjudication reads back as written"


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=CONFIG_IDS)
def test_on_step_sees_every_step_in_order(name: str, options: dict[str, Any]) -> None:
    game = make_game(name, **options)
    steps: list[Step] = []
    result = play_game(game, random_bots(game, 8), 8, on_step=steps.append, timer=None)
    assert [s.index for s in steps] == list(range(len(result.record.steps)))
    for step, recorded in zip(steps, result.record.steps, strict=True):
        assert (step.seat, step.action) == (recorded.seat, recorded.action)
        assert step.before.current_seat == step.seat
        assert step.after.history[-1].action == step.action
    for earlier, later in itertools.pairwise(steps):
        assert earlier.after is later.before
    assert steps[-1].after is result.state


def test_the_timer_measures_each_choice_and_skips_deals() -> None:
    ticks = itertools.count()

    def timer() -> float:
        return next(ticks) * 0.25  # every call is a quarter second after the previous one

    game = make_game("passing", players=2)
    result = play_game(game, random_bots(game, 1), 1, timer=timer)
    assert any(s.seat == CHANCE for s in result.record.steps)
    for step, ms in zip(result.record.steps, result.think_ms, strict=True):
        assert step.think_ms == ms
        assert ms == (None if step.seat == CHANCE else 250.0)


def test_names_replace_the_bot_names_in_the_record() -> None:
    game = make_game("passing", players=2)
    result = play_game(game, random_bots(game, 1), 1, names=["ann", "bob"], timer=None)
    assert result.record.seats == ("ann", "bob")


def test_time_control_and_created_go_into_the_record() -> None:
    game = make_game("passing", players=2)
    result = play_game(
        game,
        random_bots(game, 1),
        1,
        timer=None,
        time_control={"move_ms": 1000},
        created="2024-05-01T12:00:00Z",
    )
    assert result.record.time_control == {"move_ms": 1000}
    assert result.record.created == "2024-05-01T12:00:00Z"


def test_the_number_of_bots_must_match_the_seats() -> None:
    game = make_game("passing", players=3)
    with pytest.raises(ValueError, match="needs 3 bots, got 2"):
        play_game(game, [RandomBot(1), RandomBot(2)], 1)
    with pytest.raises(ValueError, match="expected 3 names, one per seat, got 1"):
        play_game(game, random_bots(game, 1), 1, names=["x"])


def test_an_illegal_action_names_the_bot_seat_action_rule_and_legal_set() -> None:
    game = make_game("passing", players=2)
    bots = [Fixed(DRAW, "drawer"), Fixed(DRAW, "drawer")]
    with pytest.raises(BotActionError) as caught:
        play_game(game, bots, 3, first_seat=1)
    error = caught.value
    assert error.bot == "drawer"
    assert error.seat == 1
    assert error.action == "'draw'"
    assert len(error.legal) == 7
    assert all(text.startswith("play ") for text in error.legal)
    opening = game.new_game(3, first_seat=1)
    with pytest.raises(IllegalActionError) as refused:
        opening.apply(DRAW)
    assert "docs/rules.md" in refused.value.rule
    assert str(error) == (
        f"bot 'drawer' in seat 1 chose 'draw' at step 0: {refused.value.rule}; "
        f"legal actions: {', '.join(str(a) for a in opening.legal_actions())}"
    )


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=CONFIG_IDS)
def test_a_bot_taking_the_deal_is_refused_in_every_game(name: str, options: dict[str, Any]) -> None:
    game = make_game(name, **options)
    bots = [Fixed(DEAL, f"dealer{seat}") for seat in range(game.num_players)]
    with pytest.raises(BotActionError, match=r"bot 'dealer\d' in seat \d chose 'deal' at step \d+"):
        play_game(game, bots, 1)


def test_an_answer_that_is_not_an_action_is_refused() -> None:
    game = make_game("passing", players=2)
    with pytest.raises(BotActionError, match=r"chose 'pass' at step 0: that is not an action"):
        play_game(game, [Fixed("pass"), Fixed("pass")], 1)


# -- house bots -----------------------------------------------------------------------------------


def test_bot_seeds_are_fixed_and_differ_by_seat_and_game() -> None:
    assert bot_seed(7, 0) == bot_seed(7, 0)
    assert len({bot_seed(7, s) for s in range(4)}) == 4
    assert bot_seed(7, 0) != bot_seed(8, 0)


def test_random_bot_is_deterministic_and_covers_every_legal_action() -> None:
    observation = make_game("passing", players=2).new_game(3, first_seat=0).observe(0)
    legal = observation.legal_actions
    assert len(legal) == 7
    first = [RandomBot(42).choose(observation) for _ in range(3)]
    assert first[0] == first[1] == first[2]
    bot = RandomBot(42)
    chosen = [bot.choose(observation) for _ in range(500)]
    assert set(chosen) == set(legal)
    again = RandomBot(42)
    assert [again.choose(observation) for _ in range(500)] == chosen


def test_make_bot_builds_each_house_bot() -> None:
    assert sorted(HOUSE_BOTS) == ["greedy", "memorizer", "random", "search"]
    assert isinstance(make_bot("random", 1), RandomBot)
    assert isinstance(make_bot("greedy", 1), GreedyBot)
    assert make_bot("random", 1).name == "random"
    assert make_bot("greedy", 1).name == "greedy"


def test_make_bot_refuses_an_unknown_name() -> None:
    with pytest.raises(UnknownBotError) as caught:
        make_bot("clever", 1)
    assert str(caught.value) == (
        "unknown bot 'clever': expected one of greedy, memorizer, random, search"
    )


def _has_greedy(name: str) -> bool:
    module = greedy_module.STRATEGY_MODULES.get(name)
    return module is not None and importlib.util.find_spec(module) is not None


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=CONFIG_IDS)
def test_greedy_plays_every_game_it_has_a_strategy_for(name: str, options: dict[str, Any]) -> None:
    if not _has_greedy(name):
        pytest.skip(f"bots/greedy/{name}.py has not landed yet")
    game = make_game(name, **options)
    bots: list[Bot] = [GreedyBot(bot_seed(9, s)) for s in range(game.num_players)]
    result = play_game(game, bots, 9, timer=None)
    again = play_game(
        game, [GreedyBot(bot_seed(9, s)) for s in range(game.num_players)], 9, timer=None
    )
    assert result.record == again.record
    assert replay(result.record).ok


def test_greedy_names_a_missing_strategy_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        greedy_module.STRATEGY_MODULES, "passing", "domino_arena.bots.greedy.no_such_game"
    )
    game = make_game("passing", players=2)
    with pytest.raises(UnsupportedGameError) as caught:
        play_game(game, [GreedyBot(1), RandomBot(2)], 1)
    assert str(caught.value) == (
        "greedy: no strategy for game 'passing' yet (bots/greedy/no_such_game.py is missing)"
    )


def test_greedy_names_a_game_it_does_not_know(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(greedy_module.STRATEGY_MODULES, "passing")
    with pytest.raises(UnsupportedGameError) as caught:
        GreedyBot(1).on_game_start(make_game("passing"), 0)
    assert str(caught.value) == (
        "greedy: no strategy for game 'passing' (it knows doubles, moon, straight)"
    )


def test_greedy_lists_a_module_for_every_registered_game() -> None:
    assert set(GAMES) <= set(greedy_module.STRATEGY_MODULES)
