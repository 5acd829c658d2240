"""``RegistrationService`` (admin.proto): bot owners register and re-key their own bots.

No admin token: ``RegisterBot`` is authorised by an invite code (docs/courses.md), checked,
used once and turned into a new owner and its first bot in one transaction
(``Storage.register_bot``); a code that is wrong, expired, revoked or used up is UNAUTHENTICATED
with one message for all, so a stranger learns nothing about which. A bad name or owner is
INVALID_ARGUMENT naming the field, a taken bot name or an owner the course has already
ALREADY_EXISTS (an invite never registers a bot for an existing owner: that was impersonation),
and the code is then not used. The bot's token and the owner token are in the answer, once.
Every later bot or version of that owner is registered with ``owner_token`` instead of a code
(``Storage.register_with_owner_token``), and ``RotateOwnerToken`` gives the owner a new one,
authorised by the current one (``authorization: Bearer <owner token>``).

``RotateOwnToken`` is authorised by the bot's own token (``authorization: Bearer <token>``,
checked as a bot's Hello is): the bot gets a new token, the old one stops at once and its open
streams are closed through the lobby, as the admin's rotation does (:mod:`.admin_bots`).

Guessing codes: a code holds 256 random bits, so guessing is hopeless; still, each peer address
(the client's IP, its port dropped) gets :class:`AttemptLimiter`'s token bucket of
:data:`ATTEMPT_BURST` refused codes, refilled at :data:`ATTEMPTS_PER_MINUTE` a minute, in memory
(per process; it forgets at a restart). Only a refused code or owner token spends one: a whole
class behind one school address registers with its good codes unhindered. With the bucket empty,
the call is RESOURCE_EXHAUSTED before the code is looked at. At most :data:`MAX_PEERS` peers are
remembered (the least recently seen forgotten first), so the limiter's memory is bounded whoever
calls.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final, NoReturn, Protocol

import grpc

from domino_arena.server.logs import MAX_MESSAGE, bounded
from domino_arena.server.net.admin_answers import bot_info
from domino_arena.server.net.admin_bots import REVOKED
from domino_arena.server.net.admin_owners import owner_message
from domino_arena.server.net.admin_requests import RequestError, bearer_token, bot_name_of
from domino_arena.server.net.hosted_bots import HostedRegistrationRpcs, HostedStorage, author
from domino_arena.server.net.limits import peer_host
from domino_arena.server.play.roster import Roster
from domino_arena.server.store.bots import (
    BadBotNameError,
    BadOwnerError,
    BotCheck,
    DuplicateBotError,
    IssuedToken,
    StoredBot,
)
from domino_arena.server.store.courses import INVITE_REFUSED, InviteError
from domino_arena.server.store.owners import (
    OWNER_TOKEN_REFUSED,
    IssuedOwnerToken,
    OwnerDisabledError,
    OwnerTakenError,
    OwnerTokenError,
)
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc

ATTEMPT_BURST: Final = 10
ATTEMPTS_PER_MINUTE: Final = 10
MAX_PEERS: Final = 10_000
TOKEN_REFUSED: Final = (
    "bot token not accepted: send the bot's current token as 'authorization: Bearer <token>' "
    "(it may have been rotated, or the bot disabled or deleted)"
)

_Context = grpc.aio.ServicerContext[Any, Any]


class RegistrationStorage(HostedStorage, Protocol):
    """The storage calls of the two RPCs (blocking: run in worker threads)."""

    def register_bot(self, code: str, name: str, owner: str) -> IssuedToken: ...
    def register_with_owner_token(self, token: str, name: str) -> IssuedToken: ...
    def rotate_owner_token(self, token: str) -> IssuedOwnerToken: ...
    def check_own_token(self, name: str, token: str) -> BotCheck: ...
    def rotate_token(self, name: str) -> IssuedToken: ...
    def set_allow_people(self, name: str, allow: bool) -> StoredBot: ...


class AttemptLimiter:
    """A token bucket per peer: :data:`ATTEMPT_BURST` refused attempts, then
    :data:`ATTEMPTS_PER_MINUTE` a minute (:meth:`allows` looks, :meth:`refused` spends); the
    least recently seen peer is forgotten past ``max_peers``."""

    def __init__(
        self,
        burst: int = ATTEMPT_BURST,
        per_minute: float = ATTEMPTS_PER_MINUTE,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_peers: int = MAX_PEERS,
    ) -> None:
        self.burst = burst
        self.per_minute = per_minute
        self.clock = clock
        self.max_peers = max_peers
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        """The peer -> (its attempts left, when counted), the most recently seen last."""

    def __len__(self) -> int:
        return len(self._buckets)

    def _left(self, peer: str) -> float:
        now = self.clock()
        left, then = self._buckets.pop(peer, (float(self.burst), now))
        left = min(float(self.burst), left + (now - then) * self.per_minute / 60)
        self._buckets[peer] = (left, now)
        while len(self._buckets) > self.max_peers:
            self._buckets.popitem(last=False)
        return left

    def allows(self, peer: str) -> bool:
        """Whether ``peer`` has an attempt left now (nothing spent)."""
        return self._left(peer) >= 1.0

    def refused(self, peer: str) -> None:
        """Spend one of ``peer``'s attempts: its code was refused."""
        self._buckets[peer] = (max(0.0, self._left(peer) - 1.0), self.clock())


class RegistrationServicer(HostedRegistrationRpcs, admin_pb_grpc.RegistrationServiceServicer):
    """``RegisterBot`` and ``RotateOwnToken`` over the storage and the lobby (``roster``); the
    hosted bots' calls are :class:`~.hosted_bots.HostedRegistrationRpcs`'s."""

    def __init__(
        self,
        storage: RegistrationStorage,
        roster: Roster,
        limiter: AttemptLimiter | None = None,
    ) -> None:
        self.storage = storage
        self.roster = roster
        self.limiter = limiter if limiter is not None else AttemptLimiter()

    def _info(self, issued: IssuedToken) -> admin_pb.CreateBotResponse:
        bot = issued.bot
        info = bot_info(bot, self.roster.get(bot.name) is not None)
        return admin_pb.CreateBotResponse(
            bot=info, token=issued.token, owner_token=issued.owner_token
        )

    async def RegisterBot(  # noqa: N802
        self, request: admin_pb.RegisterBotRequest, context: _Context
    ) -> admin_pb.CreateBotResponse:
        peer = peer_host(context.peer() or "")
        try:
            if not self.limiter.allows(peer):
                raise RequestError(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"too many refused invite codes or owner tokens from this address: at most "
                    f"{self.limiter.burst}, then {self.limiter.per_minute:g} a minute; wait "
                    "and try again",
                )
            name = bot_name_of(request.name)
            issued = await self._register(request, name)
        except InviteError:
            self.limiter.refused(peer)
            await _abort(context, grpc.StatusCode.UNAUTHENTICATED, INVITE_REFUSED)
        except OwnerTokenError:
            self.limiter.refused(peer)
            await _abort(context, grpc.StatusCode.UNAUTHENTICATED, OWNER_TOKEN_REFUSED)
        except OwnerDisabledError as exc:
            await _abort(context, grpc.StatusCode.PERMISSION_DENIED, str(exc))
        except OwnerTakenError as exc:
            await _abort(context, grpc.StatusCode.ALREADY_EXISTS, str(exc))
        except BadBotNameError as exc:
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"name: {exc}")
        except BadOwnerError as exc:
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"owner: {exc}")
        except DuplicateBotError as exc:
            await _abort(
                context,
                grpc.StatusCode.ALREADY_EXISTS,
                f"name: {exc} (a deleted bot's name stays taken); pick another name"
                + ("" if request.owner_token else ": your invite code was not used"),
            )
        except RequestError as exc:
            await _abort(context, exc.status, str(exc))
        return self._info(issued)

    async def _register(self, request: admin_pb.RegisterBotRequest, name: str) -> IssuedToken:
        """The registration ``request`` asks for: with an owner token, or with an invite."""
        if request.owner_token:
            if request.invite_code or request.owner:
                raise RequestError(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "owner_token: send it alone: it names the owner and the course (an "
                    "invite_code or owner is for a first registration)",
                )
            return await asyncio.to_thread(
                self.storage.register_with_owner_token, request.owner_token, name
            )
        return await asyncio.to_thread(
            self.storage.register_bot, request.invite_code, name, request.owner
        )

    async def RotateOwnerToken(  # noqa: N802
        self, request: admin_pb.RotateOwnerTokenRequest, context: _Context
    ) -> admin_pb.OwnerTokenResponse:
        peer = peer_host(context.peer() or "")
        try:
            if not self.limiter.allows(peer):
                raise RequestError(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    "too many refused invite codes or owner tokens from this address; wait "
                    "and try again",
                )
            token = bearer_token(context.invocation_metadata())
            issued = await asyncio.to_thread(self.storage.rotate_owner_token, token)
        except OwnerTokenError:
            self.limiter.refused(peer)
            await _abort(context, grpc.StatusCode.UNAUTHENTICATED, OWNER_TOKEN_REFUSED)
        except RequestError as exc:
            await _abort(context, exc.status, str(exc))
        return admin_pb.OwnerTokenResponse(
            owner=owner_message(issued.owner), owner_token=issued.token
        )

    async def RotateOwnToken(  # noqa: N802
        self, request: admin_pb.RotateOwnTokenRequest, context: _Context
    ) -> admin_pb.CreateBotResponse:
        try:
            name = bot_name_of(request.name)
            token = bearer_token(context.invocation_metadata())
            check = await asyncio.to_thread(self.storage.check_own_token, name, token)
            if check is not BotCheck.OK:
                raise RequestError(grpc.StatusCode.UNAUTHENTICATED, TOKEN_REFUSED)
            issued = await asyncio.to_thread(self.storage.rotate_token, name)
        except RequestError as exc:
            await _abort(context, exc.status, str(exc))
        except (KeyError, ValueError):  # deleted or gone between the check and the rotation
            await _abort(context, grpc.StatusCode.UNAUTHENTICATED, TOKEN_REFUSED)
        self.roster.revoke(name, REVOKED["own"].format(name=name))
        return self._info(issued)

    async def AllowPeople(  # noqa: N802
        self, request: admin_pb.AllowPeopleRequest, context: _Context
    ) -> admin_pb.BotInfo:
        """Let people of the bot's course play against it, or stop (docs/people.md); by the
        owner's token or the bot's own, as a hosted bot's calls are."""
        try:
            name = bot_name_of(request.bot, "bot")
            await author(self, context, name)
            changed = await asyncio.to_thread(self.storage.set_allow_people, name, request.allow)
        except RequestError as exc:
            await _abort(context, exc.status, str(exc))
        except (KeyError, ValueError) as exc:  # deleted meanwhile
            await _abort(context, grpc.StatusCode.FAILED_PRECONDITION, f"bot: {exc}")
        return bot_info(changed, self.roster.get(name) is not None)


async def _abort(context: _Context, status: grpc.StatusCode, message: str) -> NoReturn:
    await context.abort(status, bounded(message, MAX_MESSAGE))
    raise AssertionError("abort returned")  # pragma: no cover
