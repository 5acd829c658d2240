"""The compliance check (sdk/testing.py): house bots pass, broken bots fail with precise reports.

Time is measured with an injected fake clock that a slow bot moves forward: nothing sleeps.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any, Final

import pytest

from domino_arena.bots import GreedyBot, RandomBot
from domino_arena.sdk import AsyncBot, Bot, current_clock
from domino_arena.sdk.bot import HandEndInfo, MatchEndInfo, MatchEvent, MatchStartInfo
from domino_arena.sdk.positions import _kind, label, sample_positions
from domino_arena.sdk.rules import (
    CHANCE,
    GAMES,
    PASS,
    Action,
    Bid,
    Discard,
    Observation,
    configurations,
    make_game,
)
from domino_arena.sdk.testing import ComplianceReport, Failure, check_bot, load_bot, main
from tests.fakes.bots import FirstLegal
from tests.fakes.clocks import FakeClock

ROOT: Final = Path(__file__).resolve().parents[2]
CONFIGURATIONS: Final = len(list(configurations()))


# -- house bots pass ------------------------------------------------------------------------------


def test_the_random_bot_passes_every_configuration() -> None:
    report = check_bot(lambda: RandomBot(1), positions=4)
    assert report.passed, str(report)
    assert report.failures == ()
    assert report.configurations == tuple(g.describe() for g in configurations())
    assert report.positions == 4 * CONFIGURATIONS
    assert report.games == CONFIGURATIONS
    assert report.bot == "RandomBot 'random'"
    assert str(report).startswith("RandomBot 'random': PASSED")


def test_a_shared_greedy_bot_object_passes_too() -> None:
    report = check_bot(GreedyBot(5), positions=4)
    assert report.passed, str(report)
    assert report.games == CONFIGURATIONS


def test_an_async_bot_is_checked_through_an_event_loop() -> None:
    class Async(AsyncBot):
        def __init__(self) -> None:
            self.started = 0

        async def choose(self, observation: Observation) -> Action:
            return observation.legal_actions[0]

        async def on_match_start(self, info: MatchStartInfo) -> None:
            self.started += 1

    bot = Async()
    report = check_bot(bot, games=["moon", "doubles"], positions=3)
    assert report.passed, str(report)
    assert bot.started == 3 * 4 + (3 + 2 + 3 + 4), "a start per position, one per seat per game"


def test_hooks_are_called_as_the_referee_would() -> None:
    """Positions come as resumed matches; the local game gives starts, events, hands, ends."""
    calls: Counter[str] = Counter()
    seen: list[Any] = []

    class Listener(FirstLegal):
        def on_match_start(self, info: MatchStartInfo) -> None:
            calls["start" + ("-resumed" if info.resumed else "")] += 1
            if info.resumed:
                assert info.snapshot is not None and info.snapshot.seat == info.seat
            assert current_clock() is None

        def choose(self, observation: Observation) -> Action:
            clock = current_clock()
            assert clock is not None and clock.move_ms == 2500
            return super().choose(observation)

        def on_event(self, event: MatchEvent) -> None:
            calls["event"] += 1
            seen.append(event.step)

        def on_hand_end(self, hand: HandEndInfo) -> None:
            calls["hand"] += 1

        def on_match_end(self, result: MatchEndInfo) -> None:
            calls[f"end-{result.termination}"] += 1
            if result.termination == "normal":
                assert result.outcome is not None and result.winner == result.outcome.winner

    report = check_bot(Listener, games=["moon"], positions=5, time_limit=2.5)
    assert report.passed, str(report)
    assert calls["start-resumed"] == calls["end-aborted"] == 5
    assert calls["start"] == 3  # one whole game per seat, each over by the rules or adjudicated
    assert calls["end-normal"] + calls["end-adjudicated"] == 3
    assert calls["hand"] > 0 and calls["hand"] % 3 == 0
    assert calls["event"] % 3 == 0 and calls["event"] > calls["hand"]
    assert any(step.seat == CHANCE for step in seen), "deals are events too"
    hidden = [s for s in seen if isinstance(s.action, Discard) and s.action.tile is None]
    assert hidden, "another seat's Moon discard reaches the hooks hidden"


# -- broken bots fail precisely -------------------------------------------------------------------


def test_an_illegal_answer_names_the_rule_the_position_and_the_legal_set() -> None:
    class BidsThree(FirstLegal):
        def choose(self, observation: Observation) -> Action:
            return Bid(3) if Bid(4) in observation.legal_actions else super().choose(observation)

    report = check_bot(BidsThree, games=["moon"], positions=6)
    assert not report.passed
    assert str(report).startswith("BidsThree 'first': FAILED")
    position = [f for f in report.failures if f.position.startswith("position moon/0 ")]
    (failure,) = position
    assert failure.problem == "illegal"
    assert failure.game == "Three-Player Moon, 3 players, to 21"
    assert failure.message == "docs/rules.md 1.5: a bid is 4, 5, 6, 7 or 21, not 3"
    assert failure.returned == "'bid 3'"
    assert failure.legal == ("bid 4", "bid 5", "bid 6", "bid 7", "bid 21", "pass")
    assert "game seed" in failure.position and "seat" in failure.position
    (game_failure,) = [f for f in report.failures if f.position.startswith("local game")]
    assert game_failure.problem == "illegal" and game_failure.returned == "'bid 3'"
    assert report.games == 0, "the local game was stopped by the illegal bid"
    assert "bid 21" in str(failure) and "returned: 'bid 3'" in str(failure)


def test_a_slow_answer_is_reported_with_its_time_and_play_goes_on() -> None:
    clock = FakeClock()

    class SlowInDoubles(FirstLegal):
        def choose(self, observation: Observation) -> Action:
            if observation.game.name == "doubles" and len(observation.legal_actions) > 1:
                clock.now += 1.75
            else:
                clock.now += 0.25
            return super().choose(observation)

    report = check_bot(
        SlowInDoubles, games=["doubles", "passing"], positions=5, time_limit=1.5, clock=clock
    )
    slow = [f for f in report.failures if f.problem == "too slow"]
    assert slow and all(f.game.startswith("Doubles") for f in slow)
    assert len(slow) == len(report.failures)
    first = slow[0]
    assert first.seconds == pytest.approx(1.75)
    assert first.message == "answered in 1.750 s, over the 1.5 s limit"
    assert first.returned.startswith("play ") and first.legal
    assert report.slowest == pytest.approx(1.75)
    assert report.games == 7, "a slow bot still finishes its games"
    local = [f for f in slow if f.position.startswith("local game")]
    assert len(local) == 3, "one slow report per local game"


def test_a_raising_bot_is_reported_with_its_exception() -> None:
    class Crashes(FirstLegal):
        def choose(self, observation: Observation) -> Action:
            if observation.deal > 1 or observation.history:
                raise KeyError("no strategy for this")
            return super().choose(observation)

    report = check_bot(Crashes, games=["passing"], positions=3)
    assert not report.passed
    assert {f.problem for f in report.failures} == {"raised"}
    failure = report.failures[0]
    assert failure.message == "choose raised KeyError: 'no strategy for this'"
    assert failure.legal and failure.returned == ""
    assert report.games == 0


def test_a_bot_answering_text_is_told_it_is_not_an_action() -> None:
    class Texts(FirstLegal):
        def choose(self, observation: Observation) -> Any:
            return str(observation.legal_actions[0])

    report = check_bot(Texts, games=["straight"], positions=2, full_games=False)
    # The same problem three asks in a row: the check stops there (sdk/compliance.py, Streak).
    assert report.positions == 3 and report.games == 0 and len(report.failures) == 3
    assert len(report.configurations) == 2
    assert report.stopped == (
        "stopped early: 3 asks in a row failed the same way (not an action); fix that first, "
        "then check again"
    )
    assert str(report).endswith("\n  " + report.stopped)
    assert {f.problem for f in report.failures} == {"not an action"}
    failure = report.failures[0]
    assert failure.message == "choose returned a str, not an Action " + (
        "(parse text with sdk.rules.parse_action)"
    )
    assert failure.returned.startswith("'play ")


def test_a_raising_hook_is_reported() -> None:
    class BadHook(FirstLegal):
        def on_match_start(self, info: MatchStartInfo) -> None:
            raise RuntimeError("forgot to initialise")

    report = check_bot(BadHook, games=["passing"], positions=1)
    assert {f.problem for f in report.failures} == {"hook raised"}
    assert report.failures[0].message == (
        "on_match_start raised RuntimeError: forgot to initialise"
    )


def test_a_game_that_never_ends_is_reported_unfinished() -> None:
    class AlwaysPasses(FirstLegal):
        def choose(self, observation: Observation) -> Action:
            if PASS in observation.legal_actions:
                return PASS
            return super().choose(observation)

    report = check_bot(AlwaysPasses, games=["moon"], positions=1)
    (failure,) = report.failures
    assert failure.problem == "unfinished"
    assert failure.message.startswith(
        "no deal was played in 200 deals: every one was void (every seat passed); "
    )
    assert report.games == 0


def test_check_bot_refuses_unknown_games_and_non_bots() -> None:
    with pytest.raises(ValueError, match="unknown game"):
        check_bot(FirstLegal, games=["chess"])
    with pytest.raises(TypeError, match="expected a Bot"):
        check_bot(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="returned 'x', not a Bot"):
        check_bot(lambda: "x")  # type: ignore[arg-type, return-value]


def test_failure_and_report_text() -> None:
    failure = Failure(
        "Passing Game", "position passing-2p/3", "illegal", "docs/rules.md 2.5", "'x'"
    )
    assert str(failure) == "illegal: Passing Game, position passing-2p/3: docs/rules.md 2.5\n" + (
        "    returned: 'x'"
    )
    many = ComplianceReport("B 'b'", ("g",), 1, 0, 1.0, 0.0, (failure,) * 25)
    assert "... and 5 more" in str(many) and not many.passed


# -- positions ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(GAMES))
def test_positions_are_seeded_varied_and_start_with_the_opening(name: str) -> None:
    game = make_game(name)
    first = sample_positions(game, 12, seed=3)
    again = sample_positions(game, 12, seed=3)
    other = sample_positions(game, 12, seed=4)
    assert [p.id for p in first] == [f"{label(game)}/{n}" for n in range(12)]
    assert [p.state.history for p in first] == [p.state.history for p in again]
    assert [p.state.history for p in first] != [p.state.history for p in other]
    assert first[0].step == 0
    for position in first:
        assert not position.state.is_terminal() and not position.state.is_chance()
        assert len(position.state.history) == position.step
    kinds = {_kind(p.state) for p in first}
    assert ("play",) in kinds
    expected = {"moon": {("bid", "pass"), ("discard",), ("trump",)}, "passing": set()}
    assert expected.get(name, set()) <= kinds


# -- the command line -----------------------------------------------------------------------------

MODULE: Final = """
from domino_arena.sdk import Bot
from domino_arena.sdk.rules import Bid


class Good(Bot):
    name = "good"

    def choose(self, observation):
        return observation.legal_actions[0]


class Bad(Good):
    def choose(self, observation):
        return Bid(3)


def make():
    return Good()


INSTANCE = Good()
"""


@pytest.fixture
def bot_file(tmp_path: Path) -> Path:
    path = tmp_path / "checked_bot_module.py"
    path.write_text(textwrap.dedent(MODULE), encoding="utf-8")
    return path


def test_main_passes_a_good_bot_and_fails_a_bad_one(
    bot_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--games", "passing", "--positions", "2"]
    assert main([f"{bot_file}:Good", *args]) == 0
    assert "Good 'good': PASSED" in capsys.readouterr().out
    assert main([f"{bot_file}:Bad", *args, "--no-games"]) == 1
    out, err = capsys.readouterr()
    assert "FAILED (3 failures)" in out and "illegal: Passing Game, 2 players" in out
    assert "stopped early: 3 asks in a row failed the same way (illegal)" in out
    assert err.splitlines() == [  # the progress, one line per configuration checked
        "checking Passing Game, 2 players, to 101 (1/4)",
        "checking Passing Game, 3 players, to 101 (2/4)",
    ]
    assert main([f"{bot_file}:Missing"]) == 2
    assert "has no attribute 'Missing'" in capsys.readouterr().err
    assert main(["no_such_module_here:Bot"]) == 2
    assert main(["nocolon"]) == 2
    assert "expected MODULE:NAME" in capsys.readouterr().err


def test_load_bot_accepts_classes_objects_and_factories(bot_file: Path) -> None:
    factory = load_bot(f"{bot_file}:make")
    assert not isinstance(factory, Bot | AsyncBot) and factory().name == "good"
    cls = load_bot(f"{bot_file}:Good")
    assert isinstance(cls, type) and issubclass(cls, Bot)
    instance = load_bot(f"{bot_file}:INSTANCE")
    assert isinstance(instance, Bot) and instance.name == "good"
    with pytest.raises(ValueError, match="expected a Bot class"):
        load_bot("domino_arena.sdk.testing:DEFAULT_POSITIONS")


def test_python_dash_m_runs_the_check(bot_file: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "domino_arena.sdk.testing",
            f"{bot_file}:Good",
            "--games",
            "doubles",
            "--positions",
            "2",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Good 'good': PASSED" in done.stdout
    assert "3 game configurations, 6 positions, 3 full games" in done.stdout
