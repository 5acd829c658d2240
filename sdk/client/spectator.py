"""The spectator's side of the protocol: what a referee is playing now, and one match live.

A :class:`Spectator` dials the referee's ``SpectatorService`` (``grpc.aio``). Without a token it
sees the matches whose live view is public; with one (``authorization: Bearer <token>`` on every
call: a token of a course, the admin's, or the referee's relay token a web face holds) also the
signed-in ones it may see (:class:`LiveView`). Either way a spectator gets public information
only. :meth:`Spectator.lobby` is one ``ListLive`` call: the watchable matches and the
connected bots. :meth:`Spectator.watch` follows one match and yields the rules library's own
types: :class:`WatchStarted` first, then a :class:`WatchedStep` per public step (with the
public table after it, a :class:`~domino_arena.sdk.rules.Observation` for ``SPECTATOR``), a
:class:`WatchedHandEnd` per scored hand, and :class:`WatchedEnd` last. A match that cannot be
watched raises :class:`WatchError` with the referee's code (``NOT_FOUND``: never ran here;
``FAILED_PRECONDITION``: already over; ``RESOURCE_EXHAUSTED``: this watcher fell behind).

Every message is decoded strictly (:mod:`domino_arena.sdk.wire`): a table that carried a hand
would raise :class:`~domino_arena.sdk.wire.ConversionError` rather than reach a page.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Final

import grpc

from domino_arena.sdk.match.results import Termination
from domino_arena.sdk.rules import Game, HandResult, LogEntry, Observation
from domino_arena.sdk.wire import (
    ConversionError,
    game_from_proto,
    hand_result_from_proto,
    spectator_table_from_proto,
    step_from_proto,
    termination_from_proto,
)
from domino_arena.v1 import admin_pb2, admin_pb2_grpc

from .errors import RefereeError
from .tls import ClientTls

LOBBY_TIMEOUT: Final = 5.0
"""Seconds a ``ListLive`` call may take."""


class WatchError(RefereeError):
    """The referee would not stream the match, or ended the stream early; ``code`` says why."""


class LiveView(enum.StrEnum):
    """Who may list and watch a match while it runs (the proto's ``LiveView``); its records
    are stored and shown as any other match's once it is over."""

    PUBLIC = "public"
    """Anyone, with no token (an unspecified live view, from a referee that predates it)."""
    SIGNED_IN = "signed-in"
    """Callers with a token of the match's course, the admin, and a web face with the
    referee's relay token (which shows it to browsers signed in to that course)."""
    NONE = "none"
    """Nobody while it runs."""


_LIVE_VIEW_OF: Final[dict[int, LiveView]] = {
    admin_pb2.LIVE_VIEW_UNSPECIFIED: LiveView.PUBLIC,
    admin_pb2.LIVE_VIEW_PUBLIC: LiveView.PUBLIC,
    admin_pb2.LIVE_VIEW_SIGNED_IN: LiveView.SIGNED_IN,
    admin_pb2.LIVE_VIEW_NONE: LiveView.NONE,
}


def live_view_from_proto(value: int, where: str) -> LiveView:
    """The live view of a wire value (unspecified is public, as the proto says).

    Raises:
        ConversionError: a value this version does not know (read as the strictest would
            hide a match the referee meant to show; refusing says why instead).
    """
    view = _LIVE_VIEW_OF.get(value)
    if view is None:
        raise ConversionError(where, str(value), "a known live view (public, signed-in, none)")
    return view


@dataclass(frozen=True, slots=True)
class LiveMatch:
    """A match that can be watched now, and where it stands."""

    match_id: str
    game: Game
    players: tuple[str, ...]
    tournament_id: str | None
    started: dt.datetime
    steps: int
    deal: int
    scores: tuple[int, ...]
    watchers: int
    """Spectators watching it at the referee now (a web face counts once, whatever its
    browsers)."""
    course: str = ""
    """The course whose match it is ("" from a referee that predates courses on the wire)."""
    live_view: LiveView = LiveView.PUBLIC


@dataclass(frozen=True, slots=True)
class ConnectedBot:
    """A bot connected to the referee now: the games it plays, the matches it sits in."""

    name: str
    games: tuple[str, ...]
    matches: int


@dataclass(frozen=True, slots=True)
class LiveLadder:
    """A ladder running now: its game, the games it started and how many of them are over."""

    game: Game
    started: int
    finished: int


@dataclass(frozen=True, slots=True)
class Lobby:
    """What a referee is playing now (oldest match first), who is connected, and the ladders
    running (by game name)."""

    matches: tuple[LiveMatch, ...]
    connected: tuple[ConnectedBot, ...]
    ladders: tuple[LiveLadder, ...] = ()


@dataclass(frozen=True, slots=True)
class WatchStarted:
    """The first item of a watch: the match, its game and its players."""

    match_id: str
    game: Game
    players: tuple[str, ...]
    tournament_id: str | None
    course: str = ""
    """The course whose match it is ("" from a referee that predates courses on the wire)."""
    live_view: LiveView = LiveView.PUBLIC


@dataclass(frozen=True, slots=True)
class WatchedStep:
    """One public step, the score per side and the deal number after it, and the table."""

    entry: LogEntry
    scores: tuple[int, ...]
    deal: int
    table: Observation | None
    """The public table after the step; None for the earlier steps of a late watcher's
    backlog (the last of them has it)."""


@dataclass(frozen=True, slots=True)
class WatchedHandEnd:
    """A scored hand and the totals per side after it."""

    hand: HandResult
    scores: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class WatchedEnd:
    """The last item: how the match ended (``winner`` is a side, None when nobody won)."""

    termination: Termination
    winner: int | None
    scores: tuple[int, ...]
    detail: str


WatchItem = WatchStarted | WatchedStep | WatchedHandEnd | WatchedEnd


class Spectator:
    """A spectator's client of one referee; ``async with Spectator("host:port") as s: ...``.

    ``token`` (a course's, the admin's or the referee's relay token) is sent as
    ``authorization: Bearer <token>`` with every call, so the signed-in matches it may see are
    listed and watchable too; without it, the public ones only.
    """

    def __init__(
        self,
        server: str,
        *,
        tls: ClientTls | None = None,
        channel_options: Sequence[tuple[str, int | str]] = (),
        token: str | None = None,
    ) -> None:
        self.server = server
        self._metadata: tuple[tuple[str, str], ...] = (
            () if token is None else (("authorization", f"Bearer {token}"),)
        )
        if tls is None:
            self._channel = grpc.aio.insecure_channel(server, options=channel_options)
        else:
            self._channel = grpc.aio.secure_channel(
                server, tls.credentials(), options=channel_options
            )
        self._stub = admin_pb2_grpc.SpectatorServiceStub(self._channel)

    async def __aenter__(self) -> Spectator:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the channel (every open watch ends)."""
        await self._channel.close()

    async def lobby(self, timeout: float = LOBBY_TIMEOUT) -> Lobby:
        """Return the watchable matches and the connected bots.

        Raises:
            WatchError: the referee could not be reached or refused (its gRPC status).
            ConversionError: the answer is malformed.
        """
        try:
            answer = await self._stub.ListLive(
                admin_pb2.ListLiveRequest(), metadata=self._metadata, timeout=timeout
            )
        except grpc.aio.AioRpcError as exc:
            raise WatchError(exc.code().name, exc.details() or "") from None
        return Lobby(
            matches=tuple(_live_match(m) for m in answer.matches),
            connected=tuple(
                ConnectedBot(b.name, tuple(b.games), b.matches) for b in answer.connected
            ),
            ladders=tuple(
                LiveLadder(
                    game_from_proto(ladder.game, "ladders.game"), ladder.started, ladder.finished
                )
                for ladder in answer.ladders
            ),
        )

    async def watch(self, match_id: str) -> AsyncIterator[WatchItem]:
        """Yield ``match_id``'s items from its start (the steps so far first) to its end.

        Raises:
            WatchError: the match cannot be watched (``NOT_FOUND``, ``FAILED_PRECONDITION``),
                the watcher fell behind (``RESOURCE_EXHAUSTED``) or the referee went away.
            ConversionError: a message is malformed (its field path says where).
        """
        call = self._stub.Watch(admin_pb2.WatchRequest(match_id=match_id), metadata=self._metadata)
        game: Game | None = None
        try:
            async for message in call:
                item = _item(message, game)
                if isinstance(item, WatchStarted):
                    game = item.game
                yield item
                if isinstance(item, WatchedEnd):
                    return
        except grpc.aio.AioRpcError as exc:
            raise WatchError(exc.code().name, exc.details() or "", match_id=match_id) from None
        finally:
            call.cancel()
        raise WatchError("UNAVAILABLE", "the stream ended before the match did", match_id=match_id)


def _live_match(message: admin_pb2.LiveMatch) -> LiveMatch:
    return LiveMatch(
        match_id=message.match_id,
        game=game_from_proto(message.game, "matches.game"),
        players=tuple(message.players),
        tournament_id=message.tournament_id or None,
        started=message.started.ToDatetime(dt.UTC),
        steps=message.steps,
        deal=message.deal,
        scores=tuple(message.scores),
        watchers=message.watchers,
        course=message.course,
        live_view=live_view_from_proto(message.live_view, "matches.live_view"),
    )


def _item(message: admin_pb2.SpectatorMessage, game: Game | None) -> WatchItem:
    kind = message.WhichOneof("message")
    if kind == "start":
        start = message.start
        return WatchStarted(
            match_id=start.match_id,
            game=game_from_proto(start.game, "start.game"),
            players=tuple(start.players),
            tournament_id=start.tournament_id or None,
            course=start.course,
            live_view=live_view_from_proto(start.live_view, "start.live_view"),
        )
    if game is None:
        raise ConversionError("message", f"a {kind} before the start", "the start first")
    if kind == "event":
        event = message.event
        table = spectator_table_from_proto(message.table) if message.HasField("table") else None
        return WatchedStep(
            step_from_proto(event.step, "event.step"), tuple(event.scores), event.deal, table
        )
    if kind == "hand_end":
        return WatchedHandEnd(
            hand_result_from_proto(message.hand_end), tuple(message.hand_end.scores)
        )
    if kind == "match_end":
        result = message.match_end.result
        termination = termination_from_proto(result.termination)
        if termination is None:
            raise ConversionError(
                "match_end.result.termination", str(result.termination), "a known termination"
            )
        return WatchedEnd(
            termination,
            None if result.winner < 0 else result.winner,
            tuple(result.scores),
            result.detail,
        )
    raise ConversionError("message", "missing", "one of start, event, hand_end, match_end")
