"""The admin API's bots and tokens: create, list, rotate, disable, enable, delete (admin.proto).

A token is shown once, in the answer of ``CreateBot`` or ``RotateBotToken``; the storage keeps
only its hash (server/store/bots.py). Withdrawing a token (rotate, disable, delete) is written
first and then acted on at once: the bot's open stream gets an UNAUTHENTICATED Error saying why
("token rotated", "bot disabled", "bot deleted") and ends UNAUTHENTICATED (the lobby's
``revoke``), and its seats in running matches are handled by their fault policy as after any lost
connection: a rotated bot that comes back with its new token within the reconnect grace resumes
them. A deleted bot's name stays taken and its matches, tournaments and ratings stay.

The refusals: INVALID_ARGUMENT (``name`` is not a bot name, ``owner`` not an owner), ALREADY_EXISTS
(the name is taken, also by a deleted bot), NOT_FOUND (no such bot, or no such course),
FAILED_PRECONDITION (the bot is deleted).

Every call is scoped by its caller (:mod:`.admin_scope`): an organizer creates bots in its own
course, lists only them, and a bot of another course is NOT_FOUND with the same message as a
bot that does not exist; a ``course`` field naming another course is PERMISSION_DENIED.

:class:`BotAdmin` holds the handlers; :class:`BotRpcs` is the part of ``AdminServicer`` that
serves them, through the servicer's own token check (``AdminServicer._serve``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final, Protocol, TypeVar

import grpc

from domino_arena.server.logs import quote
from domino_arena.server.net.admin_answers import bot_info
from domino_arena.server.net.admin_requests import (
    RequestError,
    bot_name_of,
    invalid,
    not_found,
    not_now,
)
from domino_arena.server.net.admin_scope import caller
from domino_arena.server.net.admin_serving import Context, Serving
from domino_arena.server.play.roster import Roster
from domino_arena.server.store.bots import (
    BadOwnerError,
    DeletedBotError,
    DuplicateBotError,
    IssuedToken,
    StoredBot,
    UnknownBotError,
)
from domino_arena.server.store.courses import StoredCourse
from domino_arena.v1 import admin_pb2 as admin_pb

REVOKED: Final = {
    "rotate": "token rotated: an admin gave bot '{name}' a new token; connect with that one",
    "disable": "bot disabled: an admin disabled bot '{name}'; it may connect again once enabled",
    "delete": "bot deleted: an admin deleted bot '{name}' for good",
    "own": "token rotated: the owner of bot '{name}' made it a new token; connect with that one",
}
"""Why a bot's stream was closed, per action: the in-band Error's message and the status's
details (they begin with the reason, as docs/admin.md states)."""


class BotStorage(Protocol):
    """The storage calls of the bot RPCs (all blocking: run in worker threads)."""

    def create_bot(self, name: str, *, course: str = ..., owner: str = "") -> IssuedToken: ...
    def bots(
        self, *, include_deleted: bool = False, course: str | None = None
    ) -> list[StoredBot]: ...
    def bot(self, name: str) -> StoredBot | None: ...
    def course(self, name: str) -> StoredCourse | None: ...
    def rotate_token(self, name: str) -> IssuedToken: ...
    def set_bot_enabled(self, name: str, enabled: bool) -> StoredBot: ...
    def delete_bot(self, name: str) -> StoredBot: ...


T = TypeVar("T")


class BotAdmin:
    """The bot RPCs' handlers over the storage (``storage``) and the connected bots (``roster``)."""

    def __init__(self, storage: BotStorage, roster: Roster) -> None:
        self.storage = storage
        self.roster = roster

    async def _stored(self, function: Callable[..., T], *args: Any) -> T:
        """Run a storage call in a worker thread; its refusals become the call's status."""
        try:
            return await asyncio.to_thread(function, *args)
        except DuplicateBotError as exc:
            raise RequestError(
                grpc.StatusCode.ALREADY_EXISTS,
                f"name: {exc} (a deleted bot's name stays taken); pick another name",
            ) from None
        except UnknownBotError as exc:
            raise not_found(f"name: {exc}") from None
        except DeletedBotError as exc:
            raise not_now(str(exc)) from None
        except BadOwnerError as exc:
            raise invalid(f"owner: {exc}") from None

    async def scoped(self, name: str, field: str = "name") -> StoredBot:
        """The bot ``name`` if the caller sees its course; else NOT_FOUND, the same answer as
        for a bot that does not exist (an organizer learns nothing of other courses' bots)."""
        bot_name_of(name, field)
        bot = await asyncio.to_thread(self.storage.bot, name)
        if bot is None or not caller().sees(bot.course):
            raise not_found(f"{field}: no bot is named '{name}'")
        return bot

    async def existing_course(self, requested: str) -> str:
        """The course a new bot goes in (:meth:`Caller.course_of`), which must exist."""
        course = caller().course_of(requested)
        if await asyncio.to_thread(self.storage.course, course) is None:
            raise not_found(f"course: no course is named {quote(course)}")
        return course

    def _info(self, bot: StoredBot) -> admin_pb.BotInfo:
        return bot_info(bot, self.roster.get(bot.name) is not None)

    def _revoke(self, name: str, action: str) -> None:
        self.roster.revoke(name, REVOKED[action].format(name=name))

    async def create(self, request: admin_pb.CreateBotRequest) -> admin_pb.CreateBotResponse:
        name = bot_name_of(request.name)
        course = await self.existing_course(request.course)
        issued = await self._stored(
            lambda: self.storage.create_bot(name, course=course, owner=request.owner)
        )
        return admin_pb.CreateBotResponse(bot=self._info(issued.bot), token=issued.token)

    async def list_bots(self, request: admin_pb.ListBotsRequest) -> admin_pb.ListBotsResponse:
        course = caller().listing(request.course)
        found = await asyncio.to_thread(
            lambda: self.storage.bots(include_deleted=request.include_deleted, course=course)
        )
        return admin_pb.ListBotsResponse(bots=[self._info(bot) for bot in found])

    async def rotate(self, request: admin_pb.RotateBotTokenRequest) -> admin_pb.CreateBotResponse:
        name = (await self.scoped(request.name)).name
        issued = await self._stored(self.storage.rotate_token, name)
        self._revoke(name, "rotate")
        return admin_pb.CreateBotResponse(bot=self._info(issued.bot), token=issued.token)

    async def disable(self, request: admin_pb.DisableBotRequest) -> admin_pb.BotInfo:
        name = (await self.scoped(request.name)).name
        bot = await self._stored(self.storage.set_bot_enabled, name, False)
        self._revoke(name, "disable")
        return self._info(bot)

    async def enable(self, request: admin_pb.EnableBotRequest) -> admin_pb.BotInfo:
        name = (await self.scoped(request.name)).name
        bot = await self._stored(self.storage.set_bot_enabled, name, True)
        return self._info(bot)

    async def delete(self, request: admin_pb.DeleteBotRequest) -> admin_pb.BotInfo:
        name = (await self.scoped(request.name)).name
        bot = await self._stored(self.storage.delete_bot, name)
        self._revoke(name, "delete")
        return self._info(bot)


# -- the RPCs, mixed into AdminServicer ---------------------------------------------------------


class BotServing(Serving, Protocol):
    """:class:`~.admin_serving.Serving` with the bot RPCs' handlers."""

    @property
    def bot_admin(self) -> BotAdmin: ...


class BotRpcs:
    """The six bot RPCs of ``AdminService``: the admin token first, then :class:`BotAdmin`."""

    async def CreateBot(  # noqa: N802
        self: BotServing, request: admin_pb.CreateBotRequest, context: Context
    ) -> admin_pb.CreateBotResponse:
        return await self._serve(context, self.bot_admin.create, request)

    async def ListBots(  # noqa: N802
        self: BotServing, request: admin_pb.ListBotsRequest, context: Context
    ) -> admin_pb.ListBotsResponse:
        return await self._serve(context, self.bot_admin.list_bots, request)

    async def RotateBotToken(  # noqa: N802
        self: BotServing, request: admin_pb.RotateBotTokenRequest, context: Context
    ) -> admin_pb.CreateBotResponse:
        return await self._serve(context, self.bot_admin.rotate, request)

    async def DisableBot(  # noqa: N802
        self: BotServing, request: admin_pb.DisableBotRequest, context: Context
    ) -> admin_pb.BotInfo:
        return await self._serve(context, self.bot_admin.disable, request)

    async def EnableBot(  # noqa: N802
        self: BotServing, request: admin_pb.EnableBotRequest, context: Context
    ) -> admin_pb.BotInfo:
        return await self._serve(context, self.bot_admin.enable, request)

    async def DeleteBot(  # noqa: N802
        self: BotServing, request: admin_pb.DeleteBotRequest, context: Context
    ) -> admin_pb.BotInfo:
        return await self._serve(context, self.bot_admin.delete, request)
