"""A bot's rating wherever a page shows one: its row of the official standings.

docs/ratings.md (what the standings don't know): the official number of a bot is the batch fit
of its course's rated games, the one its course's leaderboard and the game's standings page
show (:func:`.standings.official`, the same fit and the same cache), with the same marks:
one-sided, provisional, unranked. The live Elo (moved after every game) is shown beside it
only as "live Elo". Kept apart from :mod:`.views`, which the standings module itself imports.
"""

from __future__ import annotations

from typing import Any

from domino_arena.server.store.courses import StoredCourse
from domino_arena.server.store.tables import DEFAULT_COURSE
from domino_arena.server.web import standings, views
from domino_arena.server.web.views import WebStorage


def official_row(
    storage: WebStorage, game: str, bot: str, course: StoredCourse | None = None
) -> tuple[dict[str, Any] | None, str | None]:
    """``bot``'s row of ``game``'s official standings in its own course, and None; or None
    and why there is none.

    The row is :func:`.standings.row_data`'s (``rating``, ``text``, ``interval_text``,
    ``rank`` (null: unranked), ``provisional``, ``unbounded``, ``note``, ...) plus ``pool``
    (the fitted pool's label) and ``ranked`` (how many bots the table ranks). The pool with
    most games is tried first, then each other player count the bot may have played.
    ``course``: the bot's course when the caller has it (else read from the bot)."""
    if course is None:
        stored = storage.bot(bot)
        name = DEFAULT_COURSE if stored is None else stored.course
        course = storage.course(name) if name != DEFAULT_COURSE else None
    else:
        name = course.name
    baselines = () if course is None else course.baselines
    note: str | None = None
    for players in (None, *standings.player_counts(game)):
        fitted, why = standings.official(storage, game, players, name, baselines)
        if fitted is None:
            note = note or why
            continue
        row = next((r for r in fitted["rows"] if r["bot"] == bot), None)
        if row is not None:
            ranked = sum(1 for r in fitted["rows"] if r["rank"] is not None)
            return {**row, "pool": fitted["pool"], "ranked": ranked}, None
        note = note or f"it played none of the {fitted['pool']} games fitted"
    return None, note


def bot_page(storage: WebStorage, name: str) -> dict[str, Any]:
    """A bot's page (:func:`.views.bot`) with each game's rating its official row: ``ratings``
    [{``game``, ``official`` (:func:`official_row`, or null), ``official_note`` (why there is
    none, or null), ``live_elo`` and ``live_interval`` (the live Elo ladder's), ``games``}]."""
    data = views.bot(storage, name)
    ratings = []
    for live in data["ratings"]:
        row, note = official_row(storage, live["game"], name)
        ratings.append(
            {
                "game": live["game"],
                "official": row,
                "official_note": note,
                "live_elo": live["rating"],
                "live_interval": live["interval"],
                "games": live["games"],
            }
        )
    return {**data, "ratings": ratings}
