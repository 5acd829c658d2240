"""The student's own page, "My bot" (``/courses/{name}/me``; blocking reads, run in a worker
thread like :mod:`.views`): what a student needs to see of their bot after a class's games.

- Its **standing** in each game the course has games of: the official fit, exactly the row the
  course's leaderboard shows (:func:`official_standing`, the one call that reads it), with its
  interval, its rank of all the rows, and its games there.
- Its **rating chart** where it has one: the bot page's chart of the live Elo
  (:func:`.views.rating_history`), named as the live Elo, which is not the official number.
- Its **faults, grouped by reason**: a bot that crashed 38 times with the same exception has
  one row "bot error: ValueError: ..." counted 38 times, not 38 rows; each group links the
  steps it happened at (the replay at that step) by match, newest first, the newest
  :data:`SHOWN_PER_REASON` of them.
- Its latest matches with their replays.
- Its **mistakes in its lost games** (:func:`lost_games`): the decisions the analysis marked
  in its newest analysed games it lost, each linking the replay at that step.
- Its hosted versions (:mod:`.hosted_views`): the upload form of a new version, the versions
  with their status and reports, and whether the latest is suspended or one is being checked.

It shows real names: only the bot's session reaches it (docs/web.md, "The forms").
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import quote

from sqlalchemy import Engine

from domino_arena.sdk.rules import GAMES
from domino_arena.server.analysis.report import Severity
from domino_arena.server.store.analyses import bot_analyses, load_analysis
from domino_arena.server.store.courses import StoredCourse
from domino_arena.server.web import bot_ratings, hosted_views, views
from domino_arena.server.web.analysis_pages import BOT_ANALYSES, version_label
from domino_arena.server.web.analysis_views import loss_text, severity_counts
from domino_arena.server.web.course_pages import course_summary
from domino_arena.server.web.scoped import course_games, known_course
from domino_arena.server.web.views import WebStorage

MY_MATCHES: Final = 1_000
"""A student's page reads its bot's latest this many matches for its faults."""
MY_FAULTED: Final = 200
"""At most this many of them are read whole (for each fault's reason)."""
MY_REPLAYS: Final = 50
"""Its latest matches listed with their replays."""
LOST_GAMES: Final = 10
"""The newest analysed games its bot lost that it lists with their mistakes."""
MISTAKES_SHOWN: Final = 20
"""The mistakes and blunders a lost game lists (its first, by step)."""
SEVERE: Final = (Severity.MISTAKE, Severity.BLUNDER)
SHOWN_PER_REASON: Final = 20
"""The steps a group of faults links (its newest); the group counts them all."""


def my_bot(storage: WebStorage, name: str, bot: str) -> dict[str, Any]:
    """A student's own bot: its state, its official standing per game, its live Elo chart,
    its faults among its latest :data:`MY_MATCHES` matches grouped by reason (kind and detail,
    from the record when it can be read), and its latest matches with their replays."""
    course = known_course(storage, name)
    stored = storage.bot(bot)
    recent = storage.matches(MY_MATCHES, course=name, bot=bot, records=False)
    charged = [m for m in recent if views.charged_to(bot, m)][:MY_FAULTED]
    faults = [
        {**fault, "game": m.game, "created": m.created.isoformat(), "replay": replay(m.id)}
        for m in charged
        for fault in views.faults_of(bot, views.with_record(storage, m))
    ]
    games = [game for game in course_games(storage.engine, name) if game in GAMES]
    rated = {pool for pool in games if storage.ratings(pool).get(bot) is not None}
    return {
        "course": course_summary(course),
        "bot": bot,
        "owner": None if stored is None else stored.owner,
        "state": None if stored is None else stored.state.value,
        "standings": [
            found for game in games if (found := official_standing(storage, course, game, bot))
        ],
        "rating_history": [views.rating_history(storage, pool, bot) for pool in sorted(rated)],
        "fault_groups": fault_groups(faults),
        "faults_total": len(faults),
        "matches": [
            {**views.match_summary(m), "replay": replay(m.id)} for m in recent[:MY_REPLAYS]
        ],
        "lost_games": lost_games(storage.engine, bot),
        "hosting": hosted_views.hosting(storage.engine, name, bot),
    }


def official_standing(
    storage: WebStorage, course: StoredCourse, game: str, bot: str
) -> dict[str, Any] | None:
    """``bot``'s row of ``course``'s official standings in ``game`` (the leaderboard's fit,
    anchored by the course's baselines: :func:`.bot_ratings.official_row`, as the bot's
    public page has it: ``rating``, ``text`` ("1620", "≥ 1400"), ``interval_text``, ``rank``
    (null: not ranked), ``provisional``, ``note``, ``games``...), with ``game``, ``title``
    and ``of`` (the bots that table ranks); None when it has no row there (no rated game)."""
    row, _ = bot_ratings.official_row(storage, game, bot, course)
    if row is None:
        return None
    return {**row, "game": game, "title": GAMES[game].title, "of": row["ranked"]}


def fault_groups(faults: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``faults`` (newest first) grouped by kind and reason, the most frequent group first
    (ties: the one seen most recently), each with its ``count``, its ``forfeits``, and the
    ``matches`` of its newest :data:`SHOWN_PER_REASON` faults, newest first, each with the
    ``steps`` it happened at, each linking the replay at that step."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for fault in faults:
        group = groups.setdefault(
            (fault["kind"], fault["reason"]),
            {
                "kind": fault["kind"],
                "label": fault["label"],
                "reason": fault["reason"],
                "count": 0,
                "forfeits": 0,
                "shown": 0,
                "matches": [],
            },
        )
        group["count"] += 1
        group["forfeits"] += bool(fault["forfeited"])
        if group["shown"] == SHOWN_PER_REASON:
            continue
        group["shown"] += 1
        places: list[dict[str, Any]] = group["matches"]
        if not places or places[-1]["match_id"] != fault["match_id"]:
            places.append(
                {
                    "match_id": fault["match_id"],
                    "game": fault["game"],
                    "created": fault["created"],
                    "replay": fault["replay"],
                    "steps": [],
                }
            )
        step = fault["step"]
        places[-1]["steps"].append({"step": step, "link": step_link(fault["match_id"], step)})
    return sorted(groups.values(), key=lambda group: -group["count"])


def replay(match_id: str) -> str:
    """The replay page of a stored match."""
    return f"/matches/{quote(match_id, safe='')}"


def step_link(match_id: str, step: int | None) -> str:
    """The replay of a match at ``step`` (the position the fault was charged in); the match's
    page when the step is unknown (no readable record)."""
    page = replay(match_id)
    return page if step is None else f"{page}?step={step}#replay"


def lost_games(engine: Engine, bot: str) -> list[dict[str, Any]]:
    """``bot``'s newest :data:`LOST_GAMES` analysed games that it lost, newest first: each
    with its figures (the count of each severity) and its mistakes and blunders by step (the
    first :data:`MISTAKES_SHOWN`; ``more`` counts the rest), each linking the replay at the
    step it was taken in. Inaccuracies are counted, not listed: a student reads the costly
    ones first."""
    lost = [a for a in bot_analyses(engine, bot, limit=BOT_ANALYSES) if a.won is False]
    shown = []
    for a in lost[:LOST_GAMES]:
        analysis = load_analysis(engine, a.match_id)
        decisions = [] if analysis is None else analysis.for_seat(a.seat)
        marked = sorted((d for d in decisions if d.severity in SEVERE), key=lambda d: d.step)
        shown.append(
            {
                "match_id": a.match_id,
                "game": a.game,
                "played_at": a.played_at.isoformat(),
                "version": None if a.version is None else version_label(a.version),
                "seat": a.seat,
                "replay": replay(a.match_id),
                "accuracy": a.summary.accuracy,
                "mean_loss": a.summary.mean_loss_points,
                "decisions": a.summary.decisions,
                "counts": severity_counts(a.summary),
                "mistakes": [
                    {
                        "step": d.step,
                        "hand": d.hand,
                        "phase": d.phase,
                        "severity": d.severity.value if d.severity else None,
                        "text": loss_text(d),
                        "link": step_link(a.match_id, d.step),
                    }
                    for d in marked[:MISTAKES_SHOWN]
                ],
                "more": max(len(marked) - MISTAKES_SHOWN, 0),
            }
        )
    return shown
