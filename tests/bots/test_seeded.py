"""The house bots play each match from the match's own seed for their seat (bots/seeded.py),
not from the seed they were made with: so a bot process that numbers its bots in the order its
matches arrive plays every match alike on every run (docs/referee.md, "Reproducible play")."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable
from typing import Final

import pytest

from domino_arena.bots import player_factory
from domino_arena.bots.seeded import SeededBot
from domino_arena.sdk.bot import AsyncBot, Bot, MatchStartInfo
from domino_arena.sdk.local import match_start_info, play_game
from domino_arena.sdk.match.records import write_record
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.match.seeds import bot_seed
from domino_arena.sdk.rules import Game, make_game

HOUSE: Final = ("random", "greedy")


def record_text(game: Game, new_bot: Callable[[], Bot | AsyncBot], seed: int) -> str:
    """The record of a local match of two bots made by ``new_bot``, one after the other."""
    bots = [new_bot() for _ in range(game.num_players)]
    assert all(isinstance(bot, Bot) for bot in bots)
    out = io.StringIO()
    write_record(
        play_game(game, [b for b in bots if isinstance(b, Bot)], seed, timer=None).record, out
    )
    return out.getvalue()


def start(game: Game, seat: int, seed: int | None, *, resumed: bool = False) -> MatchStartInfo:
    info = match_start_info(
        "m", game, seat, ["a", "b"], fault_policy=FaultPolicy.SUBSTITUTE, max_strikes=3
    )
    return dataclasses.replace(info, bot_seed=seed, resumed=resumed)


@pytest.mark.parametrize("kind", HOUSE)
def test_a_match_is_played_alike_whatever_seed_the_bots_were_made_with(kind: str) -> None:
    game = make_game("passing", players=2)
    early = player_factory(kind, 1)
    late = player_factory(kind, 1000)
    for _ in range(5):  # the late process has played five matches already
        late()
    first = record_text(game, early, seed=42)
    assert record_text(game, late, seed=42) == first
    assert record_text(game, early, seed=43) != first


def test_each_match_and_seat_gets_its_own_seed_and_a_resumed_match_keeps_its_generator() -> None:
    game = make_game("passing", players=2)
    bot = player_factory("random", 5)()
    assert isinstance(bot, SeededBot) and bot.seed == 5
    bot.on_match_start(start(game, 1, bot_seed(42, 1)))
    assert bot.seed == bot_seed(42, 1) != bot_seed(42, 0) != bot_seed(43, 1)
    drawn = bot.rng.random()
    bot.on_match_start(start(game, 1, 77, resumed=True))
    assert bot.seed == bot_seed(42, 1), "a resumed match plays on from where it was"
    bot.on_match_start(start(game, 1, None))
    assert bot.seed == bot_seed(42, 1), "a referee that sends no seed leaves the bot's own"
    bot.reseed(bot_seed(42, 1))
    assert bot.rng.random() == drawn
