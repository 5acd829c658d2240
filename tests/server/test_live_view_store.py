"""Who may watch a match while it runs, as stored (docs/courses.md: live view), on SQLite and
PostgreSQL: a course's live view (public unless chosen), a tournament's (None: its course's),
and ``Storage.live_view``, the effective one the referee reads, in one query."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import sqlalchemy as sa

from domino_arena.server.store.courses import CourseError, UnknownCourseError
from domino_arena.server.store.live_views import (
    LIVE_VIEW_NONE,
    LIVE_VIEW_PUBLIC,
    LIVE_VIEW_SIGNED_IN,
    LIVE_VIEWS,
    check_live_view,
)
from domino_arena.server.store.storage import Storage
from domino_arena.server.store.tournaments import StoredTournament, TournamentState

MOMENT = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


def cup(tournament_id: str, course: str, live_view: str | None = None) -> StoredTournament:
    return StoredTournament(
        id=tournament_id,
        name="cup",
        game="passing",
        options={"players": 2, "partnerships": False},
        entrants=("alice", "bob"),
        games_per_pairing=1,
        deals="duplicate",
        time_control_ms=(1000, 10000, 250),
        fault_policy="forfeit",
        max_strikes=3,
        concurrency=1,
        wait_seconds=0,
        seed=7,
        rated=True,
        state=TournamentState.CREATED,
        created=MOMENT,
        updated=MOMENT,
        course=course,
        live_view=live_view,
    )


def test_the_values_are_three_strings_most_open_first() -> None:
    assert LIVE_VIEWS == ("public", "signed-in", "none")
    assert check_live_view("signed-in") == LIVE_VIEW_SIGNED_IN
    with pytest.raises(ValueError, match=r"^live_view: expected one of public, signed-in, none, "):
        check_live_view("SIGNED_IN")


def test_a_course_is_public_unless_chosen_and_an_update_changes_only_what_is_given(
    storage: Storage,
) -> None:
    assert storage.create_course("open").course.live_view == LIVE_VIEW_PUBLIC
    made = storage.create_course("quiet", live_view=LIVE_VIEW_SIGNED_IN).course
    assert made.live_view == LIVE_VIEW_SIGNED_IN
    assert storage.update_course("quiet", title="Quiet").live_view == LIVE_VIEW_SIGNED_IN
    assert storage.update_course("quiet", live_view=LIVE_VIEW_NONE).live_view == LIVE_VIEW_NONE
    assert {c.name: c.live_view for c in storage.courses()} == {
        "default": LIVE_VIEW_PUBLIC,
        "open": LIVE_VIEW_PUBLIC,
        "quiet": LIVE_VIEW_NONE,
    }
    course = storage.course("quiet")
    assert course is not None and course.live_view == LIVE_VIEW_NONE


@pytest.mark.parametrize("call", ["create", "update"])
def test_a_live_view_not_one_of_the_three_is_refused_naming_the_field(
    storage: Storage, call: str
) -> None:
    storage.create_course("c1")
    words = r"^live_view: expected one of public, signed-in, none, got 'private'$"
    with pytest.raises(CourseError, match=words):
        if call == "create":
            storage.create_course("c2", live_view="private")
        else:
            storage.update_course("c1", live_view="private")
    assert storage.course("c2") is None
    found = storage.course("c1")
    assert found is not None and found.live_view == LIVE_VIEW_PUBLIC
    with pytest.raises(UnknownCourseError):
        storage.update_course("nowhere", live_view=LIVE_VIEW_NONE)


def test_a_tournament_keeps_its_own_live_view_or_none(storage: Storage) -> None:
    storage.add_tournament(cup("own", "default", LIVE_VIEW_NONE))
    storage.add_tournament(cup("inherits", "default"))
    assert [(t.id, t.live_view) for t in storage.tournaments()] == [
        ("inherits", None),
        ("own", LIVE_VIEW_NONE),
    ]
    with pytest.raises(ValueError, match=r"^live_view: expected one of .* got 'hidden'$"):
        cup("bad", "default", "hidden")


def test_the_effective_view_is_the_tournaments_else_its_courses_else_public(
    storage: Storage,
) -> None:
    storage.create_course("quiet", live_view=LIVE_VIEW_SIGNED_IN)
    storage.add_tournament(cup("final", "quiet", LIVE_VIEW_NONE))
    storage.add_tournament(cup("heats", "quiet"))
    storage.add_tournament(cup("show", "quiet", LIVE_VIEW_PUBLIC))
    assert storage.live_view("quiet", None) == LIVE_VIEW_SIGNED_IN  # a ladder or practice match
    assert storage.live_view("quiet", "final") == LIVE_VIEW_NONE
    assert storage.live_view("quiet", "show") == LIVE_VIEW_PUBLIC  # more open than its course
    assert storage.live_view("quiet", "heats") == LIVE_VIEW_SIGNED_IN
    assert storage.live_view("quiet", "no-such-cup") == LIVE_VIEW_SIGNED_IN
    assert storage.live_view("default", None) == LIVE_VIEW_PUBLIC
    assert storage.live_view("no-such-course", None) == LIVE_VIEW_PUBLIC
    assert storage.live_view("no-such-course", "final") == LIVE_VIEW_PUBLIC
    storage.update_course("quiet", live_view=LIVE_VIEW_NONE)  # read afresh at each call
    assert storage.live_view("quiet", "heats") == LIVE_VIEW_NONE
    assert storage.live_view("quiet", "show") == LIVE_VIEW_PUBLIC


def test_the_effective_view_is_one_statement_on_primary_keys(storage: Storage) -> None:
    """The referee asks at every match start: one query, each table found by its key (on
    SQLite the plan is read; PostgreSQL's planner scans tables this small whatever the index)."""
    storage.create_course("quiet", live_view=LIVE_VIEW_SIGNED_IN)
    storage.add_tournament(cup("heats", "quiet"))
    statements: list[tuple[str, Any]] = []

    def count(*args: Any) -> None:
        statements.append((args[2], args[3]))

    sa.event.listen(storage.engine, "before_cursor_execute", count)
    try:
        assert storage.live_view("quiet", "heats") == LIVE_VIEW_SIGNED_IN
        assert storage.live_view("quiet", None) == LIVE_VIEW_SIGNED_IN
    finally:
        sa.event.remove(storage.engine, "before_cursor_execute", count)
    queries = [q for q in statements if q[0].strip().upper() != "BEGIN"]  # SQLite's own BEGIN
    assert len(queries) == 2, statements
    if storage.engine.dialect.name != "sqlite":
        return
    with storage.engine.connect() as connection:
        for text, parameters in queries:
            plan = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {text}", parameters).all()
            details = [str(row[-1]) for row in plan if "SUBQUERY" not in str(row[-1])]
            assert all(d.startswith("SEARCH") for d in details), details  # never a SCAN
            assert any("tournaments" in d for d in details) == ("tournaments" in text), details
