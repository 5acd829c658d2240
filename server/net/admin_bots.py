"""The admin API's bots and tokens: create, list, rotate, disable, enable, delete (admin.proto).

A token is shown once, in the answer of ``CreateBot`` or ``RotateBotToken``; the storage keeps
only its hash (server/store/bots.py). Withdrawing a token (rotate, disable, delete) is written
first and then acted on at once: the bot's open stream gets an UNAUTHENTICATED Error saying why
("token rotated", "bot disabled", "bot deleted") and ends UNAUTHENTICATED (the lobby's
``revoke``), and its seats in running matches are handled by their fault policy as after any lost
connection: a rotated bot that comes back with its new token within the reconnect grace resumes
them. A deleted bot's name stays taken and its matches, tournaments and ratings stay.

The refusals: INVALID_ARGUMENT (``name`` is not a bot name), ALREADY_EXISTS (the name is taken,
also by a deleted bot), NOT_FOUND (no such bot), FAILED_PRECONDITION (the bot is deleted).

:class:`BotAdmin` holds the handlers; :class:`BotRpcs` is the part of ``AdminServicer`` that
serves them, through the servicer's own token check (``AdminServicer._serve``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final, Protocol, TypeVar

import grpc
from google.protobuf.message import Message

from domino_arena.server.net.admin_answers import bot_info
from domino_arena.server.net.admin_requests import (
    RequestError,
    bot_name_of,
    not_found,
    not_now,
)
from domino_arena.server.play.roster import Roster
from domino_arena.server.store.bots import (
    DeletedBotError,
    DuplicateBotError,
    IssuedToken,
    StoredBot,
    UnknownBotError,
)
from domino_arena.v1 import admin_pb2 as admin_pb

REVOKED: Final = {
    "rotate": "token rotated: an admin gave bot '{name}' a new token; connect with that one",
    "disable": "bot disabled: an admin disabled bot '{name}'; it may connect again once enabled",
    "delete": "bot deleted: an admin deleted bot '{name}' for good",
}
"""Why a bot's stream was closed, per action: the in-band Error's message and the status's
details (they begin with the reason, as docs/admin.md states)."""


class BotStorage(Protocol):
    """The storage calls of the bot RPCs (all blocking: run in worker threads)."""

    def create_bot(self, name: str) -> IssuedToken: ...
    def bots(
        self, *, include_deleted: bool = False, course: str | None = None
    ) -> list[StoredBot]: ...
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

    def _info(self, bot: StoredBot) -> admin_pb.BotInfo:
        return bot_info(bot, self.roster.get(bot.name) is not None)

    def _revoke(self, name: str, action: str) -> None:
        self.roster.revoke(name, REVOKED[action].format(name=name))

    async def create(self, request: admin_pb.CreateBotRequest) -> admin_pb.CreateBotResponse:
        issued = await self._stored(self.storage.create_bot, bot_name_of(request.name))
        return admin_pb.CreateBotResponse(bot=self._info(issued.bot), token=issued.token)

    async def list_bots(self, request: admin_pb.ListBotsRequest) -> admin_pb.ListBotsResponse:
        found = await asyncio.to_thread(
            lambda: self.storage.bots(include_deleted=request.include_deleted)
        )
        return admin_pb.ListBotsResponse(bots=[self._info(bot) for bot in found])

    async def rotate(self, request: admin_pb.RotateBotTokenRequest) -> admin_pb.CreateBotResponse:
        name = bot_name_of(request.name)
        issued = await self._stored(self.storage.rotate_token, name)
        self._revoke(name, "rotate")
        return admin_pb.CreateBotResponse(bot=self._info(issued.bot), token=issued.token)

    async def disable(self, request: admin_pb.DisableBotRequest) -> admin_pb.BotInfo:
        name = bot_name_of(request.name)
        bot = await self._stored(self.storage.set_bot_enabled, name, False)
        self._revoke(name, "disable")
        return self._info(bot)

    async def enable(self, request: admin_pb.EnableBotRequest) -> admin_pb.BotInfo:
        bot = await self._stored(self.storage.set_bot_enabled, bot_name_of(request.name), True)
        return self._info(bot)

    async def delete(self, request: admin_pb.DeleteBotRequest) -> admin_pb.BotInfo:
        name = bot_name_of(request.name)
        bot = await self._stored(self.storage.delete_bot, name)
        self._revoke(name, "delete")
        return self._info(bot)


# -- the RPCs, mixed into AdminServicer ---------------------------------------------------------

Request = TypeVar("Request", bound=Message)
Response = TypeVar("Response", bound=Message)
_Context = grpc.aio.ServicerContext[Any, Any]


class Serving(Protocol):
    """What :class:`BotRpcs` needs of the servicer it is mixed into (``AdminServicer``)."""

    @property
    def bot_admin(self) -> BotAdmin: ...

    async def _serve(
        self,
        context: _Context,
        handler: Callable[[Request], Awaitable[Response]],
        request: Request,
    ) -> Response: ...


class BotRpcs:
    """The six bot RPCs of ``AdminService``: the admin token first, then :class:`BotAdmin`."""

    async def CreateBot(  # noqa: N802
        self: Serving, request: admin_pb.CreateBotRequest, context: _Context
    ) -> admin_pb.CreateBotResponse:
        return await self._serve(context, self.bot_admin.create, request)

    async def ListBots(  # noqa: N802
        self: Serving, request: admin_pb.ListBotsRequest, context: _Context
    ) -> admin_pb.ListBotsResponse:
        return await self._serve(context, self.bot_admin.list_bots, request)

    async def RotateBotToken(  # noqa: N802
        self: Serving, request: admin_pb.RotateBotTokenRequest, context: _Context
    ) -> admin_pb.CreateBotResponse:
        return await self._serve(context, self.bot_admin.rotate, request)

    async def DisableBot(  # noqa: N802
        self: Serving, request: admin_pb.DisableBotRequest, context: _Context
    ) -> admin_pb.BotInfo:
        return await self._serve(context, self.bot_admin.disable, request)

    async def EnableBot(  # noqa: N802
        self: Serving, request: admin_pb.EnableBotRequest, context: _Context
    ) -> admin_pb.BotInfo:
        return await self._serve(context, self.bot_admin.enable, request)

    async def DeleteBot(  # noqa: N802
        self: Serving, request: admin_pb.DeleteBotRequest, context: _Context
    ) -> admin_pb.BotInfo:
        return await self._serve(context, self.bot_admin.delete, request)
