"""Tournaments: what to play and how (:class:`StoredTournament`), and where each one stands.

The schedule itself is derived from the row (``server/tournaments/lifecycle/schedule.py``);
which of its games are played is read from the matches (:func:`game_indexes`), so a restart
plays only the rest.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine, RowMapping
from sqlalchemy.exc import IntegrityError

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.match.seeds import check_seed
from domino_arena.server.store.live_views import LIVE_VIEW_PUBLIC, check_live_view
from domino_arena.server.store.tables import (
    COURSES,
    DEFAULT_COURSE,
    MATCHES,
    TOURNAMENTS,
    now,
    utc,
)

_FAULT_POLICIES: Final = sorted(policy.value for policy in FaultPolicy)
ENTRANT_POLICIES: Final = ("listed", "connected", "latest")
MAX_ROUNDS: Final = 1000
"""The most rounds a Swiss tournament may have."""
"""Who plays in a tournament (``StoredTournament.entrant_policy``)."""
FORMATS: Final = ("round-robin", "balanced", "gauntlet", "swiss", "knockout")
"""Which tables a tournament plays (``StoredTournament.format``; docs/tournaments.md: formats)."""


class DuplicateTournamentError(ValueError):
    """A tournament with that id exists already."""


class UnknownTournamentError(KeyError):
    """No tournament has that id."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""


class TournamentState(enum.Enum):
    """Where a tournament is in its life; only RUNNING tournaments start games."""

    CREATED = "created"
    RUNNING = "running"
    PAUSED = "paused"
    CANCELLED = "cancelled"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class StoredTournament:
    """One row of ``tournaments``: what to play and how, and where it stands.

    Raises:
        ValueError: a field out of its range (the message names the field and the rule).
    """

    id: str
    name: str
    game: str
    options: dict[str, Any]
    entrants: tuple[str, ...]
    games_per_pairing: int
    deals: str
    """A :class:`~domino_arena.server.tournaments.scheduler.DealMode` value: duplicate, spread,
    fresh."""
    time_control_ms: tuple[int, int, int]
    """Per-move time, bank and network grace, in milliseconds."""
    fault_policy: str
    """A :class:`~domino_arena.sdk.match.results.FaultPolicy` value (docs/referee.md: faults)."""
    max_strikes: int
    concurrency: int
    """How many of its games may run at once."""
    wait_seconds: float
    """How long a game waits for absent bots before it is played without them."""
    seed: int
    rated: bool
    state: TournamentState
    created: dt.datetime
    updated: dt.datetime
    max_deals: int | None = None
    """Deals after which a game still going is ended and adjudicated by its scores (referee
    policy, not a rule); None: the referee's default."""
    seed_commitment: str = ""
    """SHA-256 (hex) of the master seed and salt, published when the tournament is created;
    empty for tournaments older than provable deals."""
    seed_salt: str = ""
    """Hex; revealed with the master seed once the tournament is over."""
    deal_scheme: int = 1
    """How deal seeds are derived from the master seed: 1 before provable deals, 2 since
    (server/play/provable.py)."""
    kind: str = "round_robin"
    """``round_robin``, or ``compare`` (a paired comparison of two bots; ``plan`` says how)."""
    plan: dict[str, Any] | None = None
    """A comparison's plan (candidate, baseline, opponents, SPRT bounds, cap); None otherwise."""
    verdict: dict[str, Any] | None = None
    """A comparison's stored verdict once it has one."""
    course: str = DEFAULT_COURSE
    """The course it belongs to (docs/courses.md)."""
    entrant_policy: str = "listed"
    """Who plays: ``listed`` (``entrants``), ``connected`` (the course's bots connected at the
    start, with the listed ones) or ``latest`` (each owner's latest bot at the start); the
    runner fills ``entrants`` when it starts a tournament of the other two."""
    start_at: dt.datetime | None = None
    """When the tournament starts by itself (UTC); None: when it is told to."""
    regrade_of: str | None = None
    """A regrade: the id of the tournament it replays from its stored seeds."""
    replaced: tuple[tuple[str, str], ...] = ()
    """A regrade: (bot of the original, its new version) pairs."""
    owners: dict[str, str] | None = None
    """Entrant -> owner, as the seating rule saw them (None: no owner known, no rule)."""
    allow_same_owner_tables: bool = False
    """Two bots of one owner may share a 3-4 seat free-for-all table."""
    allow_same_owner_partners: bool = False
    """Two bots of one owner may be partners."""
    baselines: tuple[tuple[str, float], ...] = ()
    """Frozen baselines seated: (house bot name, fixed rating); their entrants are
    ``house:NAME``."""
    live_view: str | None = None
    """Who may watch its games while they run (:data:`.live_views.LIVE_VIEWS`); None: its
    course's (:func:`live_view`)."""
    version_pins: dict[str, int] | None = None
    """Bot -> the hosted version it plays: the organizer's pins, then the versions frozen at
    its start (server/store/hosted_settings.py); None: none."""
    hosting_limits: dict[str, int] | None = None
    """The sandbox limits it sets for its hosted bots (server/store/hosted.py); None: its
    course's."""
    format: str = "round-robin"
    """Which tables it plays (:data:`FORMATS`): every table of its entrants, a balanced design
    or a gauntlet against its baselines (server/tournaments/lifecycle/schedule.py)."""
    games_per_entrant: int | None = None
    """The games each entrant plays in a balanced or gauntlet tournament; None: a round
    robin's (every table)."""
    rounds: int | None = None
    """A Swiss tournament's rounds (each stored before it plays: :mod:`.tournament_rounds`)."""
    knockout: dict[str, int] | None = None
    """A knockout tournament's ties: {"sets": at least, "max_sets": at most} duplicate sets
    (server/tournaments/knockout.py)."""
    seeding: tuple[str, ...] = ()
    """The entrants best first: a knockout's seeds, a Swiss's first order (empty: the
    entrants' order)."""

    @property
    def seed_revealed(self) -> bool:
        """Whether the master seed and salt may be shown (admin API, web face, CLI): only once
        the tournament plays no more games, so no bot learns a deal before its game ends."""
        return self.state in (TournamentState.FINISHED, TournamentState.CANCELLED)

    def __post_init__(self) -> None:
        if not 1 <= len(self.id) <= 64:
            raise ValueError(f"id: expected 1-64 characters, got {self.id!r}")
        if not 1 <= len(self.name) <= 200:
            raise ValueError(f"name: expected 1-200 characters, got {len(self.name)}")
        if not 1 <= len(self.deals) <= 16:
            raise ValueError(f"deals: expected 1-16 characters, got {self.deals!r}")
        if not 1 <= len(self.game) <= 32:
            raise ValueError(f"game: expected 1-32 characters, got {self.game!r}")
        for index, entrant in enumerate(self.entrants):
            if entrant in self.entrants[:index]:
                raise ValueError(f"entrants: {entrant!r} is listed twice; expected each once")
        for field, value, low in (
            ("games_per_pairing", self.games_per_pairing, 1),
            ("max_strikes", self.max_strikes, 1),
            ("concurrency", self.concurrency, 1),
        ):
            if value < low:
                raise ValueError(f"{field}: expected at least {low}, got {value}")
        if len(self.time_control_ms) != 3 or min(self.time_control_ms) < 0:
            raise ValueError(
                "time_control_ms: expected (move, bank, grace) milliseconds, none negative, "
                f"got {self.time_control_ms!r}"
            )
        if self.fault_policy not in _FAULT_POLICIES:
            raise ValueError(
                f"fault_policy: expected one of {_FAULT_POLICIES}, got {self.fault_policy!r}"
            )
        if not self.wait_seconds >= 0:
            raise ValueError(f"wait_seconds: expected at least 0, got {self.wait_seconds}")
        check_seed(self.seed)
        if self.max_deals is not None and self.max_deals < 1:
            raise ValueError(f"max_deals: expected at least 1 (or none), got {self.max_deals}")
        if self.entrant_policy not in ENTRANT_POLICIES:
            raise ValueError(
                f"entrant_policy: expected one of {ENTRANT_POLICIES}, got {self.entrant_policy!r}"
            )
        if self.kind not in ("round_robin", "compare"):
            raise ValueError(f"kind: expected round_robin or compare, got {self.kind!r}")
        if len(self.seed_commitment) > 64 or len(self.seed_salt) > 64:
            raise ValueError("seed_commitment, seed_salt: expected at most 64 hex digits")
        if self.live_view is not None:
            check_live_view(self.live_view)
        if self.format not in FORMATS:
            raise ValueError(f"format: expected one of {', '.join(FORMATS)}, got {self.format!r}")
        if self.games_per_entrant is not None and self.games_per_entrant < 1:
            raise ValueError(
                f"games_per_entrant: expected at least 1 (or none), got {self.games_per_entrant}"
            )
        if self.rounds is not None and not 1 <= self.rounds <= MAX_ROUNDS:
            raise ValueError(f"rounds: expected 1-{MAX_ROUNDS} (or none), got {self.rounds}")
        if (self.format == "swiss") != (self.rounds is not None):
            raise ValueError("rounds: a Swiss tournament has a number of rounds, no other one")
        if (self.format == "knockout") != (self.knockout is not None):
            raise ValueError("knockout: a knockout tournament has its sets per tie, no other one")
        if self.seeding and sorted(self.seeding) != sorted(self.entrants):
            raise ValueError("seeding: expected the entrants, each once, best first")
        for bot, number in (self.version_pins or {}).items():
            if number < 1:
                raise ValueError(f"version_pins: {bot}: expected a version number, got {number}")


def add_tournament(engine: Engine, tournament: StoredTournament) -> None:
    """Store a new tournament.

    Raises:
        DuplicateTournamentError: a tournament with its id exists.
    """
    row = {
        "id": tournament.id,
        "name": tournament.name,
        "game": tournament.game,
        "options": tournament.options,
        "entrants": list(tournament.entrants),
        "games_per_pairing": tournament.games_per_pairing,
        "deals": tournament.deals,
        "move_ms": tournament.time_control_ms[0],
        "bank_ms": tournament.time_control_ms[1],
        "grace_ms": tournament.time_control_ms[2],
        "fault_policy": tournament.fault_policy,
        "max_strikes": tournament.max_strikes,
        "concurrency": tournament.concurrency,
        "wait_seconds": tournament.wait_seconds,
        "seed": tournament.seed,
        "rated": tournament.rated,
        "state": tournament.state.value,
        "created": tournament.created,
        "updated": tournament.updated,
        "max_deals": tournament.max_deals,
        "seed_commitment": tournament.seed_commitment,
        "seed_salt": tournament.seed_salt,
        "deal_scheme": tournament.deal_scheme,
        "kind": tournament.kind,
        "plan": tournament.plan,
        "verdict": tournament.verdict,
        "course": tournament.course,
        "entrant_policy": tournament.entrant_policy,
        "start_at": tournament.start_at,
        "regrade_of": tournament.regrade_of,
        "replaced": [{"bot": bot, "by": by} for bot, by in tournament.replaced] or None,
        "owners": tournament.owners,
        "allow_same_owner_tables": tournament.allow_same_owner_tables,
        "allow_same_owner_partners": tournament.allow_same_owner_partners,
        "baselines": [{"bot": bot, "rating": rating} for bot, rating in tournament.baselines]
        or None,
        "live_view": tournament.live_view,
        "version_pins": _json_or_none(tournament.version_pins),
        "hosting_limits": _json_or_none(tournament.hosting_limits),
        "format": tournament.format,
        "games_per_entrant": tournament.games_per_entrant,
        "rounds": tournament.rounds,
        "knockout": _json_or_none(tournament.knockout),
        "seeding": list(tournament.seeding) or None,
    }
    try:
        with engine.begin() as connection:
            connection.execute(TOURNAMENTS.insert().values(row))
    except IntegrityError:
        raise DuplicateTournamentError(
            f"a tournament with id '{tournament.id}' exists already"
        ) from None


def tournament(engine: Engine, tournament_id: str) -> StoredTournament | None:
    """Return the tournament ``tournament_id``, or None."""
    with engine.connect() as connection:
        row = connection.execute(
            sa.select(TOURNAMENTS).where(TOURNAMENTS.c.id == tournament_id)
        ).one_or_none()
    return None if row is None else _stored_tournament(row._mapping)


def tournaments(
    engine: Engine,
    states: Collection[TournamentState] | None = None,
    *,
    course: str | None = None,
) -> list[StoredTournament]:
    """Return the tournaments (only those in ``states``, of ``course``, if given), oldest
    first."""
    query = sa.select(TOURNAMENTS).order_by(TOURNAMENTS.c.created, TOURNAMENTS.c.id)
    if course is not None:
        query = query.where(TOURNAMENTS.c.course == course)
    if states is not None:
        query = query.where(TOURNAMENTS.c.state.in_([state.value for state in states]))
    with engine.connect() as connection:
        rows = connection.execute(query).all()
    return [_stored_tournament(row._mapping) for row in rows]


def set_state(engine: Engine, tournament_id: str, state: TournamentState) -> None:
    """Set the state of the tournament ``tournament_id`` (and its ``updated`` time).

    Raises:
        UnknownTournamentError: no tournament has that id.
    """
    with engine.begin() as connection:
        result = connection.execute(
            TOURNAMENTS.update()
            .where(TOURNAMENTS.c.id == tournament_id)
            .values(state=state.value, updated=now())
        )
        if result.rowcount == 0:
            raise UnknownTournamentError(f"no tournament has id '{tournament_id}'")


def set_entrants(
    engine: Engine,
    tournament_id: str,
    entrants: tuple[str, ...],
    owners: dict[str, str] | None,
) -> StoredTournament:
    """Write the entrants (and their owners) chosen when a tournament of entrant policy
    ``connected`` or ``latest`` starts; only while it is CREATED (its schedule follows from
    them, so they never change once a game may have been played). A seeding is dropped: the
    entrants chosen are seeded in their order. Returns the new row.

    Raises:
        UnknownTournamentError: no tournament has that id.
        ValueError: it is not CREATED any more, or an entrant is listed twice.
    """
    if len(set(entrants)) != len(entrants):
        raise ValueError("entrants: a bot is listed twice; expected each once")
    with engine.begin() as connection:
        result = connection.execute(
            TOURNAMENTS.update()
            .where(
                TOURNAMENTS.c.id == tournament_id,
                TOURNAMENTS.c.state == TournamentState.CREATED.value,
            )
            .values(entrants=list(entrants), owners=owners, seeding=None, updated=now())
        )
        if result.rowcount == 0:
            exists = connection.execute(
                sa.select(TOURNAMENTS.c.state).where(TOURNAMENTS.c.id == tournament_id)
            ).scalar_one_or_none()
            if exists is None:
                raise UnknownTournamentError(f"no tournament has id '{tournament_id}'")
            raise ValueError(
                f"tournament {tournament_id} is {exists}: its entrants are set once, when it starts"
            )
    row = tournament(engine, tournament_id)
    assert row is not None
    return row


def set_verdict(engine: Engine, tournament_id: str, verdict: dict[str, Any]) -> None:
    """Store a comparison's verdict (and its ``updated`` time).

    Raises:
        UnknownTournamentError: no tournament has that id.
    """
    with engine.begin() as connection:
        result = connection.execute(
            TOURNAMENTS.update()
            .where(TOURNAMENTS.c.id == tournament_id)
            .values(verdict=verdict, updated=now())
        )
        if result.rowcount == 0:
            raise UnknownTournamentError(f"no tournament has id '{tournament_id}'")


def game_indexes(engine: Engine, tournament_id: str) -> set[int]:
    """Return the schedule positions of the tournament's games that are stored."""
    with engine.connect() as connection:
        return set(
            connection.execute(
                sa.select(MATCHES.c.game_index).where(
                    MATCHES.c.tournament_id == tournament_id,
                    MATCHES.c.game_index.is_not(None),
                )
            ).scalars()
        )


def game_count(engine: Engine, tournament_id: str) -> int:
    """Return how many of the tournament's games are stored (an index count, no row read)."""
    with engine.connect() as connection:
        count = connection.execute(
            sa.select(sa.func.count())
            .select_from(MATCHES)
            .where(MATCHES.c.tournament_id == tournament_id)
        ).scalar_one()
    return int(count)


def live_view(engine: Engine, course: str, tournament_id: str | None) -> str:
    """The live view of a match of ``course`` (and of the tournament ``tournament_id``, if
    given): the tournament's if it has one, else the course's; ``public`` for a course that
    does not exist (an unknown tournament: the course's). One query on two primary keys, cheap
    enough for every match start (docs/courses.md: live view)."""
    view: sa.ColumnElement[Any] = COURSES.c.live_view
    if tournament_id is not None:
        own = sa.select(TOURNAMENTS.c.live_view).where(TOURNAMENTS.c.id == tournament_id)
        view = sa.func.coalesce(own.scalar_subquery(), COURSES.c.live_view)
    with engine.connect() as connection:
        found = connection.execute(
            sa.select(view).where(COURSES.c.name == course)
        ).scalar_one_or_none()
    return LIVE_VIEW_PUBLIC if found is None else str(found)


def _stored_tournament(row: RowMapping) -> StoredTournament:
    return StoredTournament(
        id=row["id"],
        name=row["name"],
        game=row["game"],
        options=dict(row["options"]),
        entrants=tuple(row["entrants"]),
        games_per_pairing=row["games_per_pairing"],
        deals=str(row["deals"]),
        time_control_ms=(row["move_ms"], row["bank_ms"], row["grace_ms"]),
        fault_policy=row["fault_policy"],
        max_strikes=row["max_strikes"],
        concurrency=row["concurrency"],
        wait_seconds=float(row["wait_seconds"]),
        seed=int(row["seed"]),
        rated=bool(row["rated"]),
        state=TournamentState(row["state"]),
        created=utc(row["created"]),
        updated=utc(row["updated"]),
        max_deals=row["max_deals"],
        seed_commitment=row["seed_commitment"],
        seed_salt=row["seed_salt"],
        deal_scheme=int(row["deal_scheme"]),
        kind=row["kind"],
        plan=None if row["plan"] is None else dict(row["plan"]),
        verdict=None if row["verdict"] is None else dict(row["verdict"]),
        course=row["course"],
        entrant_policy=row["entrant_policy"],
        start_at=None if row["start_at"] is None else utc(row["start_at"]),
        regrade_of=row["regrade_of"],
        replaced=tuple((r["bot"], r["by"]) for r in row["replaced"] or ()),
        owners=None if row["owners"] is None else dict(row["owners"]),
        allow_same_owner_tables=bool(row["allow_same_owner_tables"]),
        allow_same_owner_partners=bool(row["allow_same_owner_partners"]),
        baselines=tuple((b["bot"], float(b["rating"])) for b in row["baselines"] or ()),
        live_view=row["live_view"],
        version_pins=_mapping_or_none(row["version_pins"]),
        hosting_limits=_mapping_or_none(row["hosting_limits"]),
        format=row["format"],
        games_per_entrant=row["games_per_entrant"],
        rounds=row["rounds"],
        knockout=_mapping_or_none(row["knockout"]),
        seeding=tuple(row["seeding"] or ()),
    )


def _json_or_none(mapping: dict[str, int] | None) -> str | None:
    """The text of a JSON column of ints ({} or None: NULL)."""
    return json.dumps(mapping, sort_keys=True) if mapping else None


def _mapping_or_none(text: str | None) -> dict[str, int] | None:
    return {str(k): int(v) for k, v in json.loads(text).items()} if text else None
