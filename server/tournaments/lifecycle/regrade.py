"""Regrading: replay a finished tournament against new versions of some of its bots.

A regrade is a new tournament (:func:`regrade_of`) with the original's seed, salt, commitment
and deal scheme, its settings, its owners and seating flags, and its entrants with each replaced
bot's new version in its place. Substituting in place keeps every table in its position, so game
``i`` of the regrade has the same deal, rotation and seats as game ``i`` of the original, the
new version sitting where the old one sat. Its runner (``TournamentRunner.run``) first copies
each stored game of the original that no replaced bot played (:func:`carry_over`: same game
index, seats, record text and result, ``carried_from`` the original's match id), then plays only
the rest, on the same deals. A game whose bots behave the same is therefore the same game, and
the grades of the bots not replaced do not move by luck.

With ``fresh_deals`` the regrade gets a master seed (salt and commitment) of its own instead:
the games it plays are dealt anew, since the original's deals are public once it is over (its
seed is revealed, its records are on the site) and a new version could be tuned to them. The
carried games keep the deals they were played on: their records name the original's seed.

A regrade is unrated, and so are its copies: its games (and the original's carried over) have
been rated already or are replays of them, and the live Elo ladder must not count them twice.
Grades (``GetGrades``) read a regrade's games like any tournament's, and count a carried game
once when its original is graded too (server/stats/grades.py).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Final, Protocol

from domino_arena.sdk.match.seeds import random_seed
from domino_arena.server.play import provable
from domino_arena.server.play.house import house_name
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.scheduler import ScheduledGame

LOG: Final = logging.getLogger("domino_arena.server")


class RegradeError(ValueError):
    """An impossible regrade; the message names the field and the rule."""


class CarryStorage(Protocol):
    """The storage calls of :func:`carry_over` (blocking)."""

    def matches(
        self,
        limit: int = 100,
        *,
        tournament_id: str | None = None,
        bot: str | None = None,
        game: str | None = None,
        offset: int = 0,
        records: bool = True,
    ) -> list[StoredMatch]: ...
    def tournament_game_indexes(self, tournament_id: str) -> set[int]: ...
    def save_match(self, match: StoredMatch) -> bool: ...


def regrade_of(
    original: StoredTournament,
    replacements: Mapping[str, str],
    *,
    course_bots: Mapping[str, str],
    name: str = "",
    tournament_id: str | None = None,
    fresh_deals: bool = False,
) -> StoredTournament:
    """Return the regrade of ``original`` (state CREATED, not stored yet).

    ``replacements``: bot of the original -> its new version, a bot of ``course_bots`` (the
    enabled bots of the original's course, name -> owner) that is not an entrant already and,
    when the old bot has an owner, has the same one: a regrade grades a new version of the same
    student's work, and the seating rule saw that owner. ``fresh_deals``: a new master seed
    for the games played again (module doc).

    Raises:
        RegradeError: the original is not a finished round robin, or a bad replacement.
    """
    if original.state is not TournamentState.FINISHED:
        raise RegradeError(
            f"tournament_id: tournament {original.id} is {original.state.value}; only a "
            "finished tournament can be regraded"
        )
    if original.kind != "round_robin":
        raise RegradeError(
            f"tournament_id: tournament {original.id} is a {original.kind}; only a round robin "
            "can be regraded"
        )
    if not replacements:
        raise RegradeError("replace: expected at least one bot and its new version")
    known = dict(course_bots)
    news = list(replacements.values())
    for old, new in replacements.items():
        if old not in original.entrants or house_name(old) is not None:
            raise RegradeError(
                f"replace: '{old[:80]}' is not a bot entrant of tournament {original.id}"
            )
        if new not in known:
            raise RegradeError(f"replace: unknown bot '{new[:80]}' (expected a bot of the course)")
        if new in original.entrants or news.count(new) > 1:
            raise RegradeError(
                f"replace: '{new}' is an entrant already; expected a bot not in the tournament"
            )
        owner = (original.owners or {}).get(old, "")
        if owner and known[new] != owner:
            raise RegradeError(
                f"replace: '{new}' belongs to {known[new] or 'no owner'!r}, not to {owner!r}, "
                f"the owner of '{old}'; expected a version of the same owner's bot"
            )
    entrants = tuple(replacements.get(e, e) for e in original.entrants)
    owners = original.owners
    if owners is not None:  # the old bot's owner: the seating, hence the schedule, is the same
        owners = {replacements.get(e, e): o for e, o in owners.items()}
    title = (name.strip() or f"{original.name} (regrade)")[:200]
    now = dt.datetime.now(dt.UTC)
    seed, salt, commitment = original.seed, original.seed_salt, original.seed_commitment
    scheme = original.deal_scheme
    if fresh_deals:
        seed, scheme = random_seed(), provable.CURRENT_SCHEME
        salt, commitment = provable.new_commitment(seed)
    return dataclasses.replace(
        original,
        id=tournament_id if tournament_id is not None else uuid.uuid4().hex[:16],
        name=title,
        entrants=entrants,
        owners=owners,
        rated=False,
        state=TournamentState.CREATED,
        created=now,
        updated=now,
        verdict=None,
        entrant_policy="listed",
        start_at=None,
        regrade_of=original.id,
        replaced=tuple(replacements.items()),
        # The original's hosted versions play again; a replacing bot's is frozen at the start.
        version_pins={b: n for b, n in (original.version_pins or {}).items() if b in entrants}
        or None,
        seed=seed,
        seed_salt=salt,
        seed_commitment=commitment,
        deal_scheme=scheme,
    )


def carry_over(
    storage: CarryStorage,
    t: StoredTournament,
    schedule: Sequence[ScheduledGame],
    match_id_of: Callable[[StoredTournament, int], str],
) -> int:
    """Copy into the regrade ``t`` every game of its original that no replaced bot played and
    that ``t`` has not stored yet; return how many were copied (blocking).

    A game is copied only if its seats are the regrade's seats for that index (always, unless
    the rows were tampered with); the rest are left for the runner to play.
    """
    if t.regrade_of is None:
        return 0
    replaced = {old for old, _ in t.replaced}
    stored = storage.tournament_game_indexes(t.id)
    seats_of = {g.index: g.seats for g in schedule}
    rows = storage.matches(len(schedule) + 1, tournament_id=t.regrade_of, records=True)
    copied = 0
    for row in sorted(rows, key=lambda r: r.game_index if r.game_index is not None else -1):
        index = row.game_index
        if index is None or index in stored or replaced.intersection(row.seats):
            continue
        if seats_of.get(index) != row.seats:
            LOG.warning(
                "regrade %s: game %d of %s has other seats; played again", t.id, index, row.id
            )
            continue
        copy = dataclasses.replace(
            row,
            id=match_id_of(t, index),
            tournament_id=t.id,
            carried_from=row.id,
            rated=False,
            rating_model="",
            course=t.course,
        )
        if storage.save_match(copy):
            copied += 1
    return copied
