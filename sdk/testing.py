"""A compliance check a bot author runs on their own bot, locally, before connecting it.

:func:`check_bot` asks the bot for an action in seeded positions of every game configuration
(random playouts, the opening included), each presented as a match that resumes there, and
checks that every answer is an :class:`~.rules.Action`, is legal, and came within the time limit.
Then it plays one whole local game per configuration (:func:`~.local.play_game`) with the bot
in every seat, delivering every hook the referee would, and checks that the game finishes:
by the rules, or at the check's cap on deals (:data:`CHECK_MAX_DEALS`, adjudicated as the
referee would) unless no deal was ever played (every seat passing every deal stalls a game).
The :class:`ComplianceReport` lists each failure precisely: the game, the position, what the bot
returned, the legal actions and the time it took.

>>> from domino_arena.bots import RandomBot
>>> report = check_bot(lambda: RandomBot(1), games=["passing"], positions=3)
>>> report.passed, report.positions
(True, 12)

From a shell (exit status 0 when the bot passes, 1 when it fails, 2 on a usage error)::

    python -m domino_arena.sdk.testing mybot:MyBot [--games passing,moon] [--positions 20]
    python -m domino_arena.sdk.testing exec:./mybot     # a program speaking the stdio protocol

The same seed always gives the same positions, so a failure can be reproduced by running the
check again; ``--seed`` chooses other positions.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .bot import (
    AnyBot,
    AsyncBot,
    Bot,
    Clock,
    FaultInfo,
    HandEndInfo,
    MatchEndInfo,
    MatchEvent,
    MatchStartInfo,
    TimeLimits,
    set_current_clock,
)
from .compliance import ComplianceReport, Failure, Problem, Streak
from .loading import EXEC_PREFIX, BotOrFactory, load_python_bot
from .local import match_end_info, match_start_info, play_game
from .match.bot_errors import shown
from .match.notices import Step
from .match.results import FaultPolicy, MatchResult, Termination
from .positions import Position, label, sample_positions
from .rules import (
    GAMES,
    Action,
    Game,
    GameState,
    HandEnd,
    IllegalActionError,
    Observation,
    configurations,
)
from .rules.dealing import first_seat

__all__ = [
    "CHECK_MAX_DEALS",
    "DEFAULT_POSITIONS",
    "BotOrFactory",
    "ComplianceReport",
    "Failure",
    "Problem",
    "check_bot",
    "load_bot",
    "main",
]

DEFAULT_POSITIONS: Final = 20
"""Positions checked per game configuration."""
CHECK_MAX_DEALS: Final = 200
"""The check's cap on deals for its whole games: a game nobody has won by then is adjudicated,
as the referee's cap would (a bot that plays every move legally passes, however its games go)."""


def check_bot(
    bot: BotOrFactory,
    games: Sequence[str] | None = None,
    positions: int = DEFAULT_POSITIONS,
    time_limit: float = 1.0,
    *,
    seed: int = 0,
    clock: Callable[[], float] = time.perf_counter,
    full_games: bool = True,
    progress: Callable[[str], None] | None = None,
) -> ComplianceReport:
    """Check that ``bot`` answers every kind of position legally and in time.

    Args:
        bot: a bot object (it answers every position and plays every seat), or a callable
            returning a new one (a new bot per position and per seat of each local game).
        games: registry names of the games to check; all of them by default.
        positions: positions per game configuration.
        time_limit: the longest an answer may take, in seconds (the referee's move time).
        seed: chooses the positions and the local games' deals.
        clock: the timer, in seconds (tests pass a fake one).
        full_games: also play one whole local game per configuration.
        progress: told, as a line, each configuration as it is checked (``main`` prints them
            on stderr).

    The check stops early when the bot fails the same way again and again (:class:`Streak`);
    the report's ``stopped`` says so.
    """
    source = _source(bot)
    unknown = sorted(set(games or ()) - set(GAMES))
    if unknown or (games is not None and not games):
        raise ValueError(
            f"unknown game(s) {', '.join(unknown) or '(none given)'}: "
            f"expected some of {', '.join(sorted(GAMES))}"
        )
    sample = source()
    name = f"{type(sample).__name__} '{getattr(sample, 'name', '?')}'"
    failures: list[Failure] = []
    names: list[str] = []
    asked = played = 0
    streak = Streak()
    stopped = ""
    checked = list(configurations(games))
    with asyncio.Runner() as runner:
        caller = _Caller(runner, clock, time_limit)
        for index, game in enumerate(checked, 1):
            if stopped:
                break
            names.append(game.describe())
            if progress is not None:
                progress(f"checking {game.describe()} ({index}/{len(checked)})")
            for position in sample_positions(game, positions, seed):
                asked += 1
                found = _check_position(source(), game, position, caller)
                failures += found
                if stopped := streak.add(found):
                    break
            if full_games and not stopped:
                found, finished = _check_game(source, game, seed, caller)
                failures += found
                played += finished
                stopped = streak.add(found)
        slowest = caller.slowest
    return ComplianceReport(
        bot=name,
        configurations=tuple(names),
        positions=asked,
        games=played,
        time_limit=time_limit,
        slowest=slowest,
        failures=tuple(failures),
        stopped=stopped,
    )


def _source(bot: BotOrFactory) -> Callable[[], AnyBot]:
    """Return a callable giving the bot to use: the same object, or a new one each time."""
    if isinstance(bot, Bot | AsyncBot):
        shared: AnyBot = bot
        return lambda: shared
    if not callable(bot):
        raise TypeError(f"expected a Bot, an AsyncBot or a callable returning one, got {bot!r}")

    def make() -> AnyBot:
        made = bot()
        if not isinstance(made, Bot | AsyncBot):
            raise TypeError(f"the bot factory returned {made!r}, not a Bot or an AsyncBot")
        return made

    return make


class _Caller:
    """Calls a bot's ``choose`` and hooks, sync or async, timing ``choose`` with ``clock``."""

    def __init__(self, runner: asyncio.Runner, clock: Callable[[], float], limit: float) -> None:
        self.runner = runner
        self.clock = clock
        self.limit = limit
        self.slowest = 0.0

    def choose(self, bot: AnyBot, observation: Observation) -> tuple[object, float]:
        """Return what ``choose`` returned and the seconds it took (exceptions propagate)."""
        set_current_clock(Clock(round(self.limit * 1000), 0))
        began = self.clock()
        try:
            if isinstance(bot, AsyncBot):
                answer: object = self._await(bot.choose(observation))
            else:
                answer = bot.choose(observation)
        finally:
            seconds = self.clock() - began
            self.slowest = max(self.slowest, seconds)
            set_current_clock(None)
        return answer, seconds

    def hook(self, bot: AnyBot, hook: str, info: object) -> None:
        result = getattr(bot, hook)(info)
        if isinstance(bot, AsyncBot):
            self._await(result)

    def _await(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        return self.runner.run(coroutine)


def _resumed(match_id: str, game: Game, limit: float, state: GameState) -> MatchStartInfo:
    """A position presented as a match that resumes there, as a reconnected bot sees it."""
    return match_start_info(
        match_id,
        game,
        state.current_seat,
        [f"seat{s}" for s in range(game.num_players)],
        fault_policy=FaultPolicy.SUBSTITUTE,
        max_strikes=3,
        time_limits=TimeLimits(round(limit * 1000), 0, 0),
        snapshot=state.observe(state.current_seat),
    )


def _check_position(bot: AnyBot, game: Game, position: Position, caller: _Caller) -> list[Failure]:
    """Present one position as a resumed match, ask for an action, judge the answer."""
    state = position.state
    seat = state.current_seat
    observation = state.observe(seat)
    match_id = f"check/{position.id}"
    where = position.describe()
    legal = tuple(str(a) for a in observation.legal_actions)
    described = game.describe()
    try:
        caller.hook(bot, "on_match_start", _resumed(match_id, game, caller.limit, state))
    except Exception as exc:
        return [Failure(described, where, "hook raised", f"on_match_start raised {shown(exc)}")]
    try:
        answer, seconds = caller.choose(bot, observation)
    except Exception as exc:
        return [Failure(described, where, "raised", f"choose raised {shown(exc)}", legal=legal)]
    failures = _judge(
        answer, seconds, state, limit=caller.limit, game=described, where=where, legal=legal
    )
    try:
        stopped = MatchResult(
            Termination.ABORTED, None, state.scores, detail="compliance check: one position only"
        )
        caller.hook(bot, "on_match_end", match_end_info(match_id, game, seat, stopped))
    except Exception as exc:
        failures.append(
            Failure(described, where, "hook raised", f"on_match_end raised {shown(exc)}")
        )
    return failures


def _judge(
    answer: object,
    seconds: float,
    state: GameState | None,
    *,
    limit: float,
    game: str,
    where: str,
    legal: tuple[str, ...],
) -> list[Failure]:
    failures: list[Failure] = []
    if not isinstance(answer, Action):
        hint = " (parse text with sdk.rules.parse_action)" if isinstance(answer, str) else ""
        failures.append(
            Failure(
                game,
                where,
                "not an action",
                f"choose returned a {type(answer).__name__}, not an Action{hint}",
                repr(answer),
                legal,
                seconds,
            )
        )
    elif state is not None:
        action: Action = answer
        try:
            state.apply(action)
        except IllegalActionError as exc:
            failures.append(
                Failure(game, where, "illegal", exc.rule, f"'{action}'", legal, seconds)
            )
    if seconds > limit:
        failures.append(
            Failure(
                game,
                where,
                "too slow",
                f"answered in {seconds:.3f} s, over the {limit:g} s limit",
                str(answer) if isinstance(answer, Action) else repr(answer),
                legal,
                seconds,
            )
        )
    return failures


class _FailedError(Exception):
    """Ends a local game early with the failure that stopped it."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


@dataclass(slots=True)
class _Progress:
    """Where a local game is now, shared by its seats: the state and how to name the place."""

    state: GameState
    where: str


class _Judged(Bot):
    """A bot under test in one seat of :func:`play_game`, which calls its hooks as the referee's
    client would; this adapter awaits an async bot, and judges every answer as
    :func:`check_bot` judges a position, stopping the game at the first fault, so a failure in a
    whole game reads like a failure in a position.
    """

    def __init__(self, inner: AnyBot, caller: _Caller, now: _Progress) -> None:
        self.inner = inner
        self.caller = caller
        self.name = str(getattr(inner, "name", "bot"))
        self.now = now
        self.slow: Failure | None = None

    def choose(self, observation: Observation) -> Action:
        legal = tuple(str(a) for a in observation.legal_actions)
        game = self.now.state.game.describe()
        try:
            answer, seconds = self.caller.choose(self.inner, observation)
        except Exception as exc:
            message = f"choose raised {shown(exc)}"
            raise _FailedError(
                Failure(game, self.now.where, "raised", message, legal=legal)
            ) from exc
        judged = _judge(
            answer,
            seconds,
            self.now.state,
            limit=self.caller.limit,
            game=game,
            where=self.now.where,
            legal=legal,
        )
        for failure in judged:
            if failure.problem != "too slow":
                raise _FailedError(failure)
            self.slow = self.slow or failure  # a slow answer is reported once, play goes on
        assert isinstance(answer, Action)  # anything else failed above
        return answer

    def on_match_start(self, info: MatchStartInfo) -> None:
        self.hook("on_match_start", info)

    def on_event(self, event: MatchEvent) -> None:
        self.hook("on_event", event)

    def on_hand_end(self, hand: HandEndInfo) -> None:
        self.hook("on_hand_end", hand)

    def on_fault(self, fault: FaultInfo) -> None:
        self.hook("on_fault", fault)

    def on_match_end(self, result: MatchEndInfo) -> None:
        self.hook("on_match_end", result)

    def hook(self, hook: str, info: object) -> None:
        try:
            self.caller.hook(self.inner, hook, info)
        except Exception as exc:
            message = f"{hook} raised {shown(exc)}"
            game = self.now.state.game.describe()
            raise _FailedError(Failure(game, self.now.where, "hook raised", message)) from exc


def _check_game(
    source: Callable[[], AnyBot], game: Game, seed: int, caller: _Caller
) -> tuple[list[Failure], bool]:
    """Play one whole local game with the bot in every seat; report what went wrong.

    Returns the failures and whether the game was played to its end.
    """
    game_seed = random.Random(f"domino-arena/check-game/{label(game)}/{seed}").getrandbits(32)
    start = first_seat(game_seed, game.num_players)
    place = f"local game (game seed {game_seed}, first seat {start})"
    now = _Progress(game.new_game(game_seed, first_seat=start), f"{place}, step 0")
    seats = [_Judged(source(), caller, now) for _ in range(game.num_players)]

    def on_step(step: Step) -> None:
        now.state = step.after
        now.where = f"{place}, step {step.index + 1}"

    failures: list[Failure] = []
    finished = False
    try:
        played = play_game(
            game,
            seats,
            game_seed,
            first_seat=start,
            on_step=on_step,
            names=[f"seat{s}" for s in range(game.num_players)],
            timer=None,
            match_id=f"check/{label(game)}/game",
            max_deals=CHECK_MAX_DEALS,
        )
    except _FailedError as stop:
        failures.append(stop.failure)
    else:
        hands = played.state.hand_results
        stalled = played.result.termination is Termination.ADJUDICATED and all(
            hand.end is HandEnd.VOID for hand in hands
        )
        finished = not stalled
        if stalled:
            message = (
                f"no deal was played in {len(hands)} deals: every one was void (every seat "
                f"passed); the referee would adjudicate such a game at its cap on deals "
                f"({played.result.detail})"
            )
            failures.append(Failure(game.describe(), now.where, "unfinished", message))
    slow = [seat.slow for seat in seats if seat.slow is not None]
    return slow[:1] + failures, finished


# -- command line ---------------------------------------------------------------------------------


def load_bot(spec: str) -> BotOrFactory:
    """Return the bot named by ``spec``: ``module:NAME`` (``module`` may be a path to a ``.py``
    file; see :func:`.loading.load_python_bot`) or ``exec:COMMAND``, a program of any language
    speaking the stdio protocol (docs/writing-a-bot.md), split as a shell would split it.

    ``exec:`` gives a factory of :class:`~.stdio.ExecBot` seats that share one process, so the
    check's positions and each seat of its local games cost one process in all.

    Raises:
        ValueError: the spec is not ``module:NAME`` or ``exec:COMMAND``, or NAME makes no bot.
        ImportError: the module cannot be imported.
        AttributeError: the module has no NAME.
    """
    if spec.startswith(EXEC_PREFIX):
        from .stdio.exec_bot import exec_factory  # noqa: PLC0415  # only for a program

        return exec_factory(spec.removeprefix(EXEC_PREFIX))
    return load_python_bot(spec)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the check from the command line; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m domino_arena.sdk.testing",
        description="Check that a bot answers every game legally and in time, locally.",
    )
    parser.add_argument(
        "bot",
        metavar="MODULE:NAME",
        help="e.g. mybot:MyBot or ./mybot.py:MyBot, or exec:COMMAND for a program in any "
        "language speaking the stdio protocol, e.g. exec:./mybot (docs/writing-a-bot.md)",
    )
    parser.add_argument("--games", metavar="G1,G2", help="games to check (default: all)")
    parser.add_argument(
        "--positions", type=int, default=DEFAULT_POSITIONS, metavar="N", help="per configuration"
    )
    parser.add_argument("--time-limit", type=float, default=1.0, metavar="S", help="seconds")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="other positions")
    parser.add_argument("--no-games", action="store_true", help="skip the full local games")
    args = parser.parse_args(argv)
    games = [g.strip() for g in args.games.split(",")] if args.games else None
    try:
        bot = load_bot(args.bot)
        report = check_bot(
            bot,
            games=games,
            positions=args.positions,
            time_limit=args.time_limit,
            seed=args.seed,
            full_games=not args.no_games,
            progress=lambda line: print(line, file=sys.stderr, flush=True),
        )
    except (ImportError, AttributeError, ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report)
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
