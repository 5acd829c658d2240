"""Random-playout speed of the rules engines, against OpenSpiel's pure-Python dominoes.

Usage::

    python bench/rules_bench.py [--seconds S | --games N] [--rounds R]
    python bench/rules_bench.py --profile GAME [PLAYERS [teams]] [--games N]

Every registered game is played at every player count it accepts (and in partnerships where it
allows them), N seeded games each, by uniformly random legal actions. A *move* is what a bot
loop costs the engine: the mover's ``observe(seat)``, ``legal_actions()`` and ``apply(action)``.
The ``deal`` chance steps between hands are applied but not counted.

In the same run, and the same way, it plays OpenSpiel's ``python_block_dominoes`` (2 players)
and ``python_team_dominoes`` (4 players in two partnerships), if the optional ``bench`` extra is
installed (``pip install -e '.[bench]'``). Their chance steps (one per dealt tile) are applied
but not counted; a move is the mover's observation, ``legal_actions()`` and ``apply_action``.
The mover's observation is OpenSpiel's own observer (``make_observation``) with perfect recall
filled by ``set_from(state, player)``: like our ``observe``, it carries the hand's public
history, not only the last action.

The ratio columns divide our moves/s by OpenSpiel's: the ``block`` column against block
dominoes, the ``team`` column against team dominoes; the pairing with the same player count
(2 players with block, 4 in partnerships with team) is marked ``*``.

Games/s is not comparable across the two libraries: one of our games is played to its target
over many hands, one OpenSpiel game is a single hand. Hands/s is shown for that reason.

Time is the process's CPU time (``time.process_time``), not the wall clock, and every
configuration of both libraries is played R times over the same seeds, the rounds interleaved
(ours, then OpenSpiel's, then ours again...); each keeps its fastest round. On a shared machine
that keeps another process's bursts out of the ratios, which is what the figures are for.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from domino_arena.sdk.rules import CHANCE, GAMES, Game, RulesError, make_game

CANDIDATE_OPTIONS: tuple[dict[str, Any], ...] = (
    {"players": 2},
    {"players": 3},
    {"players": 4},
    {"players": 4, "partnerships": True},
    {},
)
OPENSPIEL_GAMES: tuple[tuple[str, int, bool], ...] = (
    ("python_block_dominoes", 2, False),
    ("python_team_dominoes", 4, True),
)
"""(OpenSpiel name, players, partnerships)."""


@dataclass
class Result:
    """What one configuration did in the benchmark."""

    label: str
    players: int
    teams: bool
    games: int
    hands: int
    moves: int
    seconds: float

    @property
    def moves_per_s(self) -> float:
        return self.moves / self.seconds

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds

    @property
    def hands_per_s(self) -> float:
        return self.hands / self.seconds


def our_games() -> Iterator[tuple[str, Game]]:
    """Every distinct configuration the registry accepts, from the candidate options."""
    seen: list[Game] = []
    for name in sorted(GAMES):
        for options in CANDIDATE_OPTIONS:
            try:
                game = make_game(name, **options)
            except RulesError:
                continue
            if game not in seen:
                seen.append(game)
                yield name, game


def play_ours(game: Game, seeds: range) -> tuple[int, int]:
    """Play one random game per seed; return (moves, hands)."""
    moves = hands = 0
    for seed in seeds:
        rng = random.Random(seed)
        state = game.new_game(seed)
        seat = state.current_seat
        while seat >= 0 or seat == CHANCE:
            if seat == CHANCE:
                state = state.apply(state.legal_actions()[0])
            else:
                state.observe(seat)
                legal = state.legal_actions()
                state = state.apply(legal[rng.randrange(len(legal))])
                moves += 1
            seat = state.current_seat
        hands += len(state.hand_results)
    return moves, hands


def bench_ours(name: str, game: Game, n_games: int) -> Result:
    start = time.process_time()
    moves, hands = play_ours(game, range(n_games))
    seconds = time.process_time() - start
    teams = len(game.sides) != game.num_players
    return Result(name, game.num_players, teams, n_games, hands, moves, seconds)


def load_openspiel() -> tuple[Any, Callable[..., Any]] | None:
    """Return (pyspiel, make_observation), or None if the ``bench`` extra is not installed."""
    # Imported here, not at the top: the extra is optional and the script runs without it.
    try:
        import open_spiel.python.games  # noqa: F401, PLC0415 - registers the python_* games
        import pyspiel  # noqa: PLC0415
        from open_spiel.python.observation import make_observation  # noqa: PLC0415
    except ImportError:
        return None
    return pyspiel, make_observation


def play_openspiel(pyspiel: Any, make_observation: Any, name: str, seeds: range) -> int:
    """Play one random game per seed; return the number of (non-chance) moves."""
    game = pyspiel.load_game(name)
    observer = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    moves = 0
    for seed in seeds:
        rng = random.Random(seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                player = state.current_player()
                observer.set_from(state, player)
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
                moves += 1
    return moves


def bench_openspiel(pyspiel: Any, make_observation: Any, n_games: int) -> list[Result]:
    results = []
    for name, players, teams in OPENSPIEL_GAMES:
        start = time.process_time()
        moves = play_openspiel(pyspiel, make_observation, name, range(n_games))
        seconds = time.process_time() - start
        results.append(Result(name, players, teams, n_games, n_games, moves, seconds))
    return results


def fastest(rounds: list[list[Result]]) -> list[Result]:
    """Return, configuration by configuration, the round that took the least time."""
    return [min(same, key=lambda r: r.seconds) for same in zip(*rounds, strict=True)]


def pick_games(seconds: float, openspiel: tuple[Any, Any] | None) -> int:
    """Return a number of games per configuration that makes the run last about ``seconds``."""
    pilot = 3
    start = time.process_time()
    for _, game in our_games():
        play_ours(game, range(10_000, 10_000 + pilot))
    if openspiel is not None:
        for name, _, _ in OPENSPIEL_GAMES:
            play_openspiel(*openspiel, name, range(10_000, 10_000 + pilot))
    per_game = (time.process_time() - start) / pilot
    return max(1, int(seconds / per_game))


def print_table(ours: list[Result], theirs: list[Result]) -> None:
    block = next((r for r in theirs if not r.teams), None)
    team = next((r for r in theirs if r.teams), None)
    head = f"{'game':<24}{'players':<10}{'moves/s':>10}{'us/move':>9}{'games/s':>10}{'hands/s':>10}"
    if theirs:
        head += f"{'vs block':>11}{'vs team':>10}"
    print(head)
    print("-" * len(head))
    for r in ours:
        who = f"{r.players}{' teams' if r.teams else ''}"
        line = f"{r.label:<24}{who:<10}{r.moves_per_s:>10,.0f}{1e6 / r.moves_per_s:>9.1f}"
        line += f"{r.games_per_s:>10.1f}{r.hands_per_s:>10.1f}"
        for other, same in ((block, r.players == 2), (team, r.players == 4 and r.teams)):
            if other is not None:
                cell = f"{r.moves_per_s / other.moves_per_s:.2f}x{'*' if same else ' '}"
                line += f"{cell:>10}" if other is team else f"{cell:>11}"
        print(line)
    for r in theirs:
        who = f"{r.players}{' teams' if r.teams else ''}"
        line = f"{r.label:<24}{who:<10}{r.moves_per_s:>10,.0f}{1e6 / r.moves_per_s:>9.1f}"
        print(line + f"{r.games_per_s:>10.1f}{r.hands_per_s:>10.1f}")


def profile(words: list[str], n_games: int) -> None:
    """Print where the time of a random playout goes (cProfile, by own time).

    ``words`` name the configuration as the table does: ``passing``, ``passing 4``,
    ``passing 4 teams``; a game alone is its first configuration.
    """
    name, *rest = words
    players = int(rest[0]) if rest else None
    teams = rest[1:] == ["teams"]
    game = next(
        g
        for n, g in our_games()
        if n == name and (players is None or (g.num_players == players and g.partnerships == teams))
    )
    print(f"{game.describe()}: {n_games} seeded random games")
    profiler = cProfile.Profile(time.process_time)  # CPU time: the machine may be shared
    profiler.runcall(play_ours, game, range(n_games))
    pstats.Stats(profiler).sort_stats("tottime").print_stats(15)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, help="games per configuration (default 100)")
    parser.add_argument(
        "--seconds", type=float, help="instead of --games: aim for a run of about S seconds"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds per configuration, fastest kept (default 3)"
    )
    parser.add_argument(
        "--profile",
        nargs="+",
        metavar="GAME",
        help="profile a playout and stop: GAME [PLAYERS [teams]], e.g. 'passing 4 teams'",
    )
    args = parser.parse_args(argv)
    if args.profile:
        profile(args.profile, args.games or 100)
        return 0
    openspiel = load_openspiel()
    if args.games is not None:
        n_games = args.games
    elif args.seconds is not None:
        n_games = max(1, pick_games(args.seconds, openspiel) // args.rounds)
    else:
        n_games = 100
    print(
        f"{n_games} seeded random games per configuration, fastest of {args.rounds} rounds "
        f"(CPU time); Python {sys.version.split()[0]}"
    )
    print("a move = the mover's observation + legal actions + apply; chance steps not counted\n")
    games = list(our_games())
    our_rounds: list[list[Result]] = []
    their_rounds: list[list[Result]] = []
    for _ in range(args.rounds):
        our_rounds.append([bench_ours(name, game, n_games) for name, game in games])
        if openspiel is not None:
            their_rounds.append(bench_openspiel(*openspiel, n_games))
    ours = fastest(our_rounds)
    theirs = fastest(their_rounds) if their_rounds else []
    print_table(ours, theirs)
    if openspiel is None:
        print(
            "\nOpenSpiel is not installed, so there is nothing to compare with. Install the "
            "optional extra:\n    .venv/bin/pip install -e '.[bench]'"
            "   (or: .venv/bin/pip install open-spiel)"
        )
    else:
        print(
            "\nvs block / vs team: our moves/s divided by python_block_dominoes' (2 players) /"
            " python_team_dominoes' (4 players, partnerships);\n* marks the pairing with the same"
            " player count. OpenSpiel's observation: make_observation(game, perfect_recall=True)"
            " + set_from(state, mover).\ngames/s: ours are whole games to the target, OpenSpiel's"
            " are single hands; compare hands/s or moves/s."
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
