"""An adjudicated game (the referee's cap on deals, docs/rules.md 7.2) reads as adjudicated on
every page that says how a match ended, never as a plain win."""

from __future__ import annotations

import dataclasses

from domino_arena.sdk.client.spectator import WatchedEnd
from domino_arena.sdk.match.results import Termination
from domino_arena.sdk.rules import make_game
from domino_arena.server.web.deals import result_text
from domino_arena.server.web.live_feed import result_text as live_result_text
from tests.fakes.store import a_match

DETAIL = (
    "adjudicated: no winner by the rules after 3 deals, the referee's cap (max_deals); "
    "scores 30/41: seat 1 (bob) has the highest score and wins"
)


def test_a_stored_adjudicated_win_says_on_adjudication_and_why() -> None:
    match = dataclasses.replace(
        a_match("m"), termination="adjudicated", winner=1, scores=(30, 41), detail=DETAIL
    )
    assert result_text(match) == f"bob won on adjudication: {DETAIL}"
    normal = a_match("n")
    assert result_text(normal) == "bob won", "a win by the rules says no more"


def test_a_stored_adjudicated_tie_at_the_top_has_no_winner() -> None:
    match = dataclasses.replace(
        a_match("m"), termination="adjudicated", winner=None, scores=(30, 30), detail="level"
    )
    assert result_text(match) == "adjudicated: level"


def test_a_watched_adjudication_says_so_on_the_live_pages() -> None:
    game = make_game("passing")
    end = WatchedEnd(Termination.ADJUDICATED, 1, (30, 41), DETAIL)
    assert live_result_text(game, ("ann", "bob"), end) == (
        "side 1 (bob) wins on adjudication, scores 30-41"
    )
    forfeit = WatchedEnd(Termination.FORFEIT, 0, (3, 4), "x")
    assert (
        live_result_text(game, ("ann", "bob"), forfeit)
        == "side 0 (ann) wins by forfeit, scores 3-4"
    )
