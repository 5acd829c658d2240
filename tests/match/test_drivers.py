"""Local play and the referee drive the same match core: same game, same record, same hooks.

The same bots and seed are played once by ``sdk.local.play_game`` and once by the referee's
``play_match`` (each bot in a :class:`~tests.fakes.seats.BotSeat`, which calls the hooks as the
remote client does), with a fault policy so that substitutes and strikes are compared too.
"""

from __future__ import annotations

import dataclasses
import io
from typing import Final

import pytest
import trio
from trio.testing import MockClock

from domino_arena.bots.random_bot import RandomBot
from domino_arena.sdk.bot import (
    Bot,
    FaultInfo,
    HandEndInfo,
    MatchEndInfo,
    MatchEvent,
    MatchStartInfo,
)
from domino_arena.sdk.local import UNTIMED, play_game
from domino_arena.sdk.match.records import MatchRecord, write_record
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import DOUBLE_SIX, Action, Game, Observation, Play, make_game
from domino_arena.server.play.referee import play_match
from domino_arena.server.play.timecontrol import TimeControl

from ..fakes.seats import BotSeat

CLOCK = TimeControl(move=1.0, bank=10.0, grace=0.05)
HEADER = {"move_ms": 1000, "bank_ms": 10000, "grace_ms": 50}


class Recorder(Bot):
    """A seeded random player that notes every hook call; illegal at the requests in ``bad``."""

    def __init__(self, name: str, seed: int, bad: frozenset[int] = frozenset()) -> None:
        self.name = name
        self.player = RandomBot(seed)
        self.bad = bad
        self.asked = 0
        self.calls: list[tuple[str, object]] = []

    def choose(self, observation: Observation) -> Action:
        self.asked += 1
        self.calls.append(("choose", observation))
        if self.asked in self.bad:
            return Play(next(t for t in DOUBLE_SIX if t not in observation.hand))
        return self.player.choose(observation)

    def on_match_start(self, info: MatchStartInfo) -> None:
        # The referee's seats report its clock, local play is untimed: the rest must agree.
        self.calls.append(("start", dataclasses.replace(info, time_limits=UNTIMED)))

    def on_event(self, event: MatchEvent) -> None:
        self.calls.append(("event", event))

    def on_hand_end(self, hand: HandEndInfo) -> None:
        self.calls.append(("hand", hand))

    def on_fault(self, fault: FaultInfo) -> None:
        self.calls.append(("fault", fault))

    def on_match_end(self, result: MatchEndInfo) -> None:
        self.calls.append(("end", result))


def players(game: Game, bad: frozenset[int]) -> list[Recorder]:
    return [
        Recorder(f"p{seat}", seed=seat, bad=bad if seat == 0 else frozenset())
        for seat in range(game.num_players)
    ]


def text(record: MatchRecord) -> str:
    out = io.StringIO()
    write_record(record, out)
    return out.getvalue()


MAX_DEALS: Final = 3
"""Both drivers cap deals alike: random Moon bidders are adjudicated after 3 deals."""

CASES = [
    ("passing", {"players": 2}, FaultPolicy.SUBSTITUTE, frozenset({2, 5})),
    ("passing", {"players": 3}, FaultPolicy.SUBSTITUTE, frozenset({1, 2, 3})),
    ("moon", {}, FaultPolicy.SUBSTITUTE, frozenset({3})),
    ("straight", {"players": 4, "partnerships": True}, FaultPolicy.FORFEIT, frozenset({4})),
    ("doubles", {"players": 2}, FaultPolicy.FORFEIT, frozenset()),
]


@pytest.mark.parametrize(("name", "options", "policy", "bad"), CASES)
def test_local_play_and_the_referee_agree(
    name: str, options: dict[str, object], policy: FaultPolicy, bad: frozenset[int]
) -> None:
    game = make_game(name, **options)
    seed = 11
    local = players(game, bad)
    result = play_game(
        game,
        local,
        seed,
        timer=lambda: 0.0,
        time_control=HEADER,
        fault_policy=policy,
        match_id="same",
        max_deals=MAX_DEALS,
    )
    remote = players(game, bad)

    async def main() -> MatchRecord:
        report = await play_match(
            game,
            [BotSeat(bot) for bot in remote],
            match_id="same",
            seed=seed,
            time_control=CLOCK,
            fault_policy=policy,
            max_deals=MAX_DEALS,
        )
        assert report.result == result.result
        return report.record

    refereed = trio.run(main, clock=MockClock(autojump_threshold=0))
    assert text(result.record) == text(refereed)
    assert result.record.faults or not bad, "the case exercises a fault"
    for here, there in zip(local, remote, strict=True):
        assert [kind for kind, _ in here.calls] == [kind for kind, _ in there.calls]
        assert here.calls == there.calls
