"""The admin API's owners: list, disable, enable, issue a token (admin.proto, docs/courses.md:
owners).

An owner is an account of a course made by an invite (server/store/owners.py). The organizer
(or the admin) sees each owner with the invite that made it and its bots, disables an owner,
whose bots' open streams are then closed at once (UNAUTHENTICATED, as when a bot is disabled,
:mod:`.admin_bots`), and issues an owner token, shown once, to an owner who has none (made
before owners had tokens) or lost theirs.

The refusals: INVALID_ARGUMENT (``name`` is not an owner name), NOT_FOUND (no such course or
owner; an organizer naming another course is PERMISSION_DENIED, as every call is scoped,
:mod:`.admin_scope`).

:class:`OwnerAdmin` holds the handlers; :class:`OwnerRpcs` is the part of ``AdminServicer``
that serves them through its token check, as ``CourseRpcs`` does.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any, Final, Protocol

from google.protobuf.timestamp_pb2 import Timestamp

from domino_arena.server.net.admin_requests import invalid, not_found
from domino_arena.server.net.admin_scope import caller
from domino_arena.server.net.admin_serving import Context, Serving
from domino_arena.server.store.bots import BadOwnerError, check_owner
from domino_arena.server.store.courses import StoredCourse
from domino_arena.server.store.owners import (
    IssuedOwnerToken,
    StoredOwner,
    UnknownOwnerError,
)
from domino_arena.v1 import admin_pb2 as admin_pb

OWNER_DISABLED: Final = (
    "owner disabled: the organizer disabled owner '{owner}' of bot '{name}'; it may connect "
    "again once the owner is enabled"
)
"""Why a disabled owner's bot's stream was closed."""


class OwnerStorage(Protocol):
    """The storage calls of the owner RPCs (blocking: run in worker threads)."""

    def course(self, name: str) -> StoredCourse | None: ...
    def owners(self, course: str) -> list[StoredOwner]: ...
    def issue_owner_token(self, course: str, name: str) -> IssuedOwnerToken: ...
    def set_owner_enabled(self, course: str, name: str, enabled: bool) -> StoredOwner: ...


def _timestamp(moment: dt.datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp


def owner_message(owner: StoredOwner) -> admin_pb.Owner:
    """A stored owner as an ``Owner`` message (never its token)."""
    message = admin_pb.Owner(
        course=owner.course,
        name=owner.name,
        enabled=owner.enabled,
        invite_id=owner.invite_id or "",
        bots=owner.bots,
    )
    message.created.CopyFrom(_timestamp(owner.created))
    if owner.token_issued is not None:
        message.token_issued.CopyFrom(_timestamp(owner.token_issued))
    return message


class OwnerAdmin:
    """The owner RPCs' handlers over the arena's storage and its lobby (to close streams)."""

    def __init__(self, arena: Any) -> None:
        self.arena = arena

    @property
    def storage(self) -> OwnerStorage:
        storage: OwnerStorage = self.arena.storage
        return storage

    async def _course(self, requested: str) -> str:
        name = caller().course_of(requested)
        if await asyncio.to_thread(self.storage.course, name) is None:
            raise not_found(f"course: no course is named '{name[:80]}'")
        return name

    async def _named(self, request: admin_pb.OwnerRequest) -> tuple[str, str]:
        try:
            check_owner(request.name)
        except BadOwnerError as exc:
            raise invalid(f"name: {exc}") from None
        return await self._course(request.course), request.name

    async def _stored(self, function: Any, *args: Any) -> Any:
        try:
            return await asyncio.to_thread(function, *args)
        except UnknownOwnerError as exc:
            raise not_found(str(exc)) from None

    async def list_owners(self, request: admin_pb.ListOwnersRequest) -> admin_pb.ListOwnersResponse:
        course = await self._course(request.course)
        found = await asyncio.to_thread(self.storage.owners, course)
        return admin_pb.ListOwnersResponse(owners=[owner_message(o) for o in found])

    async def disable(self, request: admin_pb.OwnerRequest) -> admin_pb.Owner:
        course, name = await self._named(request)
        owner: StoredOwner = await self._stored(self.storage.set_owner_enabled, course, name, False)
        for bot in owner.bots:  # written first, then acted on at once: their streams close
            self.arena.lobby.revoke(bot, OWNER_DISABLED.format(owner=name, name=bot))
        return owner_message(owner)

    async def enable(self, request: admin_pb.OwnerRequest) -> admin_pb.Owner:
        course, name = await self._named(request)
        return owner_message(await self._stored(self.storage.set_owner_enabled, course, name, True))

    async def issue(self, request: admin_pb.OwnerRequest) -> admin_pb.OwnerTokenResponse:
        course, name = await self._named(request)
        issued: IssuedOwnerToken = await self._stored(self.storage.issue_owner_token, course, name)
        return admin_pb.OwnerTokenResponse(
            owner=owner_message(issued.owner), owner_token=issued.token
        )


# -- the RPCs, mixed into AdminServicer ---------------------------------------------------------


class OwnerRpcs:
    """The four owner RPCs of ``AdminService``: the token first, then :class:`OwnerAdmin`."""

    async def ListOwners(  # noqa: N802
        self: Serving, request: admin_pb.ListOwnersRequest, context: Context
    ) -> admin_pb.ListOwnersResponse:
        return await self._serve(context, OwnerAdmin(self.arena).list_owners, request)

    async def DisableOwner(  # noqa: N802
        self: Serving, request: admin_pb.OwnerRequest, context: Context
    ) -> admin_pb.Owner:
        return await self._serve(context, OwnerAdmin(self.arena).disable, request)

    async def EnableOwner(  # noqa: N802
        self: Serving, request: admin_pb.OwnerRequest, context: Context
    ) -> admin_pb.Owner:
        return await self._serve(context, OwnerAdmin(self.arena).enable, request)

    async def IssueOwnerToken(  # noqa: N802
        self: Serving, request: admin_pb.OwnerRequest, context: Context
    ) -> admin_pb.OwnerTokenResponse:
        return await self._serve(context, OwnerAdmin(self.arena).issue, request)
