"""The admin API's grades: GetGrades, the gradebook of finished tournaments (admin.proto).

The grades themselves are ``server/stats/grades.py``'s (pure); this module checks the request
against the caller's scope, reads the stored rows and runs the fit (a batch fit and its
bootstrap: seconds on a big term) in a worker thread, off the event loop.

The refusals, in the order they are checked: INVALID_ARGUMENT (no ids, too many, an id listed
twice, too many bootstrap rounds, a scale that cannot be read), NOT_FOUND (no such tournament,
or one of a course the caller does not manage: the same message, as everywhere in the admin
API), INVALID_ARGUMENT (the tournaments are of several courses or games, naming
``tournament_ids[i]``; a scale naming a baseline they did not seat), FAILED_PRECONDITION (a
tournament not finished yet, or games the fit cannot grade, e.g. none counted).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Collection
from typing import TYPE_CHECKING, Final, Protocol

from google.protobuf.timestamp_pb2 import Timestamp
from sqlalchemy.engine import Engine

from domino_arena.server.net.admin_requests import invalid, not_found, not_now
from domino_arena.server.net.admin_scope import caller
from domino_arena.server.net.admin_serving import Context, Serving
from domino_arena.server.store.bots import StoredBot
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.owners import StoredOwner
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.v1 import admin_pb2 as admin_pb

if TYPE_CHECKING:
    from domino_arena.server.stats.grades import Grades
    from domino_arena.server.store.analyses import AnalysedFigures

# The fit (server/ladder/fit.py: NumPy and SciPy, about 55 MiB) is imported by the first
# GetGrades, not by every referee: hence the imports inside the functions below.

MAX_GRADED: Final = 50
"""The most tournaments one GetGrades request grades together."""


class OwnerStorage(Protocol):
    """The storage call of :func:`course_owners` (blocking)."""

    def owners(self, course: str) -> list[StoredOwner]: ...


class GradeStorage(Protocol):
    """The storage calls of GetGrades (all blocking: run in worker threads)."""

    def tournament(self, tournament_id: str) -> StoredTournament | None: ...
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
    def owners(self, course: str) -> list[StoredOwner]: ...
    def bots(
        self, *, include_deleted: bool = False, course: str | None = None
    ) -> list[StoredBot]: ...
    @property
    def engine(self) -> Engine: ...


class GradeAdmin:
    """GetGrades' handler over the storage."""

    def __init__(self, storage: GradeStorage) -> None:
        self.storage = storage

    async def get_grades(self, request: admin_pb.GetGradesRequest) -> admin_pb.Grades:
        from domino_arena.server.ladder.batch import BOOTSTRAP_SEED  # noqa: PLC0415
        from domino_arena.server.stats.grade_scale import ScaleError, parse_scale  # noqa: PLC0415
        from domino_arena.server.stats.grades import GradeError, grades  # noqa: PLC0415

        ids = list(request.tournament_ids)
        rounds = _rounds_of(request)
        try:
            scale = parse_scale(request.scale) if request.scale else None
        except ScaleError as exc:
            raise invalid(str(exc)) from None
        if not ids:
            raise invalid("tournament_ids: expected at least one finished tournament's id")
        if len(ids) > MAX_GRADED:
            raise invalid(f"tournament_ids: at most {MAX_GRADED} tournaments, got {len(ids)}")
        for index, tournament_id in enumerate(ids):
            if tournament_id in ids[:index]:
                raise invalid(f"tournament_ids[{index}]: {tournament_id[:80]!r} is listed twice")
        found = await asyncio.to_thread(self._tournaments, ids)
        _check_together(found)
        matches, bots = await asyncio.to_thread(self._rows, found)
        analysed = await asyncio.to_thread(self._analysed, [t.id for t in found])
        owners = await asyncio.to_thread(course_owners, self.storage, found[0].course)
        try:
            result = await asyncio.to_thread(
                grades,
                found,
                matches,
                bots,
                anonymous=request.anonymous,
                rounds=rounds,
                seed=BOOTSTRAP_SEED,
                owners=owners,
                scale=scale,
                analysed=analysed,
            )
        except ScaleError as exc:
            raise invalid(str(exc)) from None
        except GradeError as exc:
            raise not_now(str(exc)) from None
        return grades_message(result, dt.datetime.now(dt.UTC))

    def _tournaments(self, ids: list[str]) -> list[StoredTournament]:
        """The tournaments by id; NOT_FOUND for one that is missing or the caller's scope hides."""
        who = caller()
        found: list[StoredTournament] = []
        for index, tournament_id in enumerate(ids):
            message = f"tournament_ids[{index}]: no tournament has id {tournament_id[:80]!r}"
            t = self.storage.tournament(tournament_id)
            if t is None:
                raise not_found(message)
            who.check_sees(t.course, message)
            found.append(t)
        return found

    def _analysed(self, tournament_ids: list[str]) -> dict[str, AnalysedFigures]:
        """Each bot's figures over its analysed games of the tournaments (docs/analysis.md)."""
        from domino_arena.server.store.analyses import analysed_figures  # noqa: PLC0415

        return analysed_figures(self.storage.engine, tournament_ids)

    def _rows(
        self, tournaments: Collection[StoredTournament]
    ) -> tuple[list[StoredMatch], list[StoredBot]]:
        """The tournaments' stored matches (without records) and their course's bots."""
        from domino_arena.server.ladder.batch import MAX_BATCH_MATCHES  # noqa: PLC0415

        matches: list[StoredMatch] = []
        for t in tournaments:
            matches += self.storage.matches(MAX_BATCH_MATCHES, tournament_id=t.id, records=False)
        course = next(iter(tournaments)).course
        return matches, self.storage.bots(include_deleted=True, course=course)


def course_owners(storage: OwnerStorage, course: str) -> list[str]:
    """Every owner of ``course``, each of whom gets a row in the grades (blocking).

    The one place the grades learn who the students are: the course's owners (docs/courses.md:
    owners), with or without a bot, enabled or not (a student whose only bot was deleted, or
    who was disabled, still gets a row)."""
    return sorted(owner.name for owner in storage.owners(course))


def _rounds_of(request: admin_pb.GetGradesRequest) -> int:
    from domino_arena.server.ladder.batch import MAX_ROUNDS  # noqa: PLC0415
    from domino_arena.server.ladder.fit_bootstrap import DEFAULT_ROUNDS  # noqa: PLC0415

    rounds = request.bootstrap_rounds or DEFAULT_ROUNDS
    if rounds > MAX_ROUNDS:
        raise invalid(f"bootstrap_rounds: must be at most {MAX_ROUNDS}, got {rounds}")
    return rounds


def _check_together(tournaments: list[StoredTournament]) -> None:
    """INVALID_ARGUMENT for tournaments of several courses or games, FAILED_PRECONDITION for
    one not finished, each naming ``tournament_ids[i]``."""
    first = tournaments[0]
    for index, t in enumerate(tournaments):
        if t.course != first.course or t.game != first.game:
            raise invalid(
                f"tournament_ids[{index}]: {t.id!r} is a {t.game!r} tournament of course "
                f"{t.course!r}, tournament_ids[0] a {first.game!r} one of {first.course!r}; "
                "expected tournaments of one course and one game"
            )
    for index, t in enumerate(tournaments):
        if t.state is not TournamentState.FINISHED:
            raise not_now(
                f"tournament_ids[{index}]: {t.id!r} is {t.state.value}; expected a finished "
                "tournament (grades are final only once every game is played)"
            )


def grades_message(result: Grades, made: dt.datetime) -> admin_pb.Grades:
    """The ``Grades`` answer of :func:`.grades.grades`'s result, stamped ``made``."""
    stamp = Timestamp()
    stamp.FromDatetime(made)
    return admin_pb.Grades(
        course=result.course,
        game=result.game,
        tournament_ids=result.tournament_ids,
        grades=[
            admin_pb.OwnerGrade(
                owner=line.owner,
                bot=line.bot,
                rank=line.rank,
                rating=line.rating,
                rating_low=line.rating_low,
                rating_high=line.rating_high,
                games=line.games,
                wins=line.wins,
                draws=line.draws,
                losses=line.losses,
                faults=line.faults,
                points=line.points,
                baselines=[
                    admin_pb.BaselineResult(
                        baseline=b.baseline,
                        games=b.games,
                        sets=b.sets,
                        score=b.score,
                        elo=b.elo,
                        elo_low=b.elo_low,
                        elo_high=b.elo_high,
                        los=b.los,
                        p_value=b.p_value,
                        verdict=b.verdict,
                    )
                    for b in line.baselines
                ],
                status=line.status,
                grade=line.grade,
                analysed_games=line.analysed_games,
                mean_loss=line.mean_loss,
                accuracy=line.accuracy,
            )
            for line in result.grades
        ],
        baselines=[admin_pb.Baseline(bot=bot, rating=rating) for bot, rating in result.baselines],
        games=result.games,
        rounds=result.rounds,
        made=stamp,
        anonymous=result.anonymous,
        regrades=[
            admin_pb.GradedRegrade(
                tournament_id=note.tournament_id,
                regrade_of=note.regrade_of,
                replaced=[admin_pb.Replacement(bot=old, by=new) for old, new in note.replaced],
                carried=note.carried,
                counted_once=note.counted_once,
            )
            for note in result.regrades
        ],
        scale=result.scale,
    )


# -- the RPC, mixed into AdminServicer ----------------------------------------------------------


class GradeRpcs:
    """GetGrades: the caller's token and scope first (``AdminServicer._serve``), then
    :class:`GradeAdmin` over the arena's storage."""

    async def GetGrades(  # noqa: N802
        self: Serving, request: admin_pb.GetGradesRequest, context: Context
    ) -> admin_pb.Grades:
        return await self._serve(context, GradeAdmin(self.arena.storage).get_grades, request)
