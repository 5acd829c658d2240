"""Play bots against each other in-process, with no network (tests, classrooms, the CLI).

:func:`play_game` runs one whole game: it takes the ``deal`` chance steps itself, asks the bot
of the seat to move for an action on that seat's observation, and returns the final state
together with the match record. There is no clock and no fault policy here: a bot that answers
with an illegal action stops the game with a :class:`BotActionError` that says what it did.

>>> from domino_arena.sdk.rules import make_game
>>> class FirstLegal(Bot):
...     def choose(self, observation):
...         return observation.legal_actions[0]
>>> result = play_game(make_game("passing"), [FirstLegal(), FirstLegal()], seed=7)
>>> result.outcome.result()
'side 1 (seat 1) wins 30-117'
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .bot import Bot
from .records import MatchRecord, record_from_state
from .rules import (
    DEAL,
    Action,
    Bid,
    Deal,
    Discard,
    Draw,
    Game,
    GameState,
    IllegalActionError,
    Outcome,
    Pass,
    Play,
    Trump,
)
from .rules.dealing import first_seat as random_first_seat

_ACTION_TYPES = (Play, Draw, Pass, Bid, Discard, Trump, Deal)

DEFAULT_MAX_DEALS: Final = 1000
"""Deals :func:`play_game` plays before it gives up on a game (far beyond any normal game)."""


class BotActionError(ValueError):
    """A bot answered with something that is not a legal action in its position.

    Attributes:
        bot: the bot's name.
        seat: the seat it plays.
        action: what it returned (its text, or its ``repr`` if it is not an action).
        legal: the text of every legal action it could have chosen.
    """

    def __init__(
        self, bot: str, seat: int, *, step: int, action: str, reason: str, legal: tuple[str, ...]
    ) -> None:
        self.bot = bot
        self.seat = seat
        self.action = action
        self.legal = legal
        super().__init__(
            f"bot '{bot}' in seat {seat} chose {action} at step {step}: {reason}; "
            f"legal actions: {', '.join(legal)}"
        )


class GameTooLongError(RuntimeError):
    """A game reached ``max_deals`` deals without a winner and was stopped.

    Some pairings never finish: three uniformly random Moon players keep failing their
    contracts, so every score drifts below zero and nobody reaches 21.

    Attributes:
        state: the position where play stopped (a ``deal`` step was due).
    """

    def __init__(self, state: GameState, max_deals: int) -> None:
        self.state = state
        scores = "/".join(str(s) for s in state.scores)
        super().__init__(
            f"{state.game.describe()}: no winner after {max_deals} deals "
            f"(scores {scores}); play stopped at the limit of {max_deals} deals"
        )


@dataclass(frozen=True, slots=True)
class Step:
    """One step as it happened, passed to ``on_step`` after it was applied."""

    index: int
    seat: int
    """The acting seat, ``CHANCE`` (-1) for the deal."""
    action: Action
    think_ms: float | None
    before: GameState
    after: GameState


@dataclass(frozen=True, slots=True)
class LocalResult:
    """A finished local game: the final state, its record and the bots' think times."""

    state: GameState
    record: MatchRecord
    think_ms: tuple[float | None, ...]
    """One entry per step of ``state.history``; None for deals and untimed play."""

    @property
    def outcome(self) -> Outcome:
        outcome = self.state.outcome()
        assert outcome is not None, "a local game always plays to the end"
        return outcome


def seat_seed(seed: int, seat: int) -> int:
    """Return the seed of the bot in ``seat`` of a game played from ``seed``.

    Bots are seeded from the game and their seat, so a game with seeded bots can be re-run
    exactly from its seed alone.
    """
    return random.Random(f"domino-arena/bot/{seed}/{seat}").getrandbits(32)


def play_game(
    game: Game,
    bots: Sequence[Bot],
    seed: int,
    first_seat: int | None = None,
    on_step: Callable[[Step], None] | None = None,
    *,
    names: Sequence[str] | None = None,
    timer: Callable[[], float] | None = time.perf_counter,
    max_deals: int | None = DEFAULT_MAX_DEALS,
    time_control: dict[str, Any] | None = None,
    created: str | None = None,
) -> LocalResult:
    """Play one whole game of ``game`` between ``bots`` (one per seat, seat 0 first).

    Args:
        seed: fixes every deal and, when ``first_seat`` is None, the first starter.
        first_seat: the first starter (first bidder in Moon); the record holds the seat used.
        on_step: called after every step, deals included, e.g. to print a transcript.
        names: the players' names in the record; each bot's ``name`` by default.
        timer: the clock that times each ``choose`` call (seconds); None records no think times,
            which makes the record depend on the seed and the bots only.
        max_deals: stop with :class:`GameTooLongError` rather than deal more hands than this
            (void deals count); None plays on for ever.
        time_control, created: copied into the record's header.

    Raises:
        ValueError: the number of bots or names is not the number of seats.
        BotActionError: a bot chose an action that is not legal.
        GameTooLongError: ``max_deals`` deals were played without a winner.
    """
    players = game.num_players
    if len(bots) != players:
        raise ValueError(f"{game.describe()} needs {players} bots, got {len(bots)}")
    seat_names = [bot.name for bot in bots] if names is None else list(names)
    if len(seat_names) != players:
        raise ValueError(f"expected {players} names, one per seat, got {len(seat_names)}")
    start = random_first_seat(seed, players) if first_seat is None else first_seat
    state = game.new_game(seed, first_seat=start)
    for seat, bot in enumerate(bots):
        bot.on_game_start(game, seat)
    think: list[float | None] = []
    while not state.is_terminal():
        seat = state.current_seat
        ms: float | None = None
        if state.is_chance():
            if max_deals is not None and state.deal_number >= max_deals:
                raise GameTooLongError(state, max_deals)
            action: Action = DEAL
        else:
            bot = bots[seat]
            observation = state.observe(seat)
            began = timer() if timer is not None else 0.0
            action = bot.choose(observation)
            if timer is not None:
                ms = (timer() - began) * 1000.0
        after = _apply(state, action, seat, seat_names[seat] if seat >= 0 else "", len(think))
        think.append(ms)
        if on_step is not None:
            on_step(Step(len(think) - 1, seat, action, ms, state, after))
        state = after
    outcome = state.outcome()
    assert outcome is not None
    for seat, bot in enumerate(bots):
        bot.on_game_end(outcome, seat)
    record = record_from_state(
        state,
        seat_names,
        seed,
        start,
        think_ms=think if timer is not None else None,
        time_control=time_control,
        created=created,
    )
    return LocalResult(state, record, tuple(think))


def _apply(state: GameState, action: object, seat: int, name: str, step: int) -> GameState:
    """Apply a bot's answer, turning any refusal into a :class:`BotActionError`."""
    legal = tuple(str(a) for a in state.legal_actions())
    if not isinstance(action, _ACTION_TYPES):
        raise BotActionError(
            name,
            seat,
            step=step,
            action=repr(action),
            reason="that is not an action (sdk.rules.actions)",
            legal=legal,
        )
    try:
        return state.apply(action)
    except IllegalActionError as exc:
        raise BotActionError(
            name, seat, step=step, action=f"'{action}'", reason=exc.rule, legal=legal
        ) from None
