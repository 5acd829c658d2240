"""Hosted bots over gRPC: submit a version, list a bot's versions, read a match's logs.

Bot authors call them on ``RegistrationService`` with their owner token or the bot's own token
(``authorization: Bearer <token>``): the owner token acts for every bot of its owner, the bot's
token for that bot alone, and the hosted runner's token for the bot (server/store/hosted.py)
for none of this (it only connects the bot). A token that is neither is UNAUTHENTICATED and
spends one of the peer's refused attempts (``registration.AttemptLimiter``); another owner's bot
is PERMISSION_DENIED. The admin and a course's organizer list versions and read logs on
``AdminService`` (scoped as every admin call is, :mod:`.admin_scope`).

``SubmitBot`` checks the archive again as the packer did (``server/hosting/submissions.check``:
untrusted bytes), then stores it as the bot's next version, ``checking`` until the validator
runs it (docs/hosting.md). The refusals: INVALID_ARGUMENT naming the field (``archive:
member ../x: ...``), RESOURCE_EXHAUSTED for the versions a bot may submit a day (the message
says when the next may be), FAILED_PRECONDITION for a deleted bot.

A log is its bot's owner's and the course organizer's, never another student's
(``GetMatchLog``): what a student is not shown is NOT_FOUND, the same as no log at all, so the
answer never tells whether another bot of the match was hosted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping
from typing import Any, Final, NoReturn, Protocol

import grpc
from google.protobuf.timestamp_pb2 import Timestamp
from sqlalchemy.engine import Engine

from domino_arena.sdk.rules import GAMES
from domino_arena.server.hosting.spec import submissions
from domino_arena.server.logs import MAX_MESSAGE, bounded, quote
from domino_arena.server.net.admin_requests import (
    RequestError,
    bearer_token,
    bot_name_of,
    id_of,
    invalid,
    not_found,
    not_now,
)
from domino_arena.server.net.admin_scope import caller
from domino_arena.server.net.admin_serving import Context, Serving
from domino_arena.server.net.limits import peer_host
from domino_arena.server.net.wire import hosting_limits_from_proto
from domino_arena.server.store import hosted, hosted_settings
from domino_arena.server.store.bots import BotCheck, BotState, StoredBot, UnknownBotError
from domino_arena.server.store.hosted import BotVersion, MatchLog, VersionLimitError
from domino_arena.server.store.hosted_logs import bounded_text
from domino_arena.server.store.owners import StoredOwner
from domino_arena.server.store.tables import now
from domino_arena.v1 import admin_pb2 as admin_pb

AUTHOR_REFUSED: Final = (
    "token not accepted: send the bot's owner token or the bot's own token as "
    "'authorization: Bearer <token>' (it may have been rotated)"
)
MAX_LISTED_REPORT: Final = 16 << 10
"""Of each version's report a listing carries (a report is kept up to 64 KiB)."""
MAX_LISTED_VERSIONS: Final = 100
"""Versions a listing carries, newest first: with the reports, well under gRPC's 4 MiB."""
_STATUS: Final = {
    hosted.CHECKING: admin_pb.BOT_VERSION_STATUS_CHECKING,
    hosted.ACCEPTED: admin_pb.BOT_VERSION_STATUS_ACCEPTED,
    hosted.REJECTED: admin_pb.BOT_VERSION_STATUS_REJECTED,
    hosted.SUSPENDED: admin_pb.BOT_VERSION_STATUS_SUSPENDED,
}


class HostedStorage(Protocol):
    """The storage calls of these RPCs (blocking: run in worker threads)."""

    @property
    def engine(self) -> Engine: ...
    def bot(self, name: str) -> StoredBot | None: ...
    def check_own_token(self, name: str, token: str) -> BotCheck: ...
    def owner_of_token(self, token: str) -> StoredOwner | None: ...


def version_message(
    version: BotVersion, *, report_limit: int = hosted.MAX_LOG_BYTES
) -> admin_pb.BotVersion:
    """A stored version as a ``BotVersion`` message (its report cut to ``report_limit``)."""
    created = Timestamp()
    created.FromDatetime(version.created)
    return admin_pb.BotVersion(
        bot=version.bot,
        number=version.number,
        kind=version.kind,
        entry=version.entry,
        games=version.games,
        sha256=version.sha256,
        unpacked_bytes=version.unpacked_bytes,
        files=version.files,
        created=created,
        submitter=version.submitter,
        status=_STATUS[version.status],
        report=bounded_text(version.report, report_limit),
        crash_streak=version.crash_streak,
    )


def versions_message(found: list[BotVersion]) -> admin_pb.ListBotVersionsResponse:
    return admin_pb.ListBotVersionsResponse(
        versions=[
            version_message(v, report_limit=MAX_LISTED_REPORT) for v in found[:MAX_LISTED_VERSIONS]
        ]
    )


def logs_message(logs: list[MatchLog]) -> admin_pb.GetMatchLogResponse:
    return admin_pb.GetMatchLogResponse(
        logs=[
            admin_pb.MatchLog(bot=log.bot, version=log.version, text=log.text, crashed=log.crashed)
            for log in logs
        ]
    )


def games_of(games: Any) -> tuple[str, ...]:
    """The games a submission names, each once, in order.

    Raises:
        RequestError: INVALID_ARGUMENT: a name that is no game.
    """
    chosen: list[str] = []
    for game in games:
        if game not in GAMES:
            raise invalid(
                f"games: unknown game {quote(game, 40)}; expected some of {', '.join(GAMES)}"
            )
        if game not in chosen:
            chosen.append(game)
    return tuple(chosen)


def checked_limits(
    message: admin_pb.HostingLimits, field: str = "hosting_limits"
) -> dict[str, int]:
    """The sandbox limits a request sets (its non-zero fields), checked.

    Raises:
        RequestError: INVALID_ARGUMENT naming the limit and its range.
    """
    try:
        return hosted_settings.check_limits(hosting_limits_from_proto(message))
    except ValueError as exc:
        raise invalid(f"{field}: {exc}") from None


async def checked_pins(
    engine: Engine,
    pins: Mapping[str, int],
    *,
    course: str,
    bots: Collection[str],
    entrants: Collection[str] | None,
) -> dict[str, int]:
    """An organizer's version pins for a new tournament of ``course``, checked: each names a bot
    of the course (one of ``entrants`` when they are listed) and an accepted version of it.

    Raises:
        RequestError: INVALID_ARGUMENT naming the bot and what is wrong.
    """
    for bot in sorted(pins):
        if bot not in bots:
            raise invalid(f"version_pins: {quote(bot, 64)} is not a bot of course '{course}'")
        if entrants is not None and bot not in entrants:
            raise invalid(f"version_pins: '{bot}' is not an entrant of the tournament")
    try:
        await asyncio.to_thread(hosted_settings.check_pins, engine, pins)
    except ValueError as exc:
        raise invalid(str(exc)) from None
    return dict(pins)


def _no_log(match_id: str) -> RequestError:
    return not_found(f"match_id: no log of a hosted bot you may read is kept for match {match_id}")


# -- RegistrationService: bot authors -----------------------------------------------------------


class _Registration(Protocol):
    """What the mixin needs of ``RegistrationServicer``."""

    @property
    def storage(self) -> Any: ...
    @property
    def limiter(self) -> Any: ...


async def _author(self: _Registration, context: Context, name: str) -> tuple[StoredBot, str]:
    """The bot ``name`` and who acts for it (``owner ann``, ``bot ann-v1``), by the call's token.

    Raises:
        RequestError: UNAUTHENTICATED (neither token; one refused attempt spent),
            PERMISSION_DENIED (another owner's bot, or a disabled owner or bot),
            RESOURCE_EXHAUSTED (too many refused tokens from the peer).
    """
    storage: HostedStorage = self.storage
    peer = peer_host(context.peer() or "")
    if not self.limiter.allows(peer):
        raise RequestError(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "too many refused tokens from this address; wait and try again",
        )
    token = bearer_token(context.invocation_metadata())
    bot = await asyncio.to_thread(storage.bot, name)
    check = await asyncio.to_thread(storage.check_own_token, name, token)
    if bot is not None and check is BotCheck.OK:
        return bot, f"bot {name}"
    if check in (BotCheck.DISABLED, BotCheck.OWNER_DISABLED):
        raise RequestError(grpc.StatusCode.PERMISSION_DENIED, f"bot {name}: {check.value}")
    owner = await asyncio.to_thread(storage.owner_of_token, token)
    if owner is None:
        self.limiter.refused(peer)
        raise RequestError(grpc.StatusCode.UNAUTHENTICATED, AUTHOR_REFUSED)
    if not owner.enabled:
        raise RequestError(
            grpc.StatusCode.PERMISSION_DENIED, f"owner {owner.name} is disabled by the organizer"
        )
    if bot is None or bot.course != owner.course or bot.owner != owner.name:
        raise RequestError(
            grpc.StatusCode.PERMISSION_DENIED,
            f"name: bot '{name}' is not a bot of owner {owner.name} (course {owner.course})",
        )
    return bot, f"owner {owner.name}"


author: Final = _author
"""Who acts for a bot by the call's token (the owner's or the bot's own): also AllowPeople's."""


class HostedRegistrationRpcs:
    """``SubmitBot``, ``ListBotVersions`` and ``GetMatchLog`` of ``RegistrationService``."""

    async def SubmitBot(  # noqa: N802
        self: _Registration, request: admin_pb.SubmitBotRequest, context: Context
    ) -> admin_pb.BotVersion:
        try:
            name = bot_name_of(request.name)
            bot, who = await _author(self, context, name)
            if bot.state is BotState.DELETED:
                raise not_now(f"name: bot '{name}' is deleted; it takes no new version")
            version = await _submit(self.storage, request, name, who)
        except RequestError as exc:
            await _abort(context, exc.status, str(exc))
        return version_message(version)

    async def ListBotVersions(  # noqa: N802
        self: _Registration, request: admin_pb.ListBotVersionsRequest, context: Context
    ) -> admin_pb.ListBotVersionsResponse:
        try:
            name = bot_name_of(request.name)
            await _author(self, context, name)
            found = await asyncio.to_thread(hosted.versions, self.storage.engine, name)
        except RequestError as exc:
            await _abort(context, exc.status, str(exc))
        return versions_message(found)

    async def GetMatchLog(  # noqa: N802
        self: _Registration, request: admin_pb.GetMatchLogRequest, context: Context
    ) -> admin_pb.GetMatchLogResponse:
        try:
            match_id = id_of(request.match_id, "match_id", "a match id")
            if request.bot:
                await _author(self, context, bot_name_of(request.bot, "bot"))
                mine: set[str] = {request.bot}
            else:
                mine = await _owned(self, context)
            logs = await asyncio.to_thread(hosted.match_logs, self.storage.engine, match_id)
            shown = [log for log in logs if log.bot in mine]
            if not shown:
                raise _no_log(match_id)
        except RequestError as exc:
            await _abort(context, exc.status, str(exc))
        return logs_message(shown)


async def _owned(self: _Registration, context: Context) -> set[str]:
    """The bots of the owner whose token the call carries."""
    peer = peer_host(context.peer() or "")
    token = bearer_token(context.invocation_metadata())
    owner: StoredOwner | None = await asyncio.to_thread(self.storage.owner_of_token, token)
    if owner is None:
        self.limiter.refused(peer)
        raise RequestError(
            grpc.StatusCode.UNAUTHENTICATED,
            "token not accepted: send your owner token, or name the bot (bot) whose own token "
            "you send",
        )
    return set(owner.bots)


async def _submit(
    storage: HostedStorage, request: admin_pb.SubmitBotRequest, name: str, who: str
) -> BotVersion:
    """Check the submission's fields and archive and store it (module doc)."""
    if request.kind not in submissions.KINDS:
        raise invalid(
            f"kind: expected one of {', '.join(submissions.KINDS)}, got {quote(request.kind, 20)}"
        )
    games = games_of(request.games)
    if len(request.archive) > submissions.MAX_ARCHIVE_BYTES:
        raise invalid(
            f"archive: {len(request.archive):,} bytes; at most "
            f"{submissions.MAX_ARCHIVE_BYTES:,} may be submitted"
        )
    try:
        submission = await asyncio.to_thread(
            submissions.check, request.kind, request.entry, request.archive
        )
    except submissions.SubmissionError as exc:
        raise invalid(f"archive: {exc}") from None
    try:
        added: BotVersion = await asyncio.to_thread(
            hosted.add_version,
            storage.engine,
            name,
            submission,
            submitter=who,
            games=games,
            now=now(),
        )
    except VersionLimitError as exc:
        raise RequestError(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc)) from None
    except UnknownBotError as exc:
        raise not_now(f"name: {exc}") from None
    except ValueError as exc:
        raise invalid(str(exc)) from None
    return added


# -- AdminService: the admin and organizers -----------------------------------------------------


class HostedAdmin:
    """The admin side's handlers, scoped by the caller (:mod:`.admin_scope`)."""

    def __init__(self, arena: Any) -> None:
        self.storage: HostedStorage = arena.storage

    async def list_versions(
        self, request: admin_pb.ListBotVersionsRequest
    ) -> admin_pb.ListBotVersionsResponse:
        name = bot_name_of(request.name)
        bot = await asyncio.to_thread(self.storage.bot, name)
        if bot is None or not caller().sees(bot.course):
            raise not_found(f"name: no bot is named '{name}'")
        found = await asyncio.to_thread(hosted.versions, self.storage.engine, name)
        return versions_message(found)

    async def match_log(self, request: admin_pb.GetMatchLogRequest) -> admin_pb.GetMatchLogResponse:
        match_id = id_of(request.match_id, "match_id", "a match id")
        if request.bot:
            bot_name_of(request.bot, "bot")
        logs = await asyncio.to_thread(hosted.match_logs, self.storage.engine, match_id)
        shown = []
        for log in logs:
            if request.bot and log.bot != request.bot:
                continue
            bot = await asyncio.to_thread(self.storage.bot, log.bot)
            if caller().is_admin or (bot is not None and caller().sees(bot.course)):
                shown.append(log)
        if not shown:
            raise _no_log(match_id)
        return logs_message(shown)


class HostedAdminRpcs:
    """``ListBotVersions`` and ``GetMatchLog`` of ``AdminService``, through its token check."""

    async def ListBotVersions(  # noqa: N802
        self: Serving, request: admin_pb.ListBotVersionsRequest, context: Context
    ) -> admin_pb.ListBotVersionsResponse:
        return await self._serve(context, HostedAdmin(self.arena).list_versions, request)

    async def GetMatchLog(  # noqa: N802
        self: Serving, request: admin_pb.GetMatchLogRequest, context: Context
    ) -> admin_pb.GetMatchLogResponse:
        return await self._serve(context, HostedAdmin(self.arena).match_log, request)


async def _abort(context: Context, status: grpc.StatusCode, message: str) -> NoReturn:
    await context.abort(status, bounded(message, MAX_MESSAGE))
    raise AssertionError("abort returned")  # pragma: no cover
