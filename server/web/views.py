"""What each page shows, gathered from the storage as JSON-ready data (blocking calls).

Each function here is one page's data: the HTML page renders it and ``/api/...`` returns it
as it is, so the two can never disagree. They block on the database, so the application runs
them in a worker thread. The numbers are the ladder's own: standings are
:func:`domino_arena.server.ladder.elo.standings` of the stored ratings, a tournament's table is
:func:`domino_arena.server.ladder.results.entrant_results`, as the admin API shows them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Final, Protocol

from sqlalchemy.engine import Engine

from domino_arena.sdk.match.records import MatchRecord, RecordError, RecordFault, parse_record
from domino_arena.sdk.rules import GAMES, RulesError
from domino_arena.server.ladder import elo
from domino_arena.server.ladder.batch import point_table
from domino_arena.server.ladder.kept import Kept, schedule_total
from domino_arena.server.ladder.official import performance_data
from domino_arena.server.ladder.ratings_store import rated_game_of
from domino_arena.server.ladder.results import counted_games, entrant_results
from domino_arena.server.stats.precision import of_tournament
from domino_arena.server.stats.regrades import regrade_summary
from domino_arena.server.store.bots import BotCheck, IssuedToken, StoredBot
from domino_arena.server.store.courses import StoredCourse, StoredInvite
from domino_arena.server.store.matches import StoredMatch, sides_of
from domino_arena.server.store.owners import StoredOwner
from domino_arena.server.store.tables import DEFAULT_COURSE
from domino_arena.server.store.tournament_rounds import StoredRound
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.rounds import ADAPTIVE_FORMATS
from domino_arena.server.web.charts import rating_chart, thinned
from domino_arena.server.web.deals import by_deal, crosstable, duplicate_sets, result_text
from domino_arena.server.web.params import DEFAULT_PER_PAGE, Paging, bad_request, not_found
from domino_arena.server.web.round_views import rounds_view
from domino_arena.server.web.table import draw_table, hand_starts, replay_states
from domino_arena.server.web.timeline import timeline

BOT_MATCHES: Final = 20
"""Recent matches on a bot's page (its faults are read from these)."""
HEAD_TO_HEAD_MATCHES: Final = 1_000
"""A bot's head-to-head table counts its latest this many matches (the rated ones among them)."""
RECORDS_KEPT: Final = 32
"""Parsed records kept in memory for the replay viewer's next steps."""
TOURNAMENT_MATCHES_MAX: Final = 100_000
"""The most games a tournament's tables are computed from (a round robin of 100 bots has 4,950
pairings)."""
FIRST_PAGE: Final = Paging(1, DEFAULT_PER_PAGE)
TABLES_KEPT: Final = 8
"""Tournaments whose computed tables each storage keeps in memory (:func:`_tables`)."""
HEAD_TO_HEAD_KEPT: Final = 256
"""Bots whose head-to-head table each storage keeps in memory (:func:`_head_to_head`)."""

TournamentTotal = Callable[[StoredTournament], int]
"""The number of games in a tournament's schedule (play's ``len(schedule_of(t))``); given by
whoever builds the app, since the web face does not import the scheduler."""


class WebStorage(Protocol):
    """The storage queries the web face makes (``RatedStorage`` has them all; all blocking)."""

    def bot_names(self) -> list[str]: ...
    def match(self, match_id: str) -> StoredMatch | None: ...
    def matches(
        self,
        limit: int = 100,
        *,
        tournament_id: str | None = None,
        bot: str | None = None,
        game: str | None = None,
        offset: int = 0,
        records: bool = True,
        course: str | None = None,
    ) -> list[StoredMatch]: ...
    def ratings(self, pool: str) -> dict[str, elo.Rating]: ...
    def rated_games(self, pool: str) -> list[elo.RatedGame]: ...
    def rated_games_after(self, pool: str, seq: int) -> list[tuple[int, elo.RatedGame]]: ...
    def pools(self) -> list[str]: ...
    def tournament(self, tournament_id: str) -> StoredTournament | None: ...
    def tournaments(
        self, states: Collection[TournamentState] | None = None, *, course: str | None = None
    ) -> list[StoredTournament]: ...
    def tournament_game_count(self, tournament_id: str) -> int: ...
    def tournament_rounds(self, tournament_id: str) -> list[StoredRound]: ...
    def rating_history(self, pool: str, bot: str) -> list[tuple[int, float]]: ...
    # Courses (server/web/courses.py, forms.py); ``engine`` for the course-scoped reads of
    # server/web/scoped.py. Registration and an owner's state (owner_switch.py) are its writes.
    @property
    def engine(self) -> Engine: ...
    def courses(self) -> list[StoredCourse]: ...
    def course(self, name: str) -> StoredCourse | None: ...
    def bots(
        self, *, include_deleted: bool = False, course: str | None = None
    ) -> list[StoredBot]: ...
    def bot(self, name: str) -> StoredBot | None: ...
    def check_bot(self, name: str, token: str) -> BotCheck: ...
    def organizer_course(self, token: str) -> str | None: ...
    def invites(self, course: str) -> list[StoredInvite]: ...
    def register_bot(self, code: str, name: str, owner: str) -> IssuedToken: ...
    def register_with_owner_token(self, token: str, name: str) -> IssuedToken: ...
    def owner(self, course: str, name: str) -> StoredOwner | None: ...
    def owner_of_token(self, token: str) -> StoredOwner | None: ...
    def owners(self, course: str) -> list[StoredOwner]: ...
    def set_owner_enabled(self, course: str, name: str, enabled: bool) -> StoredOwner: ...


# -- pieces shared by several pages ---------------------------------------------------------


def match_summary(match: StoredMatch) -> dict[str, Any]:
    """A match as a list shows it: everything but its record."""
    return {
        "id": match.id,
        "game": match.game,
        "options": match.options,
        "seats": list(match.seats),
        "sides": list(sides_of(match)),
        "scores": list(match.scores),
        "winner": match.winner,
        "result": result_text(match),
        "termination": match.termination,
        "fault": match.fault,
        "faulted_seat": match.faulted_seat,
        "faults": list(match.faults or (0,) * len(match.seats)),
        "detail": match.detail,
        "rated": match.rated,
        "rating_model": match.rating_model,
        "created": match.created.isoformat(),
        "tournament_id": match.tournament_id,
        "game_index": match.game_index,
        "course": match.course,
    }


def fault_row(fault: RecordFault) -> dict[str, Any]:
    """A fault of a record: who, at which step, what kind, why, and what it cost."""
    return {
        "seat": fault.seat,
        "step": fault.step,
        "kind": fault.kind.value,
        "label": fault.kind.label,
        "reason": fault.reason,
        "strikes": fault.strikes,
        "forfeited": fault.forfeited,
    }


def _game_name(game: str | None) -> str | None:
    if game is not None and game not in GAMES:
        raise bad_request(f"game: unknown game {game!r}; expected one of {', '.join(GAMES)}")
    return game


def interval(rating: elo.Rating) -> list[float] | None:
    """A rating's 95% interval as [low, high]; None before its first game."""
    if math.isinf(rating.uncertainty):
        return None
    return [rating.rating - rating.uncertainty, rating.rating + rating.uncertainty]


@functools.lru_cache(maxsize=RECORDS_KEPT)
def _parsed(text: str) -> MatchRecord:
    """A record's text parsed (kept: a viewer stepping through a match asks for it each step,
    and a stored match's record never changes)."""
    return parse_record(text)


def _record(match: StoredMatch) -> tuple[MatchRecord | None, str | None]:
    """The match's parsed record, or None and why there is none to replay."""
    if match.record is None:
        return None, "the referee stored no record of this match"
    try:
        return _parsed(match.record), None
    except RecordError as exc:
        return None, f"the stored record cannot be read: {exc}"


# -- the pages ------------------------------------------------------------------------------


def tournament_summary(
    storage: WebStorage, t: StoredTournament, total_of: TournamentTotal | None
) -> dict[str, Any]:
    """A tournament as a list shows it: its settings, state and progress."""
    done = storage.tournament_game_count(t.id)
    # A Swiss's or knockout's games follow from its results: no total before it ends.
    total: int | None = None
    if total_of is not None and t.format not in ADAPTIVE_FORMATS:
        total = schedule_total(t, total_of)
    return {
        "id": t.id,
        "name": t.name,
        "game": t.game,
        "options": t.options,
        "state": t.state.value,
        "entrants": list(t.entrants),
        "rated": t.rated,
        "created": t.created.isoformat(),
        "progress": {"done": done, "total": total},
        "course": t.course,
    }


@dataclass(frozen=True, slots=True)
class _Tables:
    """What a tournament's page computes from all of its stored games."""

    results: list[dict[str, Any]]
    crosstable: list[dict[str, Any]]
    deals: list[list[StoredMatch]]
    """The games of each deal, by deal id (:func:`.deals.by_deal`): a page of them is drawn as
    duplicate sets."""
    rounds: dict[str, Any]
    """A Swiss's rounds or a knockout's bracket (:func:`.round_views.rounds_view`)."""
    carried: tuple[int, ...] = ()
    """A regrade's games carried over from its original, by game index."""


_TABLES: Final = Kept[_Tables](TABLES_KEPT)
_HEAD_TO_HEAD: Final = Kept[list[dict[str, Any]]](HEAD_TO_HEAD_KEPT)


def _tables(
    storage: WebStorage, t: StoredTournament, stored: int, rounds: list[StoredRound]
) -> _Tables:
    """The tournament's results, crosstable and duplicate sets (and a Swiss's or knockout's
    ``rounds``), computed from every stored game.

    They need all of its games (the performance column is their fit), which at 10,000
    games takes far longer than a page may, so they are kept (:class:`Kept`), stamped with the
    tournament's stored-game count and stored rounds: the same counts mean the same games and
    rounds.
    """

    def compute() -> _Tables:
        matches = storage.matches(
            min(max(stored, 1), TOURNAMENT_MATCHES_MAX), tournament_id=t.id, records=False
        )
        games = counted_games(matches, t.baselines)
        results = [
            {
                "bot": row.bot,
                "games": row.games,
                "wins": row.wins,
                "draws": row.draws,
                "losses": row.losses,
                "faults": row.faults,
                "points": row.points,
                "performance": performance_data(row.performance),
            }
            for row in entrant_results(t.entrants, games, point_table(matches, t.baselines))
        ]
        carried = tuple(m.game_index or 0 for m in matches if m.carried_from)
        shown = rounds_view(t, rounds, matches)
        return _Tables(results, crosstable(t.entrants, games), by_deal(matches), shown, carried)

    return _TABLES.get(storage, t.id, (stored, len(rounds)), compute)


def tournament(
    storage: WebStorage,
    tournament_id: str,
    total_of: TournamentTotal | None,
    paging: Paging = FIRST_PAGE,
    deals_page: int = 1,
) -> dict[str, Any]:
    """A tournament: its settings and progress, its results table, crosstable, one page of its
    duplicate sets (``deals_page``, ``paging.per_page`` deals) and one page of its games
    (``paging``), newest first."""
    t = storage.tournament(tournament_id)
    if t is None:
        raise not_found(f"no tournament has id {tournament_id!r}")
    summary = tournament_summary(storage, t, total_of)
    rounds = storage.tournament_rounds(t.id) if t.format in ADAPTIVE_FORMATS else []
    tables = _tables(storage, t, summary["progress"]["done"], rounds)
    found = storage.matches(
        paging.per_page + 1, tournament_id=t.id, offset=paging.offset, records=False
    )
    deals_from = (deals_page - 1) * paging.per_page
    return {
        **summary,
        "games_per_pairing": t.games_per_pairing,
        "deals": t.deals,
        "time_control_ms": list(t.time_control_ms),
        "fault_policy": t.fault_policy,
        "max_strikes": t.max_strikes,
        **_seed_fields(t),
        "results": tables.results,
        "crosstable": tables.crosstable,
        "duplicates": duplicate_sets(
            tables.deals[deals_from : deals_from + paging.per_page], t.baselines
        ),
        "deals_page": deals_page,
        "deals_total": len(tables.deals),
        "deals_has_next": deals_from + paging.per_page < len(tables.deals),
        "page": paging.page,
        "per_page": paging.per_page,
        "has_next": len(found) > paging.per_page,
        "matches": [match_summary(m) for m in found[: paging.per_page]],
        "kind": t.kind,
        "format": t.format,
        "rounds_planned": t.rounds,
        **tables.rounds,
        "comparison": None if t.plan is None else {**t.plan, **(t.verdict or {})},
        "regrade": t.regrade_of
        and regrade_summary(t, storage.tournament(t.regrade_of), sorted(tables.carried)),
        "precision": (precision := of_tournament(t)) and precision.as_json(),
    }


def _seed_fields(t: StoredTournament) -> dict[str, Any]:
    """The commitment always; the master seed and salt only once the tournament is over
    (provable deals: a bot must not learn a deal before its game ends). None until then."""
    shown = t.seed_revealed
    return {
        "seed_commitment": t.seed_commitment,
        "deal_scheme": t.deal_scheme,
        "seed": t.seed if shown else None,
        "seed_salt": t.seed_salt if shown else None,
    }


def faults_of(bot: str, match: StoredMatch) -> list[dict[str, Any]]:
    """The faults charged to ``bot`` in ``match``, with their reasons (from the record)."""
    seats = [seat for seat, name in enumerate(match.seats) if name == bot]
    record, _ = _record(match)
    if record is not None:
        return [{"match_id": match.id, **fault_row(f)} for f in record.faults if f.seat in seats]
    if match.faulted_seat in seats and match.fault is not None:
        return [
            {
                "match_id": match.id,
                "seat": match.faulted_seat,
                "step": None,
                "kind": match.fault,
                "label": match.fault.replace("_", " "),
                "reason": match.detail,
                "strikes": None,
                "forfeited": match.termination == "forfeit",
            }
        ]
    return []


def charged_to(bot: str, match: StoredMatch) -> bool:
    """Whether ``match`` charged ``bot`` a fault (from the row: no record read)."""
    seats = [seat for seat, name in enumerate(match.seats) if name == bot]
    return match.faulted_seat in seats or any(match.faults[s] for s in seats if match.faults)


def with_record(storage: WebStorage, match: StoredMatch) -> StoredMatch:
    """``match`` with its record (read for the faults' reasons)."""
    return storage.match(match.id) or match


def _head_to_head(storage: WebStorage, name: str) -> list[dict[str, Any]]:
    """``name``'s record against each opponent per game, over the rated games among its latest
    :data:`HEAD_TO_HEAD_MATCHES` matches. Kept (:class:`Kept`) stamped with its newest
    match's id: reading a thousand rows takes longer than a page may, and until the bot plays
    again they are the same rows."""
    rated_by_pool: dict[str, list[elo.RatedGame]] = {}
    for m in storage.matches(HEAD_TO_HEAD_MATCHES, bot=name, records=False):
        if m.moves_ratings:
            rated_by_pool.setdefault(m.game, []).append(rated_game_of(m))
    return [
        {
            "game": pool,
            "opponent": opponent,
            "wins": record.wins,
            "draws": record.draws,
            "losses": record.losses,
        }
        for pool, games in sorted(rated_by_pool.items())
        for (first, opponent), record in sorted(elo.head_to_head(games).items())
        if first == name
    ]


def bot(storage: WebStorage, name: str) -> dict[str, Any]:
    """A bot: its recent matches, its head-to-head records per game (over its latest
    :data:`HEAD_TO_HEAD_MATCHES` matches) and the faults of its recent matches."""
    recent = storage.matches(BOT_MATCHES, bot=name, records=False)
    if not recent and name not in storage.bot_names():
        raise not_found(f"no bot is called {name!r}")
    newest = recent[0].id if recent else None
    head_to_head = _HEAD_TO_HEAD.get(
        storage, name, newest, functools.partial(_head_to_head, storage, name)
    )
    ratings = {pool: storage.ratings(pool).get(name) for pool in storage.pools()}
    return {
        "bot": name,
        "ratings": [
            {"game": pool, "rating": r.rating, "interval": interval(r), "games": r.games}
            for pool, r in ratings.items()
            if r is not None
        ],
        "rating_history": [
            rating_history(storage, pool, name) for pool, r in ratings.items() if r is not None
        ],
        "matches": [match_summary(m) for m in recent],
        "head_to_head": head_to_head,
        "faults": [
            fault
            for m in recent
            if charged_to(name, m)
            for fault in faults_of(name, with_record(storage, m))
        ],
    }


def rating_history(storage: WebStorage, pool: str, name: str) -> dict[str, Any]:
    """The bot's rating after each of its rated games in ``pool`` (at most
    :data:`~.charts.MAX_POINTS`, thinned evenly) and the chart of them."""
    ratings = [rating for _, rating in storage.rating_history(pool, name)]
    return {
        "game": pool,
        "games": len(ratings),
        "points": [{"game": n, "rating": r} for n, r in thinned(ratings)],
        "svg": rating_chart(ratings, label=f"{name} in {pool}", start=elo.INITIAL_RATING),
    }


def matches(
    storage: WebStorage,
    paging: Paging,
    *,
    bot: str | None,
    game: str | None,
    tournament_id: str | None,
    course: str | None = DEFAULT_COURSE,
) -> dict[str, Any]:
    """One page of ``course``'s stored matches (None: every course's), newest first,
    filtered by bot, game and tournament."""
    found = storage.matches(
        paging.per_page + 1,
        course=course,
        records=False,
        bot=bot,
        game=_game_name(game),
        tournament_id=tournament_id,
        offset=paging.offset,
    )
    return {
        "filters": {"bot": bot, "game": game, "tournament": tournament_id},
        "page": paging.page,
        "per_page": paging.per_page,
        "has_next": len(found) > paging.per_page,
        "matches": [match_summary(m) for m in found[: paging.per_page]],
    }


def match(storage: WebStorage, match_id: str, step: int | None) -> dict[str, Any]:
    """A match: its result, seats and faults, and its table after ``step`` steps of its record
    (the end when None), every hand face up."""
    found = storage.match(match_id)
    if found is None:
        raise not_found(f"no stored match has id {match_id!r}")
    record, why_not = _record(found)
    page: dict[str, Any] = {
        "match": match_summary(found),
        "replay": None,
        "no_replay": why_not,
        "faults": [],
    }
    if record is None:
        return page
    total = len(record.steps)
    at = total if step is None else step
    if not 0 <= at <= total:
        raise bad_request(f"step: expected 0 to {total} (the steps of this match), got {at}")
    try:
        state = replay_states(record, at)
    except RulesError as exc:
        page["no_replay"] = f"the stored record does not replay: {exc}"
        return page
    starts = hand_starts(record)
    last = record.steps[at - 1] if at else None
    page["replay"] = {
        "step": at,
        "total": total,
        "first": 0,
        "prev": max(at - 1, 0),
        "next": min(at + 1, total),
        "last": total,
        "hands": [{"hand": i, "step": s} for i, s in enumerate(starts, start=1)],
        "hand": sum(1 for s in starts if s <= at),
        "last_step": None
        if last is None
        else {
            "seat": last.seat,
            "action": str(last.action),
            "think_ms": last.think_ms,
            "substituted": last.substituted,
        },
        "table": draw_table(state),
        "timeline": timeline(total, starts, record.faults, at),
    }
    page["faults"] = [fault_row(f) for f in record.faults]
    return page
