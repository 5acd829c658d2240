"""The analyses' store (server/store/analyses.py) on SQLite and PostgreSQL: saving seat by seat,
replacing a seat, merging seats back, a bot's analysed games, a tournament's progress."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
import sqlalchemy as sa

from domino_arena.server.store.analyses import (
    UnknownMatchError,
    analysed_figures,
    analysed_seats,
    analysis_progress,
    bot_analyses,
    load_analysis,
    save_analysis,
)
from domino_arena.server.store.storage import Storage
from domino_arena.server.store.tables import MATCH_LOGS
from tests.analysis.records import analysis, summary
from tests.fakes.store import a_match, running_tournament


def test_an_analysis_is_stored_and_read_back_whole(storage: Storage) -> None:
    storage.save_match(a_match("m1"))
    saved = analysis("m1", {0: 0.5, 1: 2.0})
    save_analysis(storage.engine, saved)

    loaded = load_analysis(storage.engine, "m1")
    assert loaded == dataclasses.replace(
        saved, decisions=tuple(sorted(saved.decisions, key=lambda d: (d.step, d.seat)))
    )
    assert [d.step for d in loaded.decisions] == [0, 1, 2, 3]
    assert load_analysis(storage.engine, "nothing") is None


def test_analysing_a_seat_again_replaces_only_that_seat(storage: Storage) -> None:
    storage.save_match(a_match("m1"))
    save_analysis(storage.engine, analysis("m1", {0: 0.5, 1: 2.0}))
    save_analysis(storage.engine, analysis("m1", {1: 0.25}, precision=0.1))

    loaded = load_analysis(storage.engine, "m1")
    assert loaded is not None
    assert loaded.seats == (0, 1)
    assert [s.mean_loss_points for s in loaded.summaries] == [0.5, 0.25]
    assert len(loaded.for_seat(1)) == 2  # the old seat 1 decisions are gone
    assert loaded.precision == 0.1  # the coarsest of the seats'
    assert analysed_seats(storage.engine, "m1") == [0, 1]


def test_bad_analyses_are_refused_naming_the_field(storage: Storage) -> None:
    storage.save_match(a_match("m1"))
    with pytest.raises(UnknownMatchError, match="match_id: no stored match has id 'm9'"):
        save_analysis(storage.engine, analysis("m9", {0: 0.5}))
    with pytest.raises(ValueError, match="seats: match m1 has seats 0-1, got 2"):
        save_analysis(storage.engine, dataclasses.replace(analysis("m1", {0: 0.5}), seats=(2,)))
    no_summary = dataclasses.replace(analysis("m1", {0: 0.5}), summaries=())
    with pytest.raises(ValueError, match="summaries: seat 0 was analysed but has no summary"):
        save_analysis(storage.engine, no_summary)
    assert load_analysis(storage.engine, "m1") is None


def test_a_bots_analysed_games_newest_first_with_version_and_result(storage: Storage) -> None:
    for minute, match_id in enumerate(("old", "mid", "new")):
        storage.save_match(a_match(match_id, minute=minute))
        save_analysis(storage.engine, analysis(match_id, {0: 0.1 * (minute + 1), 1: 1.0}))
    storage.save_match(a_match("unanalysed", minute=9))
    with storage.engine.begin() as connection:
        connection.execute(
            MATCH_LOGS.insert(),
            {
                "match_id": "mid",
                "bot": "alice",
                "version": 3,
                "crashed": False,
                "created": dt.datetime(2026, 1, 2, tzinfo=dt.UTC),
                "text": "",
            },
        )

    found = bot_analyses(storage.engine, "alice")
    assert [a.match_id for a in found] == ["new", "mid", "old"]
    assert [a.version for a in found] == [None, 3, None]
    assert all(a.seat == 0 and a.won is False and a.game == "passing" for a in found)
    assert found[0].played_at == a_match("new", minute=2).created
    assert found[2].summary == summary(0, "alice", 0.1)
    assert [a.won for a in bot_analyses(storage.engine, "bob", limit=2)] == [True, True]
    assert bot_analyses(storage.engine, "carol") == []
    with pytest.raises(ValueError, match="limit: expected at least 1, got 0"):
        bot_analyses(storage.engine, "alice", limit=0)


def test_a_tournaments_progress_and_figures(storage: Storage) -> None:
    storage.add_tournament(running_tournament("cup", ("alice", "bob")))
    for index in range(3):
        storage.save_match(
            dataclasses.replace(a_match(f"t1-{index:05d}"), tournament_id="t1", game_index=index)
        )
    storage.save_match(a_match("elsewhere"))
    save_analysis(storage.engine, analysis("elsewhere", {0: 9.0}))
    assert analysis_progress(storage.engine, "t1") == (0, 3)

    save_analysis(storage.engine, analysis("t1-00000", {0: 1.0, 1: 2.0}))
    save_analysis(
        storage.engine,
        dataclasses.replace(
            analysis("t1-00001", {0: 4.0}),
            summaries=(summary(0, "alice", 4.0, decisions=6),),
        ),
    )
    assert analysis_progress(storage.engine, "t1") == (2, 3)
    assert analysis_progress(storage.engine, "none") == (0, 0)

    figures = analysed_figures(storage.engine, ["t1", "other"])
    assert set(figures) == {"alice", "bob"}
    alice = figures["alice"]
    assert (alice.games, alice.decisions) == (2, 8)
    assert alice.mean_loss_points == pytest.approx((1.0 * 2 + 4.0 * 6) / 8)
    assert alice.accuracy == pytest.approx((90.0 + 60.0) / 2)
    assert figures["bob"].mean_loss_points == pytest.approx(2.0)


def test_the_analyses_go_with_the_schema(storage: Storage) -> None:
    with storage.engine.connect() as connection:
        tables = set(sa.inspect(connection).get_table_names())
    assert {"analyses", "analysis_jobs"} <= tables
    assert storage.schema_version() == "0018"
