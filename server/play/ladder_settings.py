"""A ladder's settings as stored, and back: what a cluster's host needs to take a ladder over.

A cluster's match host stores the settings of every ladder it starts
(``server/store/ladders.py``); when it dies, the host that claims the pool's expired lease
builds the same ladder from them (:meth:`~domino_arena.server.play.arena.Arena.resume_ladders`).
The stored seed is the one the ladder ran with (drawn at its start if none was given), so the
new owner pairs and deals as the ladder did from its start; its match ids differ (a session of
its own), so no game of the dead host's is stored or rated again (docs/cluster.md: ladders).
"""

from __future__ import annotations

from dataclasses import dataclass

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import Game, make_game
from domino_arena.server.play.ladder_runner import LadderRunner
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.ladders import StoredLadder
from domino_arena.server.store.tables import now


@dataclass(frozen=True, slots=True)
class LadderSettings:
    """What ``StartLadder`` sets (the arguments of ``Arena.start_ladder``)."""

    game: Game
    time_control: TimeControl
    fault_policy: FaultPolicy
    max_strikes: int
    max_deals: int
    concurrency: int
    seed: int | None
    """None: drawn when the ladder starts."""
    course: str


def stored(runner: LadderRunner) -> StoredLadder:
    """The settings of ``runner`` as stored."""
    return StoredLadder(
        course=runner.course,
        game=runner.game.name,
        options=runner.game.options(),
        time_control_ms=runner.time_control.to_ms(),
        fault_policy=runner.fault_policy.value,
        max_strikes=runner.max_strikes,
        max_deals=runner.max_deals,
        concurrency=runner.concurrency,
        seed=runner.seed,
        started=now(),
    )


def settings_of(ladder: StoredLadder) -> LadderSettings:
    """The settings a stored ladder is run again with.

    Raises:
        ValueError: a stored setting is no longer valid (an unknown game or option).
    """
    move, bank, grace = ladder.time_control_ms
    return LadderSettings(
        game=make_game(ladder.game, **ladder.options),
        time_control=TimeControl(move=move / 1000, bank=bank / 1000, grace=grace / 1000),
        fault_policy=FaultPolicy(ladder.fault_policy),
        max_strikes=ladder.max_strikes,
        max_deals=ladder.max_deals,
        concurrency=ladder.concurrency,
        seed=ladder.seed,
        course=ladder.course,
    )
