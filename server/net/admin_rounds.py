"""The admin API's Swiss and knockout parts: a request's seeding (``seeding_from`` resolved
against another tournament's results, best first) and a tournament's rounds and bracket as
messages (docs/tournaments.md: Swiss, knockout; docs/admin.md: CreateTournament).

The rounds and the bracket are read back as the referee reads them (``server/ladder/rounds.py``),
so the admin API shows the tables and the ties the referee seats from.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol

from domino_arena.server.ladder.rounds import knockout_bracket, results_of
from domino_arena.server.net.admin_answers import tournament_results
from domino_arena.server.net.admin_requests import id_of, invalid
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournament_rounds import StoredRound
from domino_arena.server.store.tournaments import StoredTournament
from domino_arena.server.tournaments.knockout import Bracket
from domino_arena.server.tournaments.rounds import ADAPTIVE_FORMATS
from domino_arena.v1 import admin_pb2 as admin_pb


class SeedingStorage(Protocol):
    """The storage queries of ``seeding_from`` (blocking)."""

    def tournament(self, tournament_id: str) -> StoredTournament | None: ...
    def tournament_game_count(self, tournament_id: str) -> int: ...
    def matches(
        self,
        limit: int = 100,
        *,
        tournament_id: str | None = None,
        bot: str | None = None,
        game: str | None = None,
        records: bool = True,
    ) -> list[StoredMatch]: ...


async def adaptive_arguments(
    request: admin_pb.CreateTournamentRequest,
    storage: SeedingStorage,
    *,
    course: str,
    entrant_policy: str,
) -> dict[str, Any]:
    """``new_tournament``'s Swiss and knockout arguments from a request (0: unset), the
    seeding resolved (:func:`requested_seeding`); it checks them against the format.

    Raises:
        RequestError: INVALID_ARGUMENT naming ``knockout_max_sets`` below ``knockout_sets``,
            or as :func:`requested_seeding`.
    """
    sets, most = request.knockout_sets, request.knockout_max_sets
    if most and most < (sets or 1):
        raise invalid(
            f"knockout_max_sets: expected at least knockout_sets ({sets or 1}), got {most}"
        )
    return {
        "rounds": request.rounds or None,
        "knockout_sets": sets or None,
        "knockout_max_sets": most or None,
        "seeding": await requested_seeding(
            request, storage, course=course, entrant_policy=entrant_policy
        ),
    }


async def requested_seeding(
    request: admin_pb.CreateTournamentRequest,
    storage: SeedingStorage,
    *,
    course: str,
    entrant_policy: str,
) -> tuple[str, ...]:
    """The seeding a request asks for: ``seeding`` as given, or ``seeding_from`` resolved (the
    listed entrants that played in that tournament, in the order of its results, then the
    others in listed order); () for neither. ``new_tournament`` checks it against the
    entrants.

    Raises:
        RequestError: INVALID_ARGUMENT naming ``seeding_from`` (with ``seeding`` too, entrants
            chosen at the start, an id that is malformed, unknown or of another course).
    """
    if not request.seeding_from:
        return tuple(request.seeding)
    if request.seeding:
        raise invalid("seeding_from: give seeding or seeding_from, not both")
    if entrant_policy != "listed":
        raise invalid(
            f"seeding_from: the entrants are chosen when it starts (entrant_policy "
            f"{entrant_policy}); only listed entrants can be seeded"
        )
    if request.format not in ADAPTIVE_FORMATS:
        raise invalid(
            f"seeding_from: only a Swiss or knockout tournament is seeded, not a "
            f"{request.format or 'round-robin'} one"
        )
    source = id_of(request.seeding_from, "seeding_from", "a tournament id")
    order = await asyncio.to_thread(_ranked, storage, source, course)
    if order is None:  # another course's is unknown too: nothing leaks across courses
        raise invalid(f"seeding_from: course '{course}' has no tournament with id '{source}'")
    listed = list(dict.fromkeys(request.entrants))
    first = [bot for bot in order if bot in listed]
    return (*first, *(bot for bot in listed if bot not in first))


def _ranked(storage: SeedingStorage, tournament_id: str, course: str) -> list[str] | None:
    """The entrants of ``tournament_id`` that played a counted game, in the order of its
    results (GetTournament's ``results``: points, then its official fit's performance); None
    if it is not a tournament of ``course``."""
    t = storage.tournament(tournament_id)
    if t is None or t.course != course:
        return None
    count = storage.tournament_game_count(t.id)
    matches = storage.matches(max(count, 1), tournament_id=t.id, records=False)
    rows, _ = tournament_results(t.entrants, matches, t.baselines)
    return [row.bot for row in rows if row.games]


def rounds_messages(
    t: StoredTournament, rounds: Sequence[StoredRound], matches: Sequence[StoredMatch]
) -> tuple[list[admin_pb.TournamentRound], admin_pb.KnockoutBracket | None]:
    """A Swiss or knockout ``t``'s stored rounds with their tables' results so far, and a
    knockout's bracket after its rounds whose every game is stored (None for a Swiss, or for
    rows the bracket cannot replay)."""
    stored = {m.game_index for m in matches if m.game_index is not None}
    results = results_of(rounds, matches)
    messages = [
        admin_pb.TournamentRound(
            number=r.number + 1,
            tables=[
                admin_pb.RoundTable(
                    entrants=table.entrants,
                    points=table.points,
                    score=table.score,
                    games=table.games,
                )
                for table in tables
            ],
            byes=r.byes,
            first_game=r.first_index,
            games=r.games,
            games_stored=sum(1 for index in r.indexes if index in stored),
        )
        for r, tables in zip(rounds, results, strict=True)
    ]
    if t.format != "knockout":
        return messages, None
    try:
        now = knockout_bracket(t, results[: _played_prefix(rounds, messages)])
    except ValueError:
        return messages, None
    return messages, bracket_message(now)


def _played_prefix(
    rounds: Sequence[StoredRound], messages: Sequence[admin_pb.TournamentRound]
) -> int:
    """How many rounds from the first have every game stored (the bracket replays those)."""
    count = 0
    for r, message in zip(rounds, messages, strict=True):
        if message.games_stored != r.games:
            break
        count += 1
    return count


def bracket_message(now: Bracket) -> admin_pb.KnockoutBracket:
    """A knockout's bracket as the admin API shows it."""
    return admin_pb.KnockoutBracket(
        stages=[
            admin_pb.KnockoutStage(
                ties=[
                    admin_pb.KnockoutTie(
                        entrants=tie.entrants,
                        out=tie.out,
                        decided_by=tie.decided_by,
                        sets=len(tie.sets),
                    )
                    for tie in stage
                ]
            )
            for stage in now.stages
        ],
        champion=now.champion or "",
        final_order=now.final_order,
    )
