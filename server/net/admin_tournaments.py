"""The admin API's tournament calls: create, start, pause, cancel, get, list (and the paired
comparisons, tournaments of their own kind).

An organizer (docs/courses.md) sees and manages its own course's tournaments alone: another
course's is NOT_FOUND, as if it did not exist (:mod:`.admin_scope`); a listing shows its own
course's; a new tournament goes in the caller's course, and its entrants must be bots of that
course (another course's bot is "unknown", as a missing one, so nothing leaks), its baselines
among the course's frozen baselines, its live view one the protocol defines (unspecified: the
course's; docs/courses.md: live view). RegradeTournament makes a regrade of a finished
tournament (``server/tournaments/lifecycle/regrade.py``) in that tournament's course, with its
live view.
:class:`TournamentAdmin` holds the handlers; :class:`TournamentRpcs` is the part of
``AdminServicer`` that serves them through its token check (``AdminServicer._serve``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
from collections.abc import Awaitable, Collection, Sequence
from typing import Any, Final, Protocol

import grpc
from sqlalchemy.engine import Engine

from domino_arena.server.ladder.kept import Kept
from domino_arena.server.net.admin_answers import (
    ENTRANT_POLICY_TO_PROTO,
    STATE_FROM_PROTO,
    Progress,
    progress_message,
    repeat_deal_rows,
    tournament_message,
    tournament_results,
)
from domino_arena.server.net.admin_compare import comparison_of
from domino_arena.server.net.admin_courses import live_view_of
from domino_arena.server.net.admin_precision import (
    chosen_later,
    precision_message,
    sized_by_precision,
)
from domino_arena.server.net.admin_requests import (
    RequestError,
    deal_mode_of,
    fault_policy_of,
    game_of,
    id_of,
    invalid,
    not_found,
    not_now,
    seed_of,
    time_control_of,
    tournament_numbers,
)
from domino_arena.server.net.admin_rounds import adaptive_arguments, rounds_messages
from domino_arena.server.net.admin_scope import caller
from domino_arena.server.net.admin_serving import Context, Serving
from domino_arena.server.net.hosted_bots import checked_limits, checked_pins
from domino_arena.server.play.arena import NotAcceptingError
from domino_arena.server.play.match_spec import DEFAULT_MAX_DEALS, DEFAULT_MAX_STRIKES
from domino_arena.server.play.roster import Roster
from domino_arena.server.stats.precision import of_tournament
from domino_arena.server.stats.regrades import fresh_deals
from domino_arena.server.store.bots import StoredBot
from domino_arena.server.store.courses import StoredCourse
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.owners import StoredOwner
from domino_arena.server.store.tournament_rounds import StoredRound
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle import TournamentError, games_of, new_tournament
from domino_arena.server.tournaments.lifecycle.adaptive import is_adaptive
from domino_arena.server.tournaments.lifecycle.regrade import RegradeError, regrade_of
from domino_arena.server.tournaments.lifecycle.schedule import design_of
from domino_arena.v1 import admin_pb2 as admin_pb


class TournamentStorage(Protocol):
    """The storage queries of the tournament calls (all blocking)."""

    @property
    def engine(self) -> Engine:
        """For the hosted versions a tournament pins (server/store/hosted_settings.py)."""

    def bot_names(self) -> list[str]: ...
    def owners(self, course: str) -> list[StoredOwner]: ...
    def bots(
        self, *, include_deleted: bool = False, course: str | None = None
    ) -> list[StoredBot]: ...
    def course(self, name: str) -> StoredCourse | None: ...
    def matches(
        self,
        limit: int = 100,
        *,
        tournament_id: str | None = None,
        bot: str | None = None,
        game: str | None = None,
        records: bool = True,
    ) -> list[StoredMatch]: ...
    def tournament(self, tournament_id: str) -> StoredTournament | None: ...
    def tournaments(
        self, states: Collection[TournamentState] | None = None, *, course: str | None = None
    ) -> list[StoredTournament]: ...
    def tournament_game_indexes(self, tournament_id: str) -> set[int]: ...
    def tournament_game_count(self, tournament_id: str) -> int: ...
    def tournament_rounds(self, tournament_id: str) -> list[StoredRound]: ...


class TournamentArena(Protocol):
    """What the tournament calls ask of the arena (``server/play/arena.py``'s ``Arena``)."""

    @property
    def lobby(self) -> Roster: ...
    @property
    def storage(self) -> TournamentStorage: ...


class TournamentDirector(Protocol):
    """What the tournament calls ask of the director, who runs every tournament's life
    (``server/tournaments/lifecycle/director.py``'s ``Director``).

    The calls are made from asyncio and return once the change is recorded; a runner they start
    runs on in the trio nursery. They may raise ``KeyError`` (no such tournament: NOT_FOUND),
    ``ValueError`` (not in a state that allows it: FAILED_PRECONDITION) or
    ``NotAcceptingError`` (the referee is starting or stopping: UNAVAILABLE).
    """

    async def create_tournament(self, t: StoredTournament, start: bool) -> None: ...
    async def start_tournament(self, tournament_id: str) -> None: ...
    async def pause_tournament(self, tournament_id: str) -> None: ...
    async def cancel_tournament(self, tournament_id: str) -> None: ...
    def tournament_progress(self, tournament_id: str) -> Progress | None:
        """The progress of a tournament whose runner is live; None otherwise."""


class TournamentAdmin:
    """The tournament calls' handlers over the arena (its storage and lobby) and the
    director (each tournament's life)."""

    def __init__(self, arena: TournamentArena, director: TournamentDirector) -> None:
        self.arena = arena
        self.director = director

    async def create_tournament(
        self, request: admin_pb.CreateTournamentRequest
    ) -> admin_pb.Tournament:
        game = game_of(request)
        time_control = time_control_of(request.time_control)
        policy = fault_policy_of(request.fault_policy)
        tournament_numbers(request)
        live_view = live_view_of(request.live_view)
        limits = checked_limits(request.hosting_limits)
        optional: dict[str, Any] = {}
        if request.concurrency:
            optional["concurrency"] = request.concurrency
        if request.HasField("wait_ms"):
            optional["wait_seconds"] = request.wait_ms / 1000
        course, bots = await self.course_and_bots(caller().course_of(request.course))
        baselines = dict(course.baselines)
        for index, house in enumerate(request.baselines):
            if house not in baselines:
                raise invalid(
                    f"baselines[{index}]: '{house[:80]}' is not a baseline of course "
                    f"'{course.name}' (its baselines: {', '.join(baselines) or 'none'})"
                )
        _refuse_disabled_owners(request.entrants, bots, course.name)
        policy_of: dict[int, str] = {code: name for name, code in ENTRANT_POLICY_TO_PROTO.items()}
        entrant_policy = policy_of.get(request.entrant_policy or admin_pb.ENTRANT_POLICY_LISTED)
        if entrant_policy is None:
            raise invalid(
                f"entrant_policy: unknown value {request.entrant_policy}; expected LISTED, "
                "CONNECTED or LATEST"
            )
        if request.HasField("start_at"):
            optional["start_at"] = request.start_at.ToDatetime(tzinfo=dt.UTC)
        games_per_pairing = request.games_per_pairing or 1
        format = request.format or "round-robin"
        games_per_entrant = request.games_per_entrant or None
        if request.precision:
            if request.games_per_pairing and format == "round-robin":
                raise invalid(
                    "precision: give precision or games_per_pairing, not both (precision "
                    "chooses the games per pairing)"
                )
            if games_per_entrant is not None:
                raise invalid(
                    "precision: give precision or games_per_entrant, not both (precision "
                    "chooses the games per entrant)"
                )
            later = await asyncio.to_thread(
                chosen_later, entrant_policy, self.arena.storage, course.name, bots
            )
            entrants = len(set(request.entrants)) + len(request.baselines) + later
            games_per_pairing, games_per_entrant = sized_by_precision(
                request, game, format, entrants, listed=entrant_policy == "listed"
            )
        optional |= await adaptive_arguments(
            request, self.arena.storage, course=course.name, entrant_policy=entrant_policy
        )
        name = request.name or f"{game.describe()}, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
        try:
            t = new_tournament(
                name=name,
                game=game,
                entrants=tuple(request.entrants),
                known_bots=[b.name for b in bots],
                course=course.name,
                owners={b.name: b.owner for b in bots if b.owner},
                allow_same_owner_tables=course.allow_same_owner_tables,
                allow_same_owner_partners=course.allow_same_owner_partners,
                baselines=[(house, baselines[house]) for house in request.baselines],
                entrant_policy=entrant_policy,
                format=format,
                games_per_entrant=games_per_entrant,
                games_per_pairing=games_per_pairing,
                deals=deal_mode_of(request.deals),
                time_control=time_control,
                fault_policy=policy,
                max_strikes=request.max_strikes or DEFAULT_MAX_STRIKES,
                max_deals=request.max_deals or DEFAULT_MAX_DEALS,
                seed=seed_of(request.seed) if request.HasField("seed") else None,
                rated=request.rated if request.HasField("rated") else True,
                **optional,
            )
        except (TournamentError, ValueError) as exc:
            raise invalid(str(exc)) from None
        pins = await checked_pins(
            self.arena.storage.engine,
            request.version_pins,
            course=course.name,
            bots=[b.name for b in bots],
            entrants=request.entrants if entrant_policy == "listed" else None,
        )
        t = dataclasses.replace(
            t,
            live_view=live_view,
            version_pins=pins or None,
            hosting_limits=limits or None,
        )
        await arena_call(self.director.create_tournament(t, request.start))
        return await self.tournament(t.id)

    async def create_comparison(
        self, request: admin_pb.CreateComparisonRequest
    ) -> admin_pb.Tournament:
        course, bots = await self.course_and_bots(caller().course_of(""))
        t = comparison_of(request, [b.name for b in bots])
        t = dataclasses.replace(t, course=course.name)
        await arena_call(self.director.create_tournament(t, request.start))
        return await self.tournament(t.id)

    async def regrade_tournament(
        self, request: admin_pb.RegradeTournamentRequest
    ) -> admin_pb.Tournament:
        original = await self.stored_tournament(request.tournament_id)
        if is_adaptive(original):
            raise not_now(
                f"tournament_id: {original.id} is a {original.format} tournament: its rounds "
                "were seated from its results, so a regrade could not replay them"
            )
        replacements: dict[str, str] = {}
        for index, pair in enumerate(request.replace):
            if pair.bot in replacements:
                raise invalid(f"replace[{index}]: '{pair.bot[:80]}' is replaced twice")
            replacements[pair.bot] = pair.by
        if len(request.name) > 200:
            raise invalid(f"name: expected at most 200 characters, got {len(request.name)}")
        _, bots = await self.course_and_bots(original.course)
        try:
            t = regrade_of(
                original,
                replacements,
                course_bots={b.name: b.owner for b in bots},
                name=request.name,
                fresh_deals=request.fresh_deals,
            )
        except RegradeError as exc:
            raise invalid(str(exc)) from None
        await arena_call(self.director.create_tournament(t, request.start))
        return await self.tournament(t.id)

    async def course_and_bots(self, name: str) -> tuple[StoredCourse, list[StoredBot]]:
        """The course ``name`` and its bots (not deleted); INVALID_ARGUMENT if no such course
        (only the admin can name one that does not exist: an organizer's is its own)."""
        course: StoredCourse | None = await asyncio.to_thread(self.arena.storage.course, name)
        if course is None:
            raise invalid(f"course: no course is named '{name[:80]}'")
        bots: list[StoredBot] = await asyncio.to_thread(self.arena.storage.bots, course=name)
        return course, bots

    async def start_tournament(
        self, request: admin_pb.StartTournamentRequest
    ) -> admin_pb.Tournament:
        t = await self.stored_tournament(request.tournament_id)
        live = self.director.tournament_progress(t.id) is not None
        if t.state is TournamentState.RUNNING and live:
            raise not_now(f"tournament {t.id} is running already")
        if t.state in (TournamentState.FINISHED, TournamentState.CANCELLED):
            raise not_now(
                f"tournament {t.id} is {t.state.value}: only a created, paused or interrupted "
                "tournament can start"
            )
        await arena_call(self.director.start_tournament(t.id))
        return await self.tournament(t.id)

    async def pause_tournament(
        self, request: admin_pb.PauseTournamentRequest
    ) -> admin_pb.Tournament:
        t = await self.stored_tournament(request.tournament_id)
        if (
            t.state is not TournamentState.RUNNING
            or self.director.tournament_progress(t.id) is None
        ):
            state = "not running" if t.state is TournamentState.RUNNING else t.state.value
            raise not_now(f"tournament {t.id} is {state}: only a running tournament can pause")
        await arena_call(self.director.pause_tournament(t.id))
        return await self.tournament(t.id)

    async def cancel_tournament(
        self, request: admin_pb.CancelTournamentRequest
    ) -> admin_pb.Tournament:
        t = await self.stored_tournament(request.tournament_id)
        if t.state in (TournamentState.FINISHED, TournamentState.CANCELLED):
            raise not_now(f"tournament {t.id} is {t.state.value} already")
        await arena_call(self.director.cancel_tournament(t.id))
        return await self.tournament(t.id)

    async def get_tournament(self, request: admin_pb.GetTournamentRequest) -> admin_pb.Tournament:
        return await self.tournament(request.tournament_id, results=True)

    async def list_tournaments(
        self, request: admin_pb.ListTournamentsRequest
    ) -> admin_pb.ListTournamentsResponse:
        states = []
        for index, code in enumerate(request.states):
            state = STATE_FROM_PROTO.get(code)
            if state is None:
                raise invalid(
                    f"states[{index}]: unknown value {code}; expected a TournamentState "
                    "other than TOURNAMENT_STATE_UNSPECIFIED"
                )
            states.append(state)
        course = caller().listing(request.course)
        found: list[StoredTournament] = await asyncio.to_thread(
            lambda: self.arena.storage.tournaments(states or None, course=course)
        )
        return admin_pb.ListTournamentsResponse(
            tournaments=[tournament_message(t, await self.progress(t)) for t in found]
        )

    async def stored_tournament(self, tournament_id: str) -> StoredTournament:
        id_of(tournament_id, "tournament_id", "a tournament id")
        t: StoredTournament | None = await asyncio.to_thread(
            self.arena.storage.tournament, tournament_id
        )
        missing = f"no tournament has id '{tournament_id}'"
        if t is None:
            raise not_found(missing)
        caller().check_sees(t.course, missing)
        return t

    async def tournament(self, tournament_id: str, results: bool = False) -> admin_pb.Tournament:
        t = await self.stored_tournament(tournament_id)
        message = tournament_message(t, await self.progress(t))
        if results:
            tables = await self.results(t, message.progress)
            message.results.extend(tables.results)
            message.crosstable.extend(tables.crosstable)
            message.repeat_deals.extend(tables.repeat_deals)
            message.carried.extend(tables.carried)
            message.played_rounds.extend(tables.rounds)
            if tables.bracket is not None:
                message.bracket.CopyFrom(tables.bracket)
        if t.format != "round-robin":
            message.balance = await asyncio.to_thread(_balance_of, t)
        if t.regrade_of is not None:
            original = await asyncio.to_thread(self.arena.storage.tournament, t.regrade_of)
            message.fresh_deals = fresh_deals(t, original)
        if t.baselines:
            later = 0
            if t.state is TournamentState.CREATED and t.entrant_policy != "listed":
                bots = await asyncio.to_thread(self.arena.storage.bots, course=t.course)
                later = await asyncio.to_thread(
                    chosen_later, t.entrant_policy, self.arena.storage, t.course, bots
                )
            precision = of_tournament(t, later)
            if precision is not None:
                message.precision.CopyFrom(precision_message(precision))
        return message

    async def results(self, t: StoredTournament, progress: admin_pb.TournamentProgress) -> _Tables:
        """The tournament's results, crosstable, repeat-deal check and carried games, computed
        off the event loop from all its stored games, and kept until another game is stored."""
        storage = self.arena.storage
        stored: int = await asyncio.to_thread(storage.tournament_game_count, t.id)
        rounds = await asyncio.to_thread(storage.tournament_rounds, t.id) if is_adaptive(t) else []

        def compute() -> _Tables:
            matches = storage.matches(
                max(progress.total, progress.done, stored, 1), tournament_id=t.id, records=False
            )
            rows, crosstable = tournament_results(t.entrants, matches, t.baselines)
            played, bracket = rounds_messages(t, rounds, matches)
            return _Tables(
                tuple(rows),
                tuple(crosstable),
                tuple(repeat_deal_rows(matches, t.entrants)),
                tuple(
                    sorted(
                        m.game_index for m in matches if m.carried_from and m.game_index is not None
                    )
                ),
                tuple(played),
                bracket,
            )

        stamp = (stored, len(rounds), t.entrants, t.state)  # entrants are chosen at the start
        return await asyncio.to_thread(_TABLES.get, storage, t.id, stamp, compute)

    async def progress(self, t: StoredTournament) -> admin_pb.TournamentProgress:
        live = self.director.tournament_progress(t.id)
        if live is not None:
            return progress_message(live)
        done: set[int] = await asyncio.to_thread(self.arena.storage.tournament_game_indexes, t.id)
        games = await asyncio.to_thread(games_of, t, self.arena.storage)
        return admin_pb.TournamentProgress(total=len(games), done=len(done))


@dataclasses.dataclass(frozen=True, slots=True)
class _Tables:
    """What GetTournament computes from all of a tournament's games."""

    results: tuple[admin_pb.EntrantResult, ...]
    crosstable: tuple[admin_pb.HeadToHead, ...]
    repeat_deals: tuple[admin_pb.RepeatDealCheck, ...]
    carried: tuple[int, ...]
    rounds: tuple[admin_pb.TournamentRound, ...]
    bracket: admin_pb.KnockoutBracket | None


_TABLES: Final = Kept[_Tables](32)
"""Tournaments' tables by id, kept with the count of stored games (and the entrants and state)
they were computed from."""


def _balance_of(t: StoredTournament) -> str:
    """The balance a balanced or gauntlet tournament's design reached, in one line ("" before
    its entrants are chosen)."""
    try:
        design = design_of(t)
    except ValueError:
        return ""
    return "" if design is None else str(design.balance)


def _refuse_disabled_owners(
    entrants: Sequence[str], bots: Sequence[StoredBot], course: str
) -> None:
    """INVALID_ARGUMENT naming ``entrants[i]`` for a bot whose owner the organizer disabled: it
    is refused at Hello, so each of its tables would only fault (docs/courses.md: owners)."""
    disabled = {b.name: b.owner for b in bots if not b.owner_enabled}
    for index, name in enumerate(entrants):
        if name in disabled:
            raise invalid(
                f"entrants[{index}]: bot '{name}' belongs to owner '{disabled[name]}', whom the "
                f"organizer of course '{course}' disabled; enable the owner first (domino-arena "
                f"owner enable {disabled[name]}) or leave the bot out"
            )


async def arena_call(call: Awaitable[None]) -> None:
    """Await an action of the arena or the director; its refusals become NOT_FOUND /
    FAILED_PRECONDITION / UNAVAILABLE."""
    try:
        await call
    except KeyError as exc:
        raise not_found(str(exc.args[0]) if exc.args else str(exc)) from None
    except NotAcceptingError as exc:
        raise RequestError(grpc.StatusCode.UNAVAILABLE, str(exc)) from None
    except ValueError as exc:
        raise not_now(str(exc)) from None


class TournamentServing(Serving, Protocol):
    """:class:`~.admin_serving.Serving` with the tournament RPCs' handlers."""

    tournament_admin: TournamentAdmin


class TournamentRpcs:
    """The tournament RPCs of ``AdminService``: the token first, then :class:`TournamentAdmin`."""

    async def CreateTournament(  # noqa: N802
        self: TournamentServing, request: admin_pb.CreateTournamentRequest, context: Context
    ) -> admin_pb.Tournament:
        return await self._serve(context, self.tournament_admin.create_tournament, request)

    async def CreateComparison(  # noqa: N802
        self: TournamentServing, request: admin_pb.CreateComparisonRequest, context: Context
    ) -> admin_pb.Tournament:
        return await self._serve(context, self.tournament_admin.create_comparison, request)

    async def StartTournament(  # noqa: N802
        self: TournamentServing, request: admin_pb.StartTournamentRequest, context: Context
    ) -> admin_pb.Tournament:
        return await self._serve(context, self.tournament_admin.start_tournament, request)

    async def PauseTournament(  # noqa: N802
        self: TournamentServing, request: admin_pb.PauseTournamentRequest, context: Context
    ) -> admin_pb.Tournament:
        return await self._serve(context, self.tournament_admin.pause_tournament, request)

    async def CancelTournament(  # noqa: N802
        self: TournamentServing, request: admin_pb.CancelTournamentRequest, context: Context
    ) -> admin_pb.Tournament:
        return await self._serve(context, self.tournament_admin.cancel_tournament, request)

    async def GetTournament(  # noqa: N802
        self: TournamentServing, request: admin_pb.GetTournamentRequest, context: Context
    ) -> admin_pb.Tournament:
        return await self._serve(context, self.tournament_admin.get_tournament, request)

    async def ListTournaments(  # noqa: N802
        self: TournamentServing, request: admin_pb.ListTournamentsRequest, context: Context
    ) -> admin_pb.ListTournamentsResponse:
        return await self._serve(context, self.tournament_admin.list_tournaments, request)

    async def RegradeTournament(  # noqa: N802
        self: TournamentServing, request: admin_pb.RegradeTournamentRequest, context: Context
    ) -> admin_pb.Tournament:
        return await self._serve(context, self.tournament_admin.regrade_tournament, request)
