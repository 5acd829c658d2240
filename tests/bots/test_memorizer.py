"""The memorizer (a cheat on purpose): it recognizes a deal it has seen, what it then pins is
the truth, it gains on the later rotations, and the repeat-deal check flags it.

Games run in-process (``sdk.local`` and ``tests/fakes/tournaments.py``), the search with a
fixed sample budget and no clock, so every run is the same.
"""

from __future__ import annotations

import pytest

from domino_arena.bots import HOUSE_BOTS, GreedyBot, RandomBot, make_bot
from domino_arena.bots.memorizer import MemorizerBot, Pinned
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.rules import CHANCE, TERMINAL, make_game
from domino_arena.sdk.rules.linegame import LineGameState
from domino_arena.server.stats.repeat_deals import repeat_deal_checks
from domino_arena.server.tournaments.scheduler import DealMode
from tests.fakes.tournaments import played_tournament


def memorizer(seed: int = 1, honest: str = "random") -> MemorizerBot:
    return MemorizerBot(seed, max_time=None, max_samples=1, honest=honest)


def test_it_is_a_house_bot_by_name() -> None:
    assert "memorizer" in HOUSE_BOTS
    assert make_bot("memorizer", seed=3).name == "memorizer"
    with pytest.raises(ValueError, match="honest must be one of greedy, random, search"):
        MemorizerBot(1, honest="psychic")


@pytest.mark.parametrize("name", ["straight", "doubles", "passing"])
def test_what_it_pins_on_a_remembered_deal_is_true(name: str) -> None:
    """Rotation 0 then rotation 1 of one deal: nothing is recognized the first time; the second
    time most decisions are, and every tile it places in a hand or the boneyard is there."""
    game = make_game(name, players=2)
    bot = memorizer()
    other = GreedyBot(2)
    recognized: list[int] = []
    for seats in ((bot, other), (other, bot)):
        before = bot.recognized_moves
        state = game.new_game(seed=2024)
        decisions = 0
        while state.current_seat != TERMINAL:
            seat = state.current_seat
            if seat == CHANCE:
                state = state.apply(state.legal_actions()[0])
                continue
            observation = state.observe(seat)
            moved = bot.recognized_moves
            action = seats[seat].choose(observation)
            if seats[seat] is bot:
                decisions += 1
                if bot.recognized_moves > moved:
                    assert bot.tracking is not None
                    pinned = Pinned(observation, bot.tracking.memory)
                    for held_seat, tiles in pinned.held.items():
                        assert tiles <= set(state.hands[held_seat])
                    assert isinstance(state, LineGameState)
                    for position, tile in enumerate(pinned.stock):
                        assert tile is None or state.boneyard[position] == tile
            state = state.apply(action)
        recognized.append(bot.recognized_moves - before)
        assert decisions > 0
    assert recognized[0] == 0
    assert recognized[1] > 0


def entrants(seed: int, honest: str = "random") -> dict[str, Bot]:
    return {
        "memorizer": memorizer(seed, honest),
        "greedy": GreedyBot(seed + 1),
        "greedy-b": GreedyBot(seed + 2),
        "greedy-c": GreedyBot(seed + 3),
        "random": RandomBot(seed + 4),
        "random-b": RandomBot(seed + 5),
    }


def test_the_check_flags_the_memorizer_and_no_honest_bot() -> None:
    """Six entrants, two players, four deals per pairing of Straight Dominoes (120 games)."""
    bots = entrants(seed=11)
    rows = played_tournament(make_game("straight", players=2), bots, games_per_pairing=4, seed=11)
    checks = {c.bot: c for c in repeat_deal_checks(rows, list(bots))}
    cheat = checks["memorizer"]
    assert cheat.deals == 5 * 4
    assert cheat.later_score - cheat.first_score > 0.4
    assert cheat.flagged, cheat
    assert [bot for bot, c in checks.items() if c.flagged] == ["memorizer"]


def test_with_fresh_deals_there_is_nothing_to_remember() -> None:
    bots = entrants(seed=5)
    rows = played_tournament(
        make_game("straight", players=2),
        bots,
        games_per_pairing=2,
        deals=DealMode.FRESH,
        seed=5,
    )
    cheat = bots["memorizer"]
    # A chance look-alike of a remembered hand can pass for it for a move or two; no more.
    assert isinstance(cheat, MemorizerBot) and cheat.recognized_moves <= 5
    assert all(c.deals == 0 and c.p_value == 1.0 for c in repeat_deal_checks(rows, list(bots)))
