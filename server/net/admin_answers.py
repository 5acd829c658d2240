"""The admin API's answers: stored matches, tournaments, results, ladders and bots as messages.

Pure conversions of what the storage and the runners hold; the servicer (:mod:`.admin`) reads
and checks, these only translate.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from typing import Final, Protocol

from google.protobuf.timestamp_pb2 import Timestamp

from domino_arena.sdk.match.results import FaultKind, FaultPolicy, MatchResult, Termination
from domino_arena.sdk.rules import Game, make_game
from domino_arena.sdk.wire import fault_policy_to_proto, game_to_proto, match_result_to_proto
from domino_arena.server.ladder import elo
from domino_arena.server.ladder.results import counted_games, entrant_results
from domino_arena.server.net.admin_compare import comparison_message
from domino_arena.server.net.wire import (
    deal_mode_to_proto,
    hosting_limits_to_proto,
    live_view_to_proto,
    time_control_to_proto,
)
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.stats.repeat_deals import repeat_deal_checks
from domino_arena.server.store.bots import BotState, StoredBot
from domino_arena.server.store.matches import StoredMatch, sides_of
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle import max_deals_of
from domino_arena.server.tournaments.scheduler import DealMode
from domino_arena.v1 import admin_pb2 as admin_pb

STATE_TO_PROTO: Final[dict[TournamentState, admin_pb.TournamentState.ValueType]] = {
    TournamentState.CREATED: admin_pb.TOURNAMENT_STATE_CREATED,
    TournamentState.RUNNING: admin_pb.TOURNAMENT_STATE_RUNNING,
    TournamentState.PAUSED: admin_pb.TOURNAMENT_STATE_PAUSED,
    TournamentState.CANCELLED: admin_pb.TOURNAMENT_STATE_CANCELLED,
    TournamentState.FINISHED: admin_pb.TOURNAMENT_STATE_FINISHED,
}
STATE_FROM_PROTO: Final = {code: state for state, code in STATE_TO_PROTO.items()}


class Progress(Protocol):
    """How far a running tournament is (``TournamentRunner.progress``)."""

    @property
    def total(self) -> int: ...
    @property
    def done(self) -> int: ...
    @property
    def running(self) -> int: ...
    @property
    def waiting(self) -> int: ...


class LadderView(Protocol):
    """A running ladder as the admin API shows it (``LadderRunner``)."""

    @property
    def game(self) -> Game: ...
    @property
    def time_control(self) -> TimeControl: ...
    @property
    def fault_policy(self) -> FaultPolicy: ...
    @property
    def max_strikes(self) -> int: ...
    @property
    def max_deals(self) -> int: ...
    @property
    def concurrency(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def started(self) -> int: ...
    @property
    def finished(self) -> int: ...
    @property
    def course(self) -> str: ...


def _timestamp(moment: dt.datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment.astimezone(dt.UTC) if moment.tzinfo else moment)
    return stamp


def match_summary(match: StoredMatch) -> admin_pb.MatchSummary:
    """Return the summary of a stored match (everything but its record)."""
    result = MatchResult(
        Termination(match.termination),
        match.winner,
        match.scores,
        faulted_seat=match.faulted_seat,
        fault=None if match.fault is None else FaultKind(match.fault),
        detail=match.detail,
    )
    summary = admin_pb.MatchSummary(
        match_id=match.id,
        game=game_to_proto(make_game(match.game, **match.options)),
        bots=match.seats,
        seed=match.seed,
        result=match_result_to_proto(result, sides_of(match)),
        faults=match.faults or (0,) * len(match.seats),
        rated=match.rated,
        rating_model=match.rating_model,
        course=match.course,
        tournament_id=match.tournament_id or "",
        game_index=-1 if match.game_index is None else match.game_index,
        deal_id=-1 if match.deal_id is None else match.deal_id,
        rotation=-1 if match.rotation is None else match.rotation,
    )
    summary.created.CopyFrom(_timestamp(match.created))
    return summary


def tournament_message(
    t: StoredTournament, progress: admin_pb.TournamentProgress
) -> admin_pb.Tournament:
    """Return a tournament's settings, state and progress (its results are added apart)."""
    message = admin_pb.Tournament(
        id=t.id,
        name=t.name,
        game=game_to_proto(make_game(t.game, **t.options)),
        entrants=t.entrants,
        games_per_pairing=t.games_per_pairing,
        deals=deal_mode_to_proto(DealMode(t.deals)),
        time_control=time_control_to_proto(TimeControl.from_ms(*t.time_control_ms)),
        fault_policy=fault_policy_to_proto(FaultPolicy(t.fault_policy)),
        max_strikes=t.max_strikes,
        max_deals=max_deals_of(t),
        concurrency=t.concurrency,
        wait_ms=round(t.wait_seconds * 1000),
        rated=t.rated,
        state=STATE_TO_PROTO[t.state],
        progress=progress,
        seed_commitment=t.seed_commitment,
        deal_scheme=t.deal_scheme,
        format=t.format,
        games_per_entrant=t.games_per_entrant or 0,
        rounds=t.rounds or 0,
        knockout_sets=t.knockout["sets"] if t.knockout else 0,
        knockout_max_sets=t.knockout["max_sets"] if t.knockout else 0,
        seeding=t.seeding,
    )
    if t.seed_revealed:  # before, the commitment alone: no seed reaches a bot early
        message.seed = t.seed
        message.seed_salt = t.seed_salt
    message.created.CopyFrom(_timestamp(t.created))
    message.updated.CopyFrom(_timestamp(t.updated))
    if t.kind == "compare":
        message.kind = admin_pb.TOURNAMENT_KIND_COMPARE
        message.comparison.CopyFrom(comparison_message(t))
    else:
        message.kind = admin_pb.TOURNAMENT_KIND_ROUND_ROBIN
    _course_fields(message, t)
    return message


ENTRANT_POLICY_TO_PROTO: Final = {
    "listed": admin_pb.ENTRANT_POLICY_LISTED,
    "connected": admin_pb.ENTRANT_POLICY_CONNECTED,
    "latest": admin_pb.ENTRANT_POLICY_LATEST,
}


def _course_fields(message: admin_pb.Tournament, t: StoredTournament) -> None:
    """Fields 28-33 and 37-39: the course, entrant policy, start time, regrade, baselines, live
    view (as created: unspecified, the course's), version pins and sandbox limits."""
    message.course = t.course
    message.live_view = live_view_to_proto(t.live_view)
    message.entrant_policy = ENTRANT_POLICY_TO_PROTO[t.entrant_policy]
    if t.start_at is not None:
        message.start_at.CopyFrom(_timestamp(t.start_at))
    message.regrade_of = t.regrade_of or ""
    message.replaced.extend(admin_pb.Replacement(bot=b, by=by) for b, by in t.replaced)
    message.baselines.extend(name for name, _ in t.baselines)
    message.version_pins.update(t.version_pins or {})
    message.hosting_limits.CopyFrom(hosting_limits_to_proto(t.hosting_limits))


def standing_rows(ratings: Mapping[str, elo.Rating]) -> list[admin_pb.StandingRow]:
    """The live Elo ladder of a pool, best first."""
    return [
        admin_pb.StandingRow(
            rank=rank,
            bot=bot,
            rating=rating.rating,
            uncertainty=rating.uncertainty,
            games=rating.games,
            wins=rating.wins,
            draws=rating.draws,
            losses=rating.losses,
            faults=rating.faults,
        )
        for rank, (bot, rating) in enumerate(elo.standings(ratings), start=1)
    ]


def head_to_head_rows(games: Sequence[elo.RatedGame]) -> list[admin_pb.HeadToHead]:
    """Every pair of bots that met, with the first bot's wins, draws and losses."""
    return [
        admin_pb.HeadToHead(
            bot=a, opponent=b, wins=record.wins, draws=record.draws, losses=record.losses
        )
        for (a, b), record in sorted(elo.head_to_head(games).items())
    ]


def tournament_results(
    entrants: Sequence[str],
    matches: Sequence[StoredMatch],
    baselines: Sequence[tuple[str, float]] = (),
) -> tuple[list[admin_pb.EntrantResult], list[admin_pb.HeadToHead]]:
    """Return the results per entrant (best first) and the crosstable of a tournament.

    Only counted games (normal ends and forfeits) count, rated or not; ``performance`` is the
    entrant's row of the tournament's own official fit (``batch.point_table``), the frozen
    ``baselines`` held at their fixed ratings.
    """
    # Imported here: the fit loads NumPy and SciPy, which a referee loads only when asked.
    from domino_arena.server.ladder.batch import point_table  # noqa: PLC0415

    games = counted_games(matches, baselines)
    rows = [
        admin_pb.EntrantResult(
            bot=row.bot,
            games=row.games,
            wins=row.wins,
            draws=row.draws,
            losses=row.losses,
            faults=row.faults,
            points=row.points,
            performance=math.nan if row.performance is None else row.performance.rating,
            performance_text="" if row.performance is None else row.performance.text,
            provisional=row.performance is not None and row.performance.provisional,
        )
        for row in entrant_results(entrants, games, point_table(matches, baselines))
    ]
    return rows, head_to_head_rows(games)


def repeat_deal_rows(
    matches: Sequence[StoredMatch], bots: Sequence[str]
) -> list[admin_pb.RepeatDealCheck]:
    """Return the repeat-deal check of each of ``bots`` over ``matches``, by bot name."""
    return [
        admin_pb.RepeatDealCheck(
            bot=c.bot,
            deals=c.deals,
            first_score=c.first_score,
            later_score=c.later_score,
            gain=c.gain,
            p_value=c.p_value,
            flagged=c.flagged,
        )
        for c in repeat_deal_checks(matches, bots)
    ]


def pool_repeat_deal_rows(
    matches: Sequence[StoredMatch], ratings: Mapping[str, elo.Rating]
) -> list[admin_pb.RepeatDealCheck]:
    """Return the check of every bot with games in a rating pool, over the pool's rated games."""
    bots = [bot for bot, rating in ratings.items() if rating.games]
    return repeat_deal_rows([m for m in matches if m.rated], bots)


def live_ladder_message(ladder: LadderView) -> admin_pb.LiveLadder:
    """Return what anyone may know of a running ladder (``ListLive``): its game and counts,
    not its seed."""
    return admin_pb.LiveLadder(
        game=game_to_proto(ladder.game), started=ladder.started, finished=ladder.finished
    )


def ladder_message(ladder: LadderView) -> admin_pb.Ladder:
    """Return a running ladder's settings and counts."""
    return admin_pb.Ladder(
        game=game_to_proto(ladder.game),
        time_control=time_control_to_proto(ladder.time_control),
        fault_policy=fault_policy_to_proto(ladder.fault_policy),
        max_strikes=ladder.max_strikes,
        max_deals=ladder.max_deals,
        concurrency=ladder.concurrency,
        seed=ladder.seed,
        started=ladder.started,
        finished=ladder.finished,
        course=ladder.course,
    )


def progress_message(progress: Progress) -> admin_pb.TournamentProgress:
    """Return the progress of a tournament whose runner is live."""
    return admin_pb.TournamentProgress(
        total=progress.total,
        done=progress.done,
        running=progress.running,
        waiting=progress.waiting,
    )


BOT_STATE_TO_PROTO: Final[dict[BotState, admin_pb.BotState.ValueType]] = {
    BotState.ENABLED: admin_pb.BOT_STATE_ENABLED,
    BotState.DISABLED: admin_pb.BOT_STATE_DISABLED,
    BotState.DELETED: admin_pb.BOT_STATE_DELETED,
}


def bot_info(bot: StoredBot, connected: bool) -> admin_pb.BotInfo:
    """Return a stored bot as a ``BotInfo`` (never its token), ``connected`` from the lobby."""
    info = admin_pb.BotInfo(
        name=bot.name,
        state=BOT_STATE_TO_PROTO[bot.state],
        connected=connected,
        course=bot.course,
        owner=bot.owner,
        allow_people=bot.allow_people,
    )
    info.created.CopyFrom(_timestamp(bot.created))
    if bot.token_issued is not None:
        info.token_issued.CopyFrom(_timestamp(bot.token_issued))
    return info
