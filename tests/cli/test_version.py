"""``domino-arena --version``: the installed version on one line, exit status 0."""

from __future__ import annotations

from importlib import metadata

import pytest

from domino_arena.server.cli import main as cli_main

from .harness import run


def test_version_is_the_installed_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--version")
    assert (code, err) == (0, "")
    assert out == f"domino-arena {metadata.version('domino-arena')}\n"


def test_version_without_an_installed_distribution_says_unknown(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_main, "DISTRIBUTION", "domino-arena-not-installed")
    code, out, _ = run(capsys, "--version")
    assert (code, out) == (0, "domino-arena unknown\n")


def test_version_wins_over_a_missing_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--version", "play")
    assert (code, err) == (0, "")
    assert out.startswith("domino-arena ")
