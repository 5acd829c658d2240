"""The admin API's courses and invite codes (admin.proto, docs/courses.md).

A course is created, and its organizer token rotated, by the admin alone (PERMISSION_DENIED for
an organizer): the token is shown once, in that answer. An organizer reads and changes its own
course and its invites; a ``course`` field naming another course is PERMISSION_DENIED and
another course's invite is NOT_FOUND (the message of an invite that does not exist), as every
admin call is scoped (:mod:`.admin_scope`).

The refusals: INVALID_ARGUMENT naming the field (a bad name, title, count, expiry, live view or
baseline: a baseline must be a house bot this referee hosts, :mod:`domino_arena.server.play.house`),
ALREADY_EXISTS (a course of that name exists), NOT_FOUND (no such course or invite).

:class:`CourseAdmin` holds the handlers; :class:`CourseRpcs` is the part of ``AdminServicer``
that serves them through its token check (``AdminServicer._serve``), as ``BotRpcs`` does.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TypeVar

import grpc
from google.protobuf.timestamp_pb2 import Timestamp
from sqlalchemy.engine import Engine

from domino_arena.server.logs import quote
from domino_arena.server.net.admin_requests import RequestError, id_of, invalid, not_found
from domino_arena.server.net.admin_scope import caller
from domino_arena.server.net.admin_serving import Context, Serving
from domino_arena.server.net.hosted_bots import checked_limits
from domino_arena.server.net.wire import (
    hosting_limits_to_proto,
    live_view_from_proto,
    live_view_to_proto,
)
from domino_arena.server.store import analysis_jobs, hosted_settings
from domino_arena.server.store.courses import (
    MAX_HUMAN_MOVE_MS,
    CourseError,
    DuplicateCourseError,
    IssuedCourseToken,
    IssuedInvite,
    StoredCourse,
    StoredInvite,
    UnknownCourseError,
    UnknownInviteError,
    check_baselines,
    check_course_name,
)
from domino_arena.server.store.tables import DEFAULT_COURSE
from domino_arena.v1 import admin_pb2 as admin_pb

T = TypeVar("T")


class CourseStorage(Protocol):
    """The storage calls of the course RPCs (all blocking: run in worker threads)."""

    def create_course(self, name: str, **settings: Any) -> IssuedCourseToken: ...
    def courses(self) -> list[StoredCourse]: ...
    def course(self, name: str) -> StoredCourse | None: ...
    def update_course(self, name: str, **changes: Any) -> StoredCourse: ...
    def rotate_organizer_token(self, name: str) -> IssuedCourseToken: ...
    def create_invites(
        self, course: str, count: int, *, uses: int = 1, expires: dt.datetime | None = None
    ) -> list[IssuedInvite]: ...
    def invites(self, course: str) -> list[StoredInvite]: ...
    def invite(self, invite_id: str) -> StoredInvite | None: ...
    def revoke_invite(self, invite_id: str) -> StoredInvite: ...
    @property
    def engine(self) -> Engine:
        """For the hosted bots' settings (server/store/hosted_settings.py)."""


class CourseArena(Protocol):
    """What the course RPCs need of the arena: its storage and the house bots it hosts."""

    @property
    def storage(self) -> Any: ...
    @property
    def house(self) -> Mapping[str, object]: ...


def _timestamp(moment: dt.datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment.astimezone(dt.UTC) if moment.tzinfo else moment)
    return stamp


def course_message(course: StoredCourse) -> admin_pb.Course:
    """A stored course as a ``Course`` message (never its organizer token)."""
    message = admin_pb.Course(
        name=course.name,
        title=course.title,
        anonymous=course.anonymous,
        allow_same_owner_tables=course.allow_same_owner_tables,
        allow_same_owner_partners=course.allow_same_owner_partners,
        baselines=[admin_pb.Baseline(bot=bot, rating=rating) for bot, rating in course.baselines],
        bots=course.bots,
        owners=course.owners,
        live_view=live_view_to_proto(course.live_view),
        hosting_limits=hosting_limits_to_proto(course.hosting_limits),
        human_move_ms=course.human_move_ms,
        analyse_tournaments=course.analyse_tournaments,
    )
    message.created.CopyFrom(_timestamp(course.created))
    if course.organizer_token_issued is not None:
        message.organizer_token_issued.CopyFrom(_timestamp(course.organizer_token_issued))
    return message


def invite_message(invite: StoredInvite) -> admin_pb.Invite:
    """A stored invite as an ``Invite`` message (never its code)."""
    message = admin_pb.Invite(
        id=invite.id,
        course=invite.course,
        uses=invite.uses,
        used=invite.used,
        revoked=invite.revoked,
        owners=invite.owners,
    )
    message.created.CopyFrom(_timestamp(invite.created))
    if invite.expires is not None:
        message.expires.CopyFrom(_timestamp(invite.expires))
    return message


def _check_name(name: str) -> None:
    """INVALID_ARGUMENT unless ``name`` may name a course (so every message echoes a name)."""
    try:
        check_course_name(name)
    except CourseError as exc:
        raise invalid(str(exc)) from None


def live_view_of(value: admin_pb.LiveView.ValueType) -> str | None:
    """The live view a request asks for (None: unspecified); INVALID_ARGUMENT for a value the
    protocol does not define."""
    try:
        return live_view_from_proto(value)
    except ValueError as exc:
        raise invalid(str(exc)) from None


def baselines_of(baselines: Iterable[admin_pb.Baseline]) -> tuple[tuple[str, float], ...]:
    return tuple((b.bot, b.rating) for b in baselines)


class CourseAdmin:
    """The course and invite RPCs' handlers over the arena's storage and house bots."""

    def __init__(self, arena: CourseArena) -> None:
        self.arena = arena

    @property
    def storage(self) -> CourseStorage:
        storage: CourseStorage = self.arena.storage
        return storage

    async def _stored(self, function: Callable[[], T]) -> T:
        """Run a storage call in a worker thread; its refusals become the call's status."""
        try:
            return await asyncio.to_thread(function)
        except DuplicateCourseError as exc:
            raise RequestError(grpc.StatusCode.ALREADY_EXISTS, str(exc)) from None
        except CourseError as exc:  # its message begins with the field
            raise invalid(str(exc)) from None
        except (UnknownCourseError, UnknownInviteError) as exc:
            raise not_found(str(exc)) from None

    def _baselines(self, baselines: Iterable[admin_pb.Baseline]) -> tuple[tuple[str, float], ...]:
        chosen = baselines_of(baselines)
        try:
            check_baselines(chosen, set(self.arena.house))
        except CourseError as exc:
            raise invalid(str(exc)) from None
        return chosen

    async def _course(self, requested: str) -> StoredCourse:
        """The course a request names (its own for an organizer; PERMISSION_DENIED for
        another), NOT_FOUND if there is none."""
        name = caller().course_of(requested)
        _check_name(name)
        found = await asyncio.to_thread(self.storage.course, name)
        if found is None:
            raise not_found(f"course: no course is named '{name}'")
        return found

    async def create(self, request: admin_pb.CreateCourseRequest) -> admin_pb.CreateCourseResponse:
        caller().require_admin("CreateCourse")
        baselines = self._baselines(request.baselines)
        settings: dict[str, Any] = {}
        live_view = live_view_of(request.live_view)
        if live_view is not None:  # unspecified: public
            settings["live_view"] = live_view
        issued = await self._stored(
            lambda: self.storage.create_course(
                request.name,
                title=request.title,
                anonymous=request.anonymous,
                allow_same_owner_tables=request.allow_same_owner_tables,
                allow_same_owner_partners=request.allow_same_owner_partners,
                baselines=baselines,
                **settings,
            )
        )
        return admin_pb.CreateCourseResponse(
            course=course_message(issued.course), organizer_token=issued.token
        )

    async def rotate(
        self, request: admin_pb.RotateOrganizerTokenRequest
    ) -> admin_pb.CreateCourseResponse:
        caller().require_admin("RotateOrganizerToken")
        if not request.course:
            raise invalid("course: name the course whose organizer token to rotate")
        _check_name(request.course)
        if request.course == DEFAULT_COURSE:
            raise invalid(
                f"course: the course '{DEFAULT_COURSE}' has no organizer token (the admin token "
                "manages it)"
            )
        issued = await self._stored(lambda: self.storage.rotate_organizer_token(request.course))
        return admin_pb.CreateCourseResponse(
            course=course_message(issued.course), organizer_token=issued.token
        )

    async def list_courses(
        self, request: admin_pb.ListCoursesRequest
    ) -> admin_pb.ListCoursesResponse:
        who = caller()
        found = await asyncio.to_thread(self.storage.courses)
        return admin_pb.ListCoursesResponse(
            courses=[course_message(c) for c in found if who.sees(c.name)]
        )

    async def get(self, request: admin_pb.GetCourseRequest) -> admin_pb.Course:
        return course_message(await self._course(request.course))

    async def update(self, request: admin_pb.UpdateCourseRequest) -> admin_pb.Course:
        name = (await self._course(request.course)).name
        changes: dict[str, Any] = {}
        for field in ("title", "anonymous", "allow_same_owner_tables", "allow_same_owner_partners"):
            if request.HasField(field):
                changes[field] = getattr(request, field)
        if request.set_baselines:
            changes["baselines"] = self._baselines(request.baselines)
        elif request.baselines:
            raise invalid("baselines: set set_baselines to replace the course's baselines")
        live_view = live_view_of(request.live_view)
        if live_view is not None:  # unspecified: unchanged
            changes["live_view"] = live_view
        if request.HasField("human_move_ms"):  # docs/people.md: a person's time per move
            if request.human_move_ms > MAX_HUMAN_MOVE_MS:
                raise invalid(
                    f"human_move_ms: must be at most {MAX_HUMAN_MOVE_MS}, got "
                    f"{request.human_move_ms} (the range is 0-{MAX_HUMAN_MOVE_MS}; 0: the "
                    "default, 60 s)"
                )
            changes["human_move_ms"] = request.human_move_ms
        limits = None
        if request.HasField("hosting_limits"):  # checked before anything changes
            limits = checked_limits(request.hosting_limits)
        updated = await self._stored(lambda: self.storage.update_course(name, **changes))
        if limits is not None:  # the rest was accepted: the limits too
            set_limits = functools.partial(
                hosted_settings.set_course_limits, self.storage.engine, name, limits
            )
            await self._stored(set_limits)
            updated = dataclasses.replace(updated, hosting_limits=limits)
        if request.HasField("analyse_tournaments"):  # docs/courses.md: analysis
            on = request.analyse_tournaments
            set_analysis = functools.partial(
                analysis_jobs.set_course_analysis, self.storage.engine, name, on
            )
            await self._stored(set_analysis)
            updated = dataclasses.replace(updated, analyse_tournaments=on)
        return course_message(updated)

    async def create_invites(
        self, request: admin_pb.CreateInvitesRequest
    ) -> admin_pb.CreateInvitesResponse:
        name = (await self._course(request.course)).name
        expires = request.expires.ToDatetime(dt.UTC) if request.HasField("expires") else None
        issued = await self._stored(
            lambda: self.storage.create_invites(
                name, request.count, uses=request.uses or 1, expires=expires
            )
        )
        return admin_pb.CreateInvitesResponse(
            invites=[
                admin_pb.InviteCode(invite=invite_message(i.invite), code=i.code) for i in issued
            ]
        )

    async def list_invites(
        self, request: admin_pb.ListInvitesRequest
    ) -> admin_pb.ListInvitesResponse:
        name = (await self._course(request.course)).name
        found = await asyncio.to_thread(self.storage.invites, name)
        return admin_pb.ListInvitesResponse(invites=[invite_message(i) for i in found])

    async def revoke_invite(self, request: admin_pb.RevokeInviteRequest) -> admin_pb.Invite:
        id_of(request.id, "id", "an invite id")
        missing = f"id: no invite has id {quote(request.id)}"
        invite = await asyncio.to_thread(self.storage.invite, request.id)
        if invite is None or not caller().sees(invite.course):
            raise not_found(missing)
        return invite_message(await self._stored(lambda: self.storage.revoke_invite(request.id)))


# -- the RPCs, mixed into AdminServicer ---------------------------------------------------------


class CourseRpcs:
    """The eight course and invite RPCs of ``AdminService``: the token first, then
    :class:`CourseAdmin`."""

    async def CreateCourse(  # noqa: N802
        self: Serving, request: admin_pb.CreateCourseRequest, context: Context
    ) -> admin_pb.CreateCourseResponse:
        return await self._serve(context, CourseAdmin(self.arena).create, request)

    async def RotateOrganizerToken(  # noqa: N802
        self: Serving, request: admin_pb.RotateOrganizerTokenRequest, context: Context
    ) -> admin_pb.CreateCourseResponse:
        return await self._serve(context, CourseAdmin(self.arena).rotate, request)

    async def ListCourses(  # noqa: N802
        self: Serving, request: admin_pb.ListCoursesRequest, context: Context
    ) -> admin_pb.ListCoursesResponse:
        return await self._serve(context, CourseAdmin(self.arena).list_courses, request)

    async def GetCourse(  # noqa: N802
        self: Serving, request: admin_pb.GetCourseRequest, context: Context
    ) -> admin_pb.Course:
        return await self._serve(context, CourseAdmin(self.arena).get, request)

    async def UpdateCourse(  # noqa: N802
        self: Serving, request: admin_pb.UpdateCourseRequest, context: Context
    ) -> admin_pb.Course:
        return await self._serve(context, CourseAdmin(self.arena).update, request)

    async def CreateInvites(  # noqa: N802
        self: Serving, request: admin_pb.CreateInvitesRequest, context: Context
    ) -> admin_pb.CreateInvitesResponse:
        return await self._serve(context, CourseAdmin(self.arena).create_invites, request)

    async def ListInvites(  # noqa: N802
        self: Serving, request: admin_pb.ListInvitesRequest, context: Context
    ) -> admin_pb.ListInvitesResponse:
        return await self._serve(context, CourseAdmin(self.arena).list_invites, request)

    async def RevokeInvite(  # noqa: N802
        self: Serving, request: admin_pb.RevokeInviteRequest, context: Context
    ) -> admin_pb.Invite:
        return await self._serve(context, CourseAdmin(self.arena).revoke_invite, request)
