"""Play bots against each other in-process, with no network (tests, classrooms, the CLI).

:func:`play_game` runs one whole game. It is the synchronous driver of the match core
(:class:`~.match.core.MatchCore`), the same core the referee drives, so a game played here and
the same game through the referee leave the same record, and a bot gets the same hooks as the
remote client gives it (``on_match_start``, ``on_event``, ``on_hand_end``, ``on_fault``,
``on_match_end``; by default the first and last call ``on_game_start`` / ``on_game_end``). A
hook or ``choose`` that raises stops the game with its exception. Local play is untimed: a
``timer`` measures think times for the record, but no answer is ever late.

With no fault policy, a bot that answers with something illegal stops the game with a
:class:`BotActionError` that says what it did. With one, local play substitutes and strikes as
the referee would (a bot whose ``choose`` raises is then a ``bot_error`` fault naming the
exception, as remotely).

>>> from domino_arena.sdk.rules import make_game
>>> class FirstLegal(Bot):
...     def choose(self, observation):
...         return observation.legal_actions[0]
>>> result = play_game(make_game("passing"), [FirstLegal(), FirstLegal()], seed=7)
>>> result.outcome.result()
'side 1 (seat 1) wins 30-117'
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .bot import (
    Bot,
    FaultInfo,
    HandEndInfo,
    MatchEndInfo,
    MatchEvent,
    MatchStartInfo,
    TimeLimits,
)
from .match import seeds
from .match.bot_errors import BotError
from .match.core import MatchCore
from .match.faults import Fault
from .match.notices import FaultNotice, HandEndNotice, Item, Step, StepNotice
from .match.records import MatchRecord
from .match.results import FaultPolicy, MatchResult
from .rules import Game, GameState, Observation, Outcome

DEFAULT_MAX_DEALS: Final = 1000
"""Deals a match plays before it gives up on a game (far beyond any normal game)."""

LOCAL_MATCH_ID: Final = "local"
"""The match id the hooks see in local play when :func:`play_game` is given none."""

UNTIMED: Final = TimeLimits(0, 0, 0)
"""The time limits local play reports to ``on_match_start``: none."""


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


@dataclass(frozen=True, slots=True)
class LocalResult:
    """A finished local game: the final state, its record, the think times and the result."""

    state: GameState
    record: MatchRecord
    think_ms: tuple[float | None, ...]
    """One entry per step of ``state.history``; None for deals and untimed play."""
    result: MatchResult
    """How the game ended: by the rules, at the cap on deals (adjudicated), or (with a fault
    policy) by a forfeit."""

    @property
    def outcome(self) -> Outcome:
        """The rules' outcome; only a game played to its end has one (see ``result``)."""
        outcome = self.state.outcome()
        assert outcome is not None, f"this game ended {self.result.termination}, not by the rules"
        return outcome


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
    fault_policy: FaultPolicy | None = None,
    max_strikes: int = 3,
    match_id: str | None = None,
) -> LocalResult:
    """Play one whole game of ``game`` between ``bots`` (one per seat, seat 0 first).

    Args:
        seed: fixes every deal, the first starter when ``first_seat`` is None, and any
            substituted move.
        first_seat: the first starter (first bidder in Moon); the record holds the seat used.
        on_step: called after every step, deals included, e.g. to print a transcript.
        names: the players' names in the record; each bot's ``name`` by default.
        timer: the clock that times each ``choose`` call (seconds); None records no think times,
            which makes the record depend on the seed and the bots only.
        max_deals: the cap on deals (void deals count), as the referee's: a game nobody has
            won after this many ends ``adjudicated``, ranked by its scores (``result``); None
            plays on for ever.
        time_control, created: copied into the record's header.
        fault_policy, max_strikes: play a bad answer as the referee would (a substituted move
            and a strike, or a forfeit) instead of raising :class:`BotActionError`; the record
            then names the policy.
        match_id: written into the record and shown to the hooks (:data:`LOCAL_MATCH_ID`
            when None; the record then has none).

    Raises:
        ValueError: the number of bots or names is not the number of seats.
        BotActionError: with no ``fault_policy``, a bot chose something that is not legal.
    """
    players = game.num_players
    if len(bots) != players:
        raise ValueError(f"{game.describe()} needs {players} bots, got {len(bots)}")
    seat_names = [bot.name for bot in bots] if names is None else list(names)
    core = MatchCore(
        game,
        seat_names,
        seed=seed,
        first_seat=first_seat,
        fault_policy=fault_policy,
        max_strikes=max_strikes,
        max_deals=max_deals,
        match_id=match_id,
    )
    hook_id = match_id or LOCAL_MATCH_ID
    for seat, bot in enumerate(bots):
        bot.on_match_start(
            match_start_info(
                hook_id,
                game,
                seat,
                core.names,
                fault_policy=fault_policy or FaultPolicy.FORFEIT,
                max_strikes=max_strikes,
                bot_seed=seeds.bot_seed(seed, seat),
            )
        )

    def deliver(items: list[Item]) -> None:
        for item in items:
            if isinstance(item, Step):
                if on_step is not None:
                    on_step(item)
            else:
                _notify(bots[item.seat], hook_id, item.notice)

    while (decision := core.next_decision()) is not None:
        deliver(core.take())
        request = core.request()
        seat = decision.seat
        began = timer() if timer is not None else 0.0
        if fault_policy is None:
            answer: object = bots[seat].choose(decision.observation)
            fault = core.reply(request.turn, answer, _since(timer, began))
            if fault is not None:
                legal = tuple(str(a) for a in decision.observation.legal_actions)
                raise _bot_action_error(fault, core.names[seat], answer, legal)
        else:
            try:
                answer = bots[seat].choose(decision.observation)
            except Exception as exc:  # a crashing bot is its own fault here, as remotely
                core.bot_error(request.turn, BotError.of(exc), _since(timer, began))
            else:
                core.reply(request.turn, answer, _since(timer, began))
        deliver(core.take())
    deliver(core.take())
    result = core.result
    assert result is not None
    for seat, bot in enumerate(bots):
        bot.on_match_end(match_end_info(hook_id, game, seat, result))
    record = core.record(time_control=time_control, created=created)
    return LocalResult(core.state, record, tuple(step.think_ms for step in record.steps), result)


def _since(timer: Callable[[], float] | None, began: float) -> float | None:
    return None if timer is None else timer() - began


def _bot_action_error(
    fault: Fault, name: str, answer: object, legal: tuple[str, ...]
) -> BotActionError:
    """Say what a bot did wrong in strict local play, in the words of the rules."""
    if fault.rule:
        action, reason = f"'{answer}'", fault.rule
    else:
        action, reason = repr(answer), "that is not an action (sdk.rules.actions)"
    return BotActionError(
        name, fault.seat, step=fault.step, action=action, reason=reason, legal=legal
    )


def _notify(bot: Bot, match_id: str, notice: StepNotice | HandEndNotice | FaultNotice) -> None:
    """Pass one notice of the core to the bot's hook, as the remote client would."""
    if isinstance(notice, StepNotice):
        bot.on_event(MatchEvent(match_id, notice.step, notice.scores, notice.deal))
    elif isinstance(notice, HandEndNotice):
        bot.on_hand_end(HandEndInfo(match_id, notice.result, notice.scores))
    else:
        bot.on_fault(fault_info(match_id, notice))


# -- the hooks' values, built as the remote client builds them --------------------------------


def match_start_info(
    match_id: str,
    game: Game,
    seat: int,
    players: Sequence[str],
    *,
    fault_policy: FaultPolicy,
    max_strikes: int,
    time_limits: TimeLimits = UNTIMED,
    snapshot: Observation | None = None,
    bot_seed: int | None = None,
) -> MatchStartInfo:
    """The ``on_match_start`` value of ``seat`` (``snapshot``: what it sees where it resumes)."""
    side = game.sides[game.side_of(seat)]
    return MatchStartInfo(
        match_id=match_id,
        game=game,
        seat=seat,
        partners=tuple(s for s in side if s != seat),
        players=tuple(players),
        time_limits=time_limits,
        fault_policy=fault_policy,
        max_strikes=max_strikes,
        resumed=snapshot is not None,
        snapshot=snapshot,
        bot_seed=bot_seed,
    )


def fault_info(match_id: str, notice: FaultNotice) -> FaultInfo:
    """The ``on_fault`` value of a fault notice."""
    return FaultInfo(
        match_id, notice.turn, notice.kind, notice.reason, notice.strikes, notice.forfeited
    )


def match_end_info(match_id: str, game: Game, seat: int, result: MatchResult) -> MatchEndInfo:
    """The ``on_match_end`` value of ``seat``; a forfeit has an outcome too, as remotely."""
    outcome = result.outcome
    if outcome is None and result.winner is not None:
        outcome = Outcome(result.winner, result.scores, game.sides, result.detail)
    return MatchEndInfo(
        match_id=match_id,
        seat=seat,
        termination=result.termination,
        winner=result.winner,
        scores=result.scores,
        side_of_seat=tuple(game.side_of(s) for s in range(game.num_players)),
        faulted_seat=result.faulted_seat,
        fault=result.fault,
        detail=result.detail,
        outcome=outcome,
    )
