"""One match on a connection: its queue of messages, its history and the bot's hooks.

Each match is served by its own task from its own queue, so its messages reach the bot in order
and never overlap while different matches run concurrently. A request is answered with the
action the bot chose; when ``choose`` raised, with the exception's type and message
(``ActionReply.error``; the traceback is logged here), which the referee charges at once as a
``bot_error`` fault instead of letting the clock drain the bot's bank; when its answer cannot be
sent (not an action), with an empty reply, a ``malformed`` fault.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Final, TypeAlias

from domino_arena.sdk.bot import AsyncBot, Bot, set_current_clock
from domino_arena.sdk.match.bot_errors import BotError
from domino_arena.sdk.rules import Action, Game, Observation
from domino_arena.sdk.wire import (
    ConversionError,
    History,
    action_to_proto,
    bot_error_to_proto,
    clock_from_proto,
    fault_from_proto,
    hand_end_from_proto,
    match_end_from_proto,
    match_start_from_proto,
    observation_from_proto,
)
from domino_arena.v1 import games_pb2, referee_pb2

from .errors import RefereeError
from .players import Player, Players

logger: Final = logging.getLogger(__package__)

Inbox: TypeAlias = asyncio.Queue[tuple[referee_pb2.RefereeMessage, float]]
"""A match's messages with the ``time.monotonic()`` each arrived at."""

SendReply: TypeAlias = Callable[[referee_pb2.ActionReply], Awaitable[None]]
"""How a match hands its reply to the connection's writer."""


class Match:
    """One match on the connection: its bot, its queue of messages and the task serving it."""

    __slots__ = (
        "ended",
        "game",
        "history",
        "inbox",
        "latest_turn",
        "match_id",
        "player",
        "players",
        "seat",
        "send_reply",
        "task",
    )

    def __init__(
        self, match_id: str, player: Player, players: Players, send_reply: SendReply
    ) -> None:
        self.match_id = match_id
        self.player = player
        self.players = players
        """The connection's players: the worker threads, and the bot to forget at the end."""
        self.send_reply = send_reply
        self.inbox: Inbox = asyncio.Queue()
        self.latest_turn = 0
        """The newest turn the referee asked about; older requests are answered too late."""
        self.ended = False
        """The referee ended the match (its MatchEnd is queued)."""
        self.seat = -1
        self.game: Game | None = None
        self.task: asyncio.Task[None] | None = None
        self.history = History(match_id)
        """The public steps of the current deal, from the events (a request's observation
        comes without them)."""

    async def serve(self) -> None:
        """Deliver a match's messages to its bot, in order, until the match ends."""
        while True:
            message, received = await self.inbox.get()
            kind = message.WhichOneof("message")
            try:
                if kind == "request":
                    await self._events(message.request.events, "request")
                    await self._answer(message.request, received)
                elif kind == "match_start":
                    await self._start(message.match_start)
                elif kind == "event":
                    await self._events((message.event,), "")
                elif kind == "hand_end":
                    hand = message.hand_end
                    await self._events(hand.events, "hand_end")
                    await self._hook("on_hand_end", hand_end_from_proto(hand))
                elif kind == "fault":
                    await self._events(message.fault.events, "fault")
                    await self._fault(message.fault)
                elif kind == "match_end":
                    await self._events(message.match_end.events, "match_end")
                    await self._end(message.match_end)
                    return
            except RefereeError as exc:  # the stream is gone; the reader ends the connection
                logger.debug("match %s: could not send: %s", self.match_id, exc)
            except ConversionError as exc:
                logger.error(
                    "match %s: unreadable %s from the referee: %s", self.match_id, kind, exc
                )
            except Exception:  # a bug of ours must not silence the match for good
                logger.exception("match %s: failed to handle %s", self.match_id, kind)

    async def _start(self, start: referee_pb2.MatchStart) -> None:
        info = match_start_from_proto(start)
        game = info.game
        if info.snapshot is not None:
            self.history.restart(info.snapshot.history)
        self.seat = start.seat
        self.game = game
        logger.info(
            "match %s %s: %s, seat %d of %s",
            start.match_id,
            "resumed" if start.resumed else "started",
            game.describe(),
            start.seat,
            ", ".join(start.players),
        )
        await self._hook("on_match_start", info)

    async def _events(self, events: Sequence[referee_pb2.Event], holder: str) -> None:
        """Add the steps of ``events`` to the match's history and pass each to ``on_event``.

        ``holder`` names the message that carried them (for errors); "" for an ``Event`` sent
        on its own.
        """
        if not events:
            return
        bot = self.player.bot
        default = AsyncBot.on_event if isinstance(bot, AsyncBot) else Bot.on_event
        listens = getattr(type(bot), "on_event", default) is not default
        for info in self.history.add(events, holder):
            if listens:
                await self._hook("on_event", info)

    async def _fault(self, fault: referee_pb2.Fault) -> None:
        info = fault_from_proto(fault)
        logger.warning(
            "match %s turn %d: fault %s charged (%s); strikes %d%s",
            info.match_id,
            info.turn,
            info.kind,
            info.reason,
            info.strikes,
            ", forfeited" if info.forfeited else "",
        )
        await self._hook("on_fault", info)

    async def _end(self, end: referee_pb2.MatchEnd) -> None:
        self.players.release(self.match_id)
        info = match_end_from_proto(end, self.game, self.seat)
        logger.info(
            "match %s ended: %s, winner %s, scores %s%s",
            info.match_id,
            info.termination,
            "none" if info.winner is None else f"side {info.winner}",
            "/".join(str(s) for s in info.scores),
            f" ({info.detail})" if info.detail else "",
        )
        await self._hook("on_match_end", info)

    async def _hook(self, hook: str, info: object) -> None:
        """Call one of the bot's hooks; a hook that raises is logged and play goes on."""
        player = self.player
        try:
            if isinstance(player.bot, AsyncBot):
                await getattr(player.bot, hook)(info)
            else:
                async with player.lock:
                    getattr(player.bot, hook)(info)
        except Exception:
            logger.exception("match %s: the bot's %s hook raised", self.match_id, hook)

    async def _answer(self, request: referee_pb2.ActionRequest, received: float) -> None:
        if request.turn < self.latest_turn:
            logger.debug("match %s: skipped stale turn %d", self.match_id, request.turn)
            return
        reply = referee_pb2.ActionReply(match_id=request.match_id, turn=request.turn)
        action = await self._choose(request, received)
        if self.ended or request.turn < self.latest_turn:
            logger.info(
                "match %s: turn %d was answered after the referee moved on; reply dropped",
                self.match_id,
                request.turn,
            )
            return
        if isinstance(action, BotError):
            reply.error.CopyFrom(bot_error_to_proto(action))
        elif action is not None:
            reply.action.CopyFrom(action)
        await self.send_reply(reply)

    async def _choose(
        self, request: referee_pb2.ActionRequest, received: float
    ) -> games_pb2.Action | BotError | None:
        """Ask the bot: its action, the error its ``choose`` raised (logged with its
        traceback, sent as ``ActionReply.error``), or None when its answer cannot be sent
        (logged; sent as an empty reply)."""
        where = f"match {request.match_id} turn {request.turn}"
        try:
            observation = observation_from_proto(
                request.observation, "request.observation", history=tuple(self.history.steps)
            )
        except ConversionError as exc:
            logger.error("%s: unreadable observation from the referee: %s", where, exc)
            return None
        player = self.player
        set_current_clock(clock_from_proto(request.clock, received))
        try:
            if isinstance(player.bot, AsyncBot):
                action: object = await player.bot.choose(observation)
            elif player.bot.threaded:
                action = await self.players.in_thread(player, player.bot.choose, observation)
            else:
                async with player.lock:
                    action = player.bot.choose(observation)
        except Exception as exc:
            error = BotError.of(exc)
            logger.exception("%s: choose raised %s; sending it to the referee", where, error.reason)
            return error
        finally:
            set_current_clock(None)
        return _encode(action, observation, where)


def _encode(action: object, observation: Observation, where: str) -> games_pb2.Action | None:
    if not isinstance(action, Action):
        logger.error(
            "%s: choose returned %r, not an action; sending an empty reply "
            "(return one of observation.legal_actions)",
            where,
            action,
        )
        return None
    if action not in observation.legal_actions:
        shown = ", ".join(str(a) for a in observation.legal_actions)
        logger.warning(
            "%s: choose returned '%s', which is not legal (legal: %s)", where, action, shown
        )
    chosen: Action = action
    try:
        return action_to_proto(chosen)
    except ConversionError as exc:
        logger.error("%s: cannot send '%s': %s; sending an empty reply", where, chosen, exc)
        return None
