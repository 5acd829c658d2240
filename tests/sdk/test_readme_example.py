"""The README's example bot works as printed: it passes the compliance check and plays games.

The example is found by :func:`tests.fakes.readme.example` (README.md, else
docs/writing-a-bot.md). No network: its ``run(...)`` line is checked against the
real signature with a stand-in, and the end-to-end tests run it against a real referee.
"""

from __future__ import annotations

import importlib.util
import inspect
import runpy
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import domino_arena.sdk
from domino_arena.bots import RandomBot
from domino_arena.sdk import Bot, check_bot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.rules import configurations
from domino_arena.sdk.runner import run
from tests.fakes.readme import example


@pytest.fixture
def example_file(tmp_path: Path) -> Path:
    _, name, code = example()
    path = tmp_path / name
    path.write_text(code, encoding="utf-8")
    return path


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"readme_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bot_class(module: ModuleType) -> type[Bot]:
    (cls,) = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Bot)
        and value.__module__ == module.__name__
    ]
    return cls


def test_the_example_is_a_short_complete_program() -> None:
    source, name, code = example()
    lines = [line for line in code.splitlines() if line.strip() and not line.startswith("#")]
    assert len(lines) <= 15, f"the example in {source.name} grew to {len(lines)} lines"
    assert name.endswith(".py")
    assert 'if __name__ == "__main__":' in code and "run(" in code


def test_the_example_bot_passes_the_compliance_check(example_file: Path) -> None:
    cls = bot_class(load(example_file))
    report = check_bot(cls, positions=5)
    assert report.passed, str(report)
    assert report.games == len(list(configurations()))


def test_the_example_bot_plays_local_games_against_the_house_bots(example_file: Path) -> None:
    cls = bot_class(load(example_file))
    for game in configurations():
        bots: list[Bot] = [
            cls() if seat % 2 == 0 else RandomBot(seat) for seat in range(game.num_players)
        ]
        result = play_game(game, bots, seed=11)
        assert result.state.is_terminal() and result.outcome.winner in range(len(game.sides))


def test_the_examples_main_calls_run_as_documented(
    example_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[inspect.BoundArguments] = []

    def fake_run(*args: Any, **kwargs: Any) -> None:
        calls.append(inspect.signature(run).bind(*args, **kwargs))

    monkeypatch.setattr(domino_arena.sdk, "run", fake_run)
    runpy.run_path(str(example_file), run_name="__main__")
    (call,) = calls
    bot = call.arguments["bot"]
    assert isinstance(bot, type) and issubclass(bot, Bot)
    assert call.arguments["name"] == "mybot"
    assert "token" not in call.arguments, "the token comes from $DOMINO_ARENA_TOKEN"
