"""Positions where a seat has a choice, from mixed greedy and modest-random games of every
configuration: what the search bot's tests (on either engine) decide on."""

from __future__ import annotations

from collections.abc import Iterator

from domino_arena.bots.greedy import GreedyBot
from domino_arena.sdk.match.seeds import bot_seed
from domino_arena.sdk.rules import Action, Game, GameState, Observation, configurations
from tests.fakes.bots import ModestBot

CONFIGS = list(configurations())
IDS = [f"{g.name}-{g.num_players}{'p' if len(g.sides) != g.num_players else ''}" for g in CONFIGS]


class Mixed(ModestBot):
    """Greedy or modest random by the toss of its own coin: varied positions that still finish."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.greedy = GreedyBot(seed)

    def choose(self, observation: Observation) -> Action:
        if self.rng.random() < 0.5:
            return self.greedy.choose(observation)
        return super().choose(observation)


def positions(game: Game, seed: int, steps: int) -> Iterator[GameState]:
    """Yield up to ``steps`` states of a mixed game where a seat has a choice to make."""
    state = game.new_game(seed)
    bots = [Mixed(bot_seed(seed, s)) for s in range(game.num_players)]
    yielded = 0
    while not state.is_terminal() and yielded < steps:
        if state.is_chance():
            state = state.apply(state.legal_actions()[0])
            continue
        if len(state.legal_actions()) > 1:
            yield state
            yielded += 1
        seat = state.current_seat
        state = state.apply(bots[seat].choose(state.observe(seat)))
