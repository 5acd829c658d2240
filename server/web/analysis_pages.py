"""The analyses on the pages (blocking reads, run in a worker thread like :mod:`.views`):

- the **replay viewer** of a stored match (:func:`attach_replay`): its strip, seat figures and
  the decision at the shown step (:mod:`.analysis_views`), when the match has an analysis;
- a **bot's page** (:func:`bot_summary`): its mean loss per decision in each game, by phase,
  and by version over time (:mod:`.analysis_charts`): did the new version lose less?

(The student's My bot reads its lost games' marked decisions itself: :func:`.my_bot.lost_games`.)

Analyses are of finished, stored matches only (server/store/analyses.py); the live pages read
none. Each returns nothing (None, an empty list) when there is no analysis, and the pages then
show nothing of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from sqlalchemy import Engine

from domino_arena.server.store import analysis_jobs
from domino_arena.server.store.analyses import BotAnalysis, bot_analyses, load_analysis
from domino_arena.server.web.analysis_charts import LossPoint, loss_chart
from domino_arena.server.web.analysis_views import replay_analysis

BOT_ANALYSES: Final = 200
"""A bot's page reads its newest this many analysed games."""
PHASES: Final = ("bid", "discard", "trump", "play")
"""The order phases are listed in (Moon's; the line games have ``play`` only)."""
NO_VERSION: Final = "unversioned"
"""How a game played by a bot with no hosted version (a connected bot) is labelled."""


def version_label(version: int | None) -> str:
    """A hosted version as the pages name it: ``v2``, or :data:`NO_VERSION`."""
    return NO_VERSION if version is None else f"v{version}"


def attach_replay(engine: Engine, data: dict[str, Any]) -> None:
    """Add ``analysis`` to a match page's data (:func:`.views.match`) when the match has a
    stored analysis and a replay: :func:`.analysis_views.replay_analysis` at its step."""
    replay_data = data.get("replay")
    if replay_data is None:
        return
    found = load_analysis(engine, data["match"]["id"])
    if found is None:
        return
    data["analysis"] = replay_analysis(
        found, replay_data["timeline"], data["match"]["seats"], replay_data["step"]
    )


def _mean(pairs: Sequence[tuple[float, int]]) -> float:
    """The mean of values weighted by their counts (0 when nothing counts)."""
    weight = sum(n for _, n in pairs)
    return sum(v * n for v, n in pairs) / weight if weight else 0.0


def _figures(games: Sequence[BotAnalysis]) -> dict[str, Any]:
    """Games, decisions, mean loss per decision (over all their decisions), mean accuracy and
    wins of ``games``."""
    decisions = sum(g.summary.decisions for g in games)
    return {
        "games": len(games),
        "decisions": decisions,
        "mean_loss": _mean([(g.summary.mean_loss_points, g.summary.decisions) for g in games]),
        "accuracy": sum(g.summary.accuracy for g in games) / len(games),
        "won": sum(1 for g in games if g.won),
        "lost": sum(1 for g in games if g.won is False),
    }


def _phases(games: Sequence[BotAnalysis]) -> list[dict[str, Any]]:
    """Mean loss per decision by phase: each game's phase mean weighted by its decisions (the
    summary keeps no count per phase)."""
    seen = {phase for g in games for phase in g.summary.by_phase}
    ordered = [p for p in PHASES if p in seen] + sorted(seen - set(PHASES))
    return [
        {
            "phase": phase,
            "mean_loss": _mean(
                [
                    (g.summary.by_phase[phase], max(g.summary.decisions, 1))
                    for g in games
                    if phase in g.summary.by_phase
                ]
            ),
        }
        for phase in ordered
    ]


def summary_of(bot: str, found: Sequence[BotAnalysis]) -> list[dict[str, Any]]:
    """Per game (by name), ``bot``'s analysed games ``found`` (newest first): its figures
    (:func:`_figures`), ``phases``, ``versions`` (in the order first played, each with its
    figures and first and last dates), the chart's ``points`` oldest first and its ``svg``."""
    by_game: dict[str, list[BotAnalysis]] = {}
    for a in found:
        by_game.setdefault(a.game, []).append(a)
    games = []
    for game, newest_first in sorted(by_game.items()):
        oldest_first = newest_first[::-1]
        by_version: dict[str, list[BotAnalysis]] = {}
        for a in oldest_first:
            by_version.setdefault(version_label(a.version), []).append(a)
        points = [
            LossPoint(a.match_id, version_label(a.version), a.summary.mean_loss_points)
            for a in oldest_first
        ]
        games.append(
            {
                "game": game,
                **_figures(newest_first),
                "phases": _phases(newest_first),
                "versions": [
                    {
                        "version": version,
                        **_figures(played),
                        "first": played[0].played_at.isoformat(),
                        "last": played[-1].played_at.isoformat(),
                    }
                    for version, played in by_version.items()
                ],
                "points": [
                    {"game": n, "match_id": p.match_id, "version": p.version, "loss": p.loss}
                    for n, p in enumerate(points, start=1)
                ],
                "svg": loss_chart(points, label=f"{bot} in {game}: points lost a decision"),
            }
        )
    return games


def bot_summary(engine: Engine, bot: str) -> list[dict[str, Any]]:
    """``bot``'s analysis summary per game (:func:`summary_of`) over its newest
    :data:`BOT_ANALYSES` analysed games; empty when it has none."""
    return summary_of(bot, bot_analyses(engine, bot, limit=BOT_ANALYSES))


def tournament_progress(engine: Engine, tournament_id: str) -> dict[str, int] | None:
    """How far the analysis of a tournament's matches has got (docs/analysis.md: running
    analyses): analysed of all, and the jobs waiting, running and failed; None when it was
    never asked for (nothing analysed, nothing queued)."""
    status = analysis_jobs.tournament_status(engine, tournament_id)
    if not status.asked:
        return None
    return {
        "analysed": status.analysed,
        "total": status.total,
        "waiting": status.jobs[analysis_jobs.PENDING],
        "running": status.jobs[analysis_jobs.RUNNING],
        "failed": status.jobs[analysis_jobs.FAILED],
    }
