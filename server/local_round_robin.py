"""A round robin of house bots played in-process: the main job until the gRPC referee lands.

The schedule comes from :mod:`.scheduler` (every table, every seat rotation, duplicate deals);
each game is played with :func:`domino_arena.sdk.local.play_game`. The result is a standings
table per game configuration: games, wins and the win rate of every entrant, where a win means
the entrant's side won the game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from domino_arena.bots import make_bot
from domino_arena.sdk.local import play_game, seat_seed
from domino_arena.sdk.rules import Game

from .scheduler import ScheduledGame, round_robin


@dataclass(slots=True)
class EntrantStanding:
    """One entrant's tally in one game configuration."""

    name: str
    games: int = 0
    wins: int = 0
    points: int = 0
    """Sum of the final scores of the entrant's side."""

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0


@dataclass(slots=True)
class ConfigStandings:
    """The standings of one game configuration, e.g. Passing Game for 4 in partnerships."""

    game: Game
    entrants: dict[str, EntrantStanding] = field(default_factory=dict)
    games_played: int = 0

    def table(self) -> list[EntrantStanding]:
        return sorted(self.entrants.values(), key=lambda e: (-e.win_rate, -e.points, e.name))


def entrant_bot(entrant: str) -> str:
    """Return the house bot an entrant name stands for: ``greedy-2`` plays ``greedy``."""
    return entrant.rsplit("-", 1)[0]


def play_configuration(
    game: Game,
    entrants: Sequence[str],
    *,
    seed: int,
    games_per_pairing: int = 1,
    on_game: Callable[[ScheduledGame, Game], None] | None = None,
) -> ConfigStandings:
    """Play the whole round robin of ``game`` between ``entrants`` and return the standings."""
    partnerships = len(game.sides) != game.num_players
    schedule = round_robin(
        entrants, game.num_players, games_per_pairing=games_per_pairing, partnerships=partnerships
    )
    standings = ConfigStandings(game, {name: EntrantStanding(name) for name in entrants})
    for scheduled in schedule:
        deal_seed = seed * 1_000_003 + scheduled.deal_id
        bots = [
            make_bot(entrant_bot(name), seat_seed(deal_seed, seat))
            for seat, name in enumerate(scheduled.seats)
        ]
        result = play_game(game, bots, deal_seed, names=scheduled.seats, timer=None)
        outcome = result.outcome
        for seat, name in enumerate(scheduled.seats):
            side = game.side_of(seat)
            tally = standings.entrants[name]
            tally.games += 1
            tally.points += outcome.scores[side]
            tally.wins += side == outcome.winner
        standings.games_played += 1
        if on_game is not None:
            on_game(scheduled, game)
    return standings
