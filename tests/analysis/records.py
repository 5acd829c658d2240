"""Matches to analyse: short games of house bots played in-process, as stored rows; and
analyses built by hand, for the store and the grades."""

from __future__ import annotations

import dataclasses
import io

from domino_arena.bots import RandomBot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.records import write_record
from domino_arena.sdk.rules import make_game
from domino_arena.server.analysis.report import (
    ActionValue,
    Decision,
    HandPar,
    MatchAnalysis,
    SeatSummary,
    Severity,
)
from domino_arena.server.store.matches import StoredMatch
from tests.fakes.store import a_match

QUICK: float = 5.0
"""A precision (points) so coarse each decision stops at its first batch of samples."""


def record_text(seed: int = 5, game: str = "passing") -> str:
    """The record of one deal of a two-player game between random bots (seats named
    ``alice`` and ``bob``)."""
    result = play_game(
        make_game(game, players=2),
        [RandomBot(seed), RandomBot(seed + 1)],
        seed=seed,
        timer=None,
        max_deals=1,
        names=("alice", "bob"),
    )
    out = io.StringIO()
    write_record(result.record, out)
    return out.getvalue()


def played(match_id: str, *, seed: int = 5, minute: int = 0) -> StoredMatch:
    """A stored match of ``alice`` and ``bob`` with a real record."""
    return dataclasses.replace(a_match(match_id, minute=minute), record=record_text(seed))


def decision(step: int, seat: int, loss: float) -> Decision:
    return Decision(
        step=step,
        seat=seat,
        hand=1,
        phase="play",
        chosen="play 6-6 left",
        best="play 6-6 left" if loss == 0 else "play 5-5 left",
        loss_points=loss,
        loss_win=loss / 100,
        stderr=0.04,
        samples=64,
        severity=None if loss < 1 else Severity.MISTAKE,
        values=(ActionValue("play 6-6 left", 3.0 - loss, 0.5), ActionValue("pass", 1.0, 0.4)),
    )


def summary(seat: int, name: str, loss: float, decisions: int = 2) -> SeatSummary:
    return SeatSummary(
        seat=seat,
        name=name,
        decisions=decisions,
        mean_loss_points=loss,
        mean_loss_win=loss / 100,
        accuracy=100 - 10 * loss,
        severities={"mistake": 1} if loss >= 1 else {},
        by_phase={"play": loss},
    )


def analysis(
    match_id: str,
    seats: dict[int, float],
    *,
    precision: float = 0.05,
    names: tuple[str, ...] = ("alice", "bob"),
) -> MatchAnalysis:
    """An analysis of ``match_id`` of the seats given, each with its mean loss (alice is seat
    0, bob seat 1, as :func:`a_match` seats them)."""
    return MatchAnalysis(
        match_id=match_id,
        game="passing",
        seats=tuple(seats),
        precision=precision,
        seed=7,
        decisions=tuple(
            decision(step, seat, loss if step > 1 else 0.0)
            for seat, loss in seats.items()
            for step in (seat, seat + 2)
        ),
        summaries=tuple(summary(seat, names[seat], loss) for seat, loss in seats.items()),
        pars=(HandPar(hand=1, par=(10, 20), actual=(5, 25), exact=True),),
    )
