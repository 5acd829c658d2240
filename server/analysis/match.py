"""A whole match analysed: replay the record, evaluate each analysed seat's real decisions.

The record is replayed through the engine; at every step whose mover is an analysed seat and
that offers more than one legal action, the mover's observation (what its bot was sent) is
evaluated by :func:`.evaluate.evaluate`. Forced moves are skipped and not counted, and so are
the steps the referee played for a faulting seat (``substituted``): the bot did not choose
them. Every
random draw comes from a generator seeded by the text ``(seed, match_id, step)``, so the same
record, id and seed always give the same analysis, in any process (docs/analysis.md).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

from domino_arena.bots.search.sampling import determinizer
from domino_arena.sdk.match.records import MatchRecord
from domino_arena.sdk.rules import GameState, Phase, RulesError, make_game

from .allocate import allocate
from .evaluate import Budget, Evaluation, SamplerFactory, Sampling
from .grading import severity, summarize
from .par import DEFAULT_NODES, hand_pars
from .report import ActionValue, Decision, MatchAnalysis
from .scale import Scale, scale_of

PHASES = {
    Phase.BIDDING: "bid",
    Phase.DISCARD: "discard",
    Phase.TRUMP: "trump",
    Phase.PLAYING: "play",
}
"""The name of each phase a decision can be taken in, as :attr:`.Decision.phase` gives it."""

Progress = Callable[[int, int], None]
"""``progress(done, total)``: called after each evaluated decision."""


def analyse_match(
    record: MatchRecord,
    match_id: str,
    *,
    seats: Sequence[int] | None = None,
    precision: float = 0.05,
    game_precision: float | None = None,
    seed: int = 0,
    max_samples: int = 2000,
    min_samples: int = 16,
    pars: bool = False,
    par_nodes: int = DEFAULT_NODES,
    sampler: SamplerFactory = determinizer,
    progress: Progress | None = None,
) -> MatchAnalysis:
    """Evaluate every real decision of ``seats`` (all seats by default) in ``record``.

    Args:
        precision: target standard error, in points, of each decision's verdict; sampling
            stops there or at ``max_samples`` (docs/analysis.md: precision).
        game_precision: when given, the target standard error, in points, of each seat's
            mean loss per decision: the seat's decisions are sampled together, each batch
            going where it lowers that error most (:func:`.allocate.allocate`), until it is
            reached or every decision is at ``precision`` or ``max_samples``.
        seed: with ``match_id`` and the step, seeds every sample.
        pars: also work out each hand's double-dummy par (:mod:`.par`), within ``par_nodes``
            search nodes per hand.
        sampler: builds a decision's deal sampler from the deciding seat's observation (the
            search bot's determinizer); a parameter so a test can plant a leak.
        progress: told ``(done, total)`` after each evaluated decision.

    Raises:
        ValueError: a seat index out of range or repeated, a bad budget, an unknown game, or
            a record whose steps do not replay (the message names the field or step).
    """
    budget = Budget(precision=precision, max_samples=max_samples, min_samples=min_samples)
    if game_precision is not None and not (game_precision > 0 and math.isfinite(game_precision)):
        raise ValueError(
            f"game_precision: expected a positive number of points or None, got {game_precision}"
        )
    start = _start(record)
    players = start.game.num_players
    chosen_seats = _check_seats(seats, players)
    scale = scale_of(record.game)
    states = _replay(record, start)
    todo = [
        i
        for i, state in enumerate(states[:-1])
        if state.current_seat in chosen_seats
        and len(state.legal_actions()) > 1
        and not record.steps[i].substituted
    ]

    def sampling(step: int) -> Sampling:
        state = states[step]
        rng = random.Random(f"domino-arena/analysis/{seed}/{match_id}/{step}")
        return Sampling(state.observe(state.current_seat), record.steps[step].action, rng, sampler)

    evaluations: dict[int, Evaluation] = {}
    if game_precision is None:
        for step in todo:
            evaluations[step] = sampling(step).run(budget)
            if progress is not None:
                progress(len(evaluations), len(todo))
    else:
        for seat in chosen_seats:
            steps = [step for step in todo if states[step].current_seat == seat]
            samplings = [sampling(step) for step in steps]
            allocate(samplings, budget, game_precision)
            for step, done in zip(steps, samplings, strict=True):
                evaluations[step] = done.evaluation()
            if progress is not None:
                progress(len(evaluations), len(todo))
    decisions = [_decision(states[step], record, step, evaluations[step], scale) for step in todo]
    return MatchAnalysis(
        match_id=match_id,
        game=record.game,
        seats=chosen_seats,
        precision=precision,
        game_precision=game_precision,
        seed=seed,
        decisions=tuple(decisions),
        summaries=tuple(summarize(s, record.seats[s], decisions, scale) for s in chosen_seats),
        pars=hand_pars(states, par_nodes) if pars else (),
    )


def _decision(
    state: GameState, record: MatchRecord, step: int, ev: Evaluation, scale: Scale
) -> Decision:
    return Decision(
        step=step,
        seat=state.current_seat,
        hand=state.deal_number,
        phase=PHASES[state.phase],
        chosen=str(record.steps[step].action),
        best=str(ev.actions[ev.best]),
        loss_points=ev.loss_points,
        loss_win=ev.loss_win,
        stderr=ev.stderr,
        samples=ev.samples,
        severity=severity(ev.loss_points, ev.loss_win, ev.stderr, scale),
        values=tuple(
            ActionValue(str(a), p, w)
            for a, p, w in zip(ev.actions, ev.points, ev.wins, strict=True)
        ),
    )


def _start(record: MatchRecord) -> GameState:
    try:
        game = make_game(record.game, **record.options)
        return game.new_game(record.seed, first_seat=record.first_seat)
    except RulesError as exc:
        raise ValueError(f"record: the header does not make a game ({exc})") from exc


def _check_seats(seats: Sequence[int] | None, players: int) -> tuple[int, ...]:
    if seats is None:
        return tuple(range(players))
    chosen = tuple(seats)
    for seat in chosen:
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < players:
            raise ValueError(f"seats: expected seat numbers 0 to {players - 1}, got {seat!r}")
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"seats: each seat at most once, got {list(chosen)}")
    if not chosen:
        raise ValueError("seats: expected at least one seat, got none")
    return tuple(sorted(chosen))


def _replay(record: MatchRecord, start: GameState) -> list[GameState]:
    """Every state of the record: ``states[i]`` is the position after ``i`` steps."""
    states = [start]
    state = start
    for index, step in enumerate(record.steps):
        if step.seat != state.current_seat:
            raise ValueError(
                f"record: step {index} has seat {step.seat} acting, but seat "
                f"{state.current_seat} is to move"
            )
        try:
            state = state.apply(step.action)
        except RulesError as exc:
            raise ValueError(
                f"record: step {index} ('{step.action}') does not replay: {exc}"
            ) from exc
        states.append(state)
    return states
