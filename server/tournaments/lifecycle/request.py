"""A tournament request checked and turned into its row (:func:`new_tournament`), before
anything is stored: every field in range, the entrants known, the format sized (a round robin
too big for its limit refused with the balanced tournament to play instead), the master seed
committed to (docs/tournaments.md: creating and running a tournament, formats)."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Final

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.match.seeds import check_seed, random_seed
from domino_arena.sdk.rules import Game
from domino_arena.server.play import provable
from domino_arena.server.play.match_spec import DEFAULT_MAX_DEALS, DEFAULT_MAX_STRIKES
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.tables import DEFAULT_COURSE, HOUSE_PREFIX
from domino_arena.server.store.tournaments import (
    ENTRANT_POLICIES,
    StoredTournament,
    TournamentState,
)
from domino_arena.server.tournaments.lifecycle.schedule import (
    TournamentError,
    check_schedule,
    checked_format,
    checked_rounds,
)
from domino_arena.server.tournaments.rounds import ADAPTIVE_FORMATS
from domino_arena.server.tournaments.scheduler import DealMode

DEFAULT_CONCURRENCY: Final = 4
DEFAULT_WAIT_SECONDS: Final = 60.0


def new_tournament(
    *,
    name: str,
    game: Game,
    entrants: Sequence[str],
    known_bots: Collection[str],
    games_per_pairing: int = 1,
    deals: DealMode = DealMode.DUPLICATE,
    time_control: TimeControl,
    fault_policy: FaultPolicy,
    max_strikes: int = DEFAULT_MAX_STRIKES,
    max_deals: int = DEFAULT_MAX_DEALS,
    concurrency: int = DEFAULT_CONCURRENCY,
    wait_seconds: float = DEFAULT_WAIT_SECONDS,
    seed: int | None,
    rated: bool = True,
    tournament_id: str | None = None,
    course: str = DEFAULT_COURSE,
    owners: Mapping[str, str] | None = None,
    allow_same_owner_tables: bool = False,
    allow_same_owner_partners: bool = False,
    baselines: Sequence[tuple[str, float]] = (),
    entrant_policy: str = "listed",
    start_at: dt.datetime | None = None,
    format: str = "round-robin",
    games_per_entrant: int | None = None,
    rounds: int | None = None,
    knockout_sets: int | None = None,
    knockout_max_sets: int | None = None,
    seeding: Sequence[str] = (),
) -> StoredTournament:
    """Check a tournament request and return its row, in state CREATED (not stored yet).

    ``owners`` (bot -> owner, e.g. of the course's bots) is snapshotted for the entrants and,
    with the two ``allow`` flags, feeds the fair seating rule. ``baselines`` are house bots with
    their fixed ratings: each is seated as the entrant ``house:NAME`` after the listed ones.
    With an ``entrant_policy`` other than ``listed`` the entrants are chosen when it starts
    (``server/tournaments/lifecycle/start.py``), so too few listed ones is no error here.
    ``start_at`` (UTC, in the future) makes it start by itself then. ``format`` chooses its
    tables (docs/tournaments.md: formats): a balanced one needs ``games_per_entrant``, a
    gauntlet seats the listed entrants against the baselines (by default each combination of
    them once); a round robin over ``MAX_ROUND_ROBIN_GAMES`` is refused, naming the balanced
    tournament to play instead. A Swiss one plays ``rounds`` rounds (or as many as
    ``games_per_entrant`` takes); a knockout one's ties play ``knockout_sets`` duplicate sets,
    and more while level up to ``knockout_max_sets``. ``seeding`` orders the listed entrants
    best first (a knockout's seeds, a Swiss's first round; baselines after them).

    Raises:
        TournamentError: the request is impossible; the message names the field and the rule.
    """
    if not name.strip():
        raise TournamentError("name: must not be empty")
    if tournament_id is not None and not tournament_id.strip():
        raise TournamentError("tournament_id: must not be empty (or None for a new id)")
    entrants = tuple(entrants)
    twice = sorted(e for e, n in Counter(entrants).items() if n > 1)
    if twice:
        raise TournamentError(f"entrants: {', '.join(twice)} entered more than once")
    known = set(known_bots)
    unknown = [e for e in entrants if e not in known]
    if unknown:
        raise TournamentError(f"entrants: unknown bot(s) {', '.join(unknown)}")
    if entrant_policy not in ENTRANT_POLICIES:
        raise TournamentError(
            f"entrant_policy: expected one of {', '.join(ENTRANT_POLICIES)}, got {entrant_policy!r}"
        )
    house = [b for b, _ in baselines]
    twice = sorted(b for b, n in Counter(house).items() if n > 1)
    if twice or any(not b or ":" in b for b in house):
        raise TournamentError(
            f"baselines: expected distinct house bot names without ':', got {', '.join(house)}"
        )
    entrants += tuple(HOUSE_PREFIX + b for b in house)
    kept_owners = None if owners is None else {e: owners[e] for e in entrants if owners.get(e)}
    if start_at is not None:
        if start_at.tzinfo is None:
            raise TournamentError("start_at: expected a time with its time zone (UTC)")
        if start_at <= _now():
            raise TournamentError(
                f"start_at: {start_at:%Y-%m-%d %H:%M:%S} UTC is past; expected a future time"
            )
    seats = game.num_players
    if entrant_policy == "listed" and len(entrants) < seats:
        raise TournamentError(
            f"entrants: {game.describe()} needs at least {seats} entrants, got {len(entrants)}"
        )
    if games_per_pairing < 1:
        raise TournamentError(f"games_per_pairing: must be at least 1, got {games_per_pairing}")
    if concurrency < 1:
        raise TournamentError(f"concurrency: must be at least 1, got {concurrency}")
    if not (wait_seconds >= 0 and math.isfinite(wait_seconds)):
        raise TournamentError(
            f"wait_seconds: must be a finite number of seconds, 0 or more, got {wait_seconds}"
        )
    if max_strikes < 1:
        raise TournamentError(f"max_strikes: must be at least 1, got {max_strikes}")
    if max_deals < 1:
        raise TournamentError(f"max_deals: must be at least 1, got {max_deals}")
    if seed is not None:
        try:
            check_seed(seed)
        except ValueError as exc:
            raise TournamentError(str(exc)) from None
    games_per_entrant = checked_format(
        format,
        games_per_entrant,
        game=game,
        entrants=entrants,
        games_per_pairing=games_per_pairing,
        listed=entrant_policy == "listed",
    )
    swiss_rounds, knockout = checked_rounds(
        format,
        rounds=rounds,
        games_per_entrant=games_per_entrant,
        sets=knockout_sets,
        max_sets=knockout_max_sets,
        game=game,
        games_per_pairing=games_per_pairing,
    )
    seeded = tuple(seeding)
    if seeded:
        if format not in ADAPTIVE_FORMATS:
            raise TournamentError("seeding: only a Swiss or knockout tournament is seeded")
        if entrant_policy != "listed":
            raise TournamentError(
                "seeding: the entrants are chosen when it starts (entrant_policy "
                f"{entrant_policy}); they are seeded in that order"
            )
        if sorted(seeded) != sorted(e for e in entrants if not e.startswith(HOUSE_PREFIX)):
            raise TournamentError("seeding: expected every listed entrant once, best first")
        seeded += tuple(e for e in entrants if e.startswith(HOUSE_PREFIX))
    now = _now()
    seed = seed if seed is not None else random_seed()
    salt, commitment = provable.new_commitment(seed)
    try:
        t = StoredTournament(
            id=tournament_id if tournament_id is not None else uuid.uuid4().hex[:16],
            name=name.strip(),
            game=game.name,
            options=game.options(),
            entrants=entrants,
            games_per_pairing=games_per_pairing,
            deals=deals.value,
            time_control_ms=time_control.to_ms(),
            fault_policy=fault_policy.value,
            max_strikes=max_strikes,
            max_deals=max_deals,
            concurrency=concurrency,
            wait_seconds=float(wait_seconds),
            seed=seed,
            rated=rated,
            state=TournamentState.CREATED,
            created=now,
            updated=now,
            seed_commitment=commitment,
            seed_salt=salt,
            deal_scheme=provable.CURRENT_SCHEME,
            course=course,
            owners=kept_owners,
            allow_same_owner_tables=allow_same_owner_tables,
            allow_same_owner_partners=allow_same_owner_partners,
            baselines=tuple((b, float(r)) for b, r in baselines),
            entrant_policy=entrant_policy,
            start_at=start_at,
            format=format,
            games_per_entrant=games_per_entrant,
            rounds=swiss_rounds,
            knockout=knockout,
            seeding=seeded,
        )
    except ValueError as exc:  # the row's own checks (lengths of id and name)
        raise TournamentError(str(exc)) from None
    if entrant_policy == "listed":
        check_schedule(t)
    return t


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
