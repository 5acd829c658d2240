"""One person's seat in one match: the web face plays it through the referee as a client.

A :class:`SeatClient` is the SDK's :class:`~domino_arena.sdk.client.Connection` (the seat's
name and one-match token from ``SeatPerson``) with itself as the :class:`AsyncBot`: the referee
sees one more remote seat, with its clock, faults and record unchanged (docs/decisions.md,
decision 21). Its ``choose`` publishes the seat's observation and waits for the person's action
(:meth:`SeatClient.act`, which checks it against the legal actions first and says what is wrong
otherwise), or for the clock to run out.

What the person sees is the seat's OWN view only: the table is ``draw_public`` of the seat's
last observation plus its own hand (``own_hand``, ``viewer``), and the other seats' steps come
from the public events the referee sends that seat. Those arrive in a batch with the seat's
next request, so they are shown one at a time, :attr:`SeatClient.pace` seconds apart (at most
:data:`PACE_BUDGET` seconds a batch), before the person's turn: the person sees the bots play at
a human speed. A new deal clears the table and the steps of the last one (the old hand's tiles
are someone else's now) until the seat's first observation of the new deal.

Every change bumps :attr:`SeatClient.version` and wakes the page's event streams, which send the
view as it is then (a browser that was busy skips to the latest: nothing piles up).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Final

from domino_arena.sdk.bot import (
    AsyncBot,
    Clock,
    FaultInfo,
    HandEndInfo,
    MatchEndInfo,
    MatchEvent,
    MatchStartInfo,
    current_clock,
)
from domino_arena.sdk.client import Connection, Players, RefereeError
from domino_arena.sdk.client.tls import ClientTls
from domino_arena.sdk.rules import (
    CHANCE,
    Action,
    Discard,
    Game,
    InvalidActionError,
    Observation,
    Play,
    parse_action,
)
from domino_arena.server.web.live_feed import replay_url
from domino_arena.server.web.people import words
from domino_arena.server.web.people.tables import Person, Seated
from domino_arena.server.web.table import draw_public

PACE: Final = 0.8
"""Seconds between two steps of the other seats, as the person's page shows them."""
PACE_BUDGET: Final = 4.0
"""The most a batch of steps is paced in all (a bot that draws ten tiles does not cost the
person's clock eight seconds: the referee's clock runs while the steps are shown)."""
MOVES_KEPT: Final = 12
"""The latest steps of the deal the page lists."""
SLACK_SECONDS: Final = 0.5
"""How long past the seat's whole time (move, bank and grace) ``choose`` still waits before it
gives up: by then the referee has charged the timeout and moved on, and its next request (whose
clock runs) waits behind this one."""

Seats = tuple[str, ...]


class ActError(ValueError):
    """A posted action the seat cannot play now; the message says why (and what it can)."""


class SeatClient(AsyncBot):
    """One person's seat: the connection to the referee, the seat's view, the waiting turn."""

    name = "person"

    def __init__(
        self,
        seated: Seated,
        *,
        person: Person,
        owner: object,
        game: Game,
        seat: int,
        server: str,
        tls: ClientTls | None = None,
        pace: float = PACE,
        names: Callable[[Any], Any] = lambda data: data,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``names`` hides from the view the names the person may not see (an anonymous
        course's other students and their bots: :class:`~..scoped.PublicNames`)."""
        self.match_id = seated.match_id
        self.person = person
        self.owner = owner
        """Who may see and act in the match (the session that started it)."""
        self.game = game
        self.seat = seat
        self.players: Seats = seated.players
        self.people: tuple[bool, ...] = ()
        """Which seats people play, as the referee says at the start."""
        self.pace = pace
        self.names = names
        self.clock = clock
        self._seated = seated
        self._server = server
        self._tls = tls
        self.state = "starting"
        """``starting`` (not connected yet), ``waiting`` (another seat moves), ``turn``,
        ``over``."""
        self.steps = 0
        """Steps of the match the seat has been told of (deals included): the record's index."""
        self.deal = 0
        self.scores: tuple[int, ...] = ()
        self.observation: Observation | None = None
        """The seat's last observation in the current deal (None after a new deal, until the
        seat's first request in it)."""
        self.hand: list[str] = []
        self.moves: deque[str] = deque(maxlen=MOVES_KEPT)
        self.notice: str | None = None
        self.hand_end: str | None = None
        self.end: dict[str, Any] | None = None
        self.turn_clock: Clock | None = None
        self.grace_ms = seated.clock.grace_ms
        self.version = 0
        self.streams = 0
        """The page's event streams open now (bounded per match)."""
        self.ended_at: float | None = None
        self._changed = asyncio.Event()
        self._turn: asyncio.Future[Action] | None = None
        self._sent: deque[Action] = deque()
        """Actions the person sent whose step has not come back yet (so it is not told twice)."""
        self._paced = 0.0
        self._task: asyncio.Task[None] | None = None

    # -- the connection -------------------------------------------------------------------------

    def start(self) -> None:
        """Connect the seat (in the running loop); the referee starts the match then."""
        connection = Connection(
            Players(self),
            server=self._server,
            name=self._seated.seat_name,
            token=self._seated.seat_token,
            games=(self.game.name,),
            tls=self._tls,
        )
        self._task = asyncio.create_task(self._serve(connection), name=f"seat {self.match_id}")

    async def _serve(self, connection: Connection) -> None:
        try:
            await connection.serve()
        except RefereeError as exc:
            if self.state != "over":
                self._finish(
                    None, f"the connection to the referee ended: {exc.message or exc.code}"
                )

    async def stop(self) -> None:
        """Close the seat's connection and wait for it (the match, if not over, plays on
        without the person: the referee's clock charges their seat)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.state != "over":
            self._finish(None, "this web face stopped playing the seat")

    @property
    def over(self) -> bool:
        return self.state == "over"

    # -- changes and who waits for them ---------------------------------------------------------

    def _publish(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = asyncio.Event()

    async def changed(self, since: int, timeout: float) -> bool:
        """Wait until the view is newer than ``since``; False after ``timeout`` s of nothing."""
        if self.version > since:
            return True
        event = self._changed
        try:
            async with asyncio.timeout(timeout):
                await event.wait()
        except TimeoutError:
            return False
        return True

    async def _paced_step(self) -> None:
        """Publish a step of another seat and let it show before the next one."""
        self._publish()
        wait = min(self.pace, PACE_BUDGET - self._paced)
        if wait > 0:
            self._paced += wait
            await asyncio.sleep(wait)

    # -- the AsyncBot: what the referee sends ---------------------------------------------------

    async def on_match_start(self, info: MatchStartInfo) -> None:
        self.seat = info.seat
        self.people = info.people
        self.state = "waiting"
        self.grace_ms = info.time_limits.grace_ms
        self._publish()

    async def on_event(self, event: MatchEvent) -> None:
        entry = event.step
        self.steps += 1
        self.scores = event.scores
        if entry.seat == CHANCE:
            # A new deal: the last deal's tiles and steps are not this seat's business now.
            self.deal = event.deal
            self.observation = None
            self.hand = []
            self.moves.clear()
            self._sent.clear()
            self.moves.append(f"Deal {event.deal}: the tiles are dealt")
            await self._paced_step()
            return
        if entry.seat == self.seat and self._sent and self._sent[0] == entry.action:
            self._sent.popleft()  # the person's own move, shown when it was sent
            self._publish()
            return
        text = words.step_text(self.players, entry.seat, entry.action, self.seat, self.game)
        if entry.seat == self.seat:
            text += " (played for you by the referee)"
            self._sent.clear()
        self.moves.append(text)
        await self._paced_step()

    async def choose(self, observation: Observation) -> Action:
        loop = asyncio.get_running_loop()
        self.observation = observation
        self.hand = [str(t) for t in observation.hand]
        self.turn_clock = current_clock()
        self.state = "turn"
        self._paced = 0.0
        turn: asyncio.Future[Action] = loop.create_future()
        self._turn = turn
        self._publish()
        clock = self.turn_clock
        whole = 3600.0 if clock is None else (clock.move_ms + clock.bank_ms + self.grace_ms) / 1000
        try:
            async with asyncio.timeout(whole + SLACK_SECONDS):
                return await turn
        except TimeoutError:
            self.notice = "Your time ran out: the referee played on."
            raise TimeoutError("the person did not answer within the clock") from None
        finally:
            self._turn = None
            self.turn_clock = None
            if self.state == "turn":
                self.state = "waiting"
            self._publish()

    async def on_hand_end(self, hand: HandEndInfo) -> None:
        result = hand.result
        points = " / ".join(str(p) for p in result.points)
        scores = " / ".join(str(s) for s in hand.scores)
        detail = f": {result.detail}" if result.detail else ""
        self.hand_end = (
            f"End of deal {result.deal}{detail}; points by side {points}; scores {scores}."
        )
        self.scores = hand.scores
        await self._paced_step()

    async def on_fault(self, fault: FaultInfo) -> None:
        lost = "; the seat forfeited the game" if fault.forfeited else ""
        self.notice = (
            f"A fault was charged to your seat: {fault.reason} (strike {fault.strikes}{lost})."
        )
        self._publish()

    async def on_match_end(self, result: MatchEndInfo) -> None:
        self._finish(result, None)
        task = self._task
        if task is not None:
            asyncio.get_running_loop().call_soon(task.cancel)

    def _finish(self, result: MatchEndInfo | None, why: str | None) -> None:
        self.state = "over"
        self.ended_at = self.clock()
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()
        if result is None:
            self.end = {"result": why or "the match ended", "replay": replay_url(self.match_id)}
        else:
            self.scores = result.scores
            self.end = {
                "termination": None if result.termination is None else result.termination.value,
                "winner": result.winner,
                "scores": list(result.scores),
                "detail": result.detail,
                "result": self.result_text(result),
                "replay": replay_url(self.match_id),
            }
        self._publish()

    def result_text(self, result: MatchEndInfo) -> str:
        """One line: who won with which scores (the person's side named "your side"), or why
        nobody did."""
        scores = " / ".join(str(s) for s in result.scores)
        termination = result.termination
        if result.winner is None or termination is None:
            why = f" ({result.detail})" if result.detail else ""
            ended = "unknown" if termination is None else termination.value
            return f"no winner: {ended}{why}, scores {scores}"
        side = self.game.sides[result.winner]
        if self.seat in side:
            who = "you win" if len(side) == 1 else "your side wins"
        else:
            names = ", ".join(
                words.who(self.players, seat, self.seat)
                for seat in side
                if seat < len(self.players)
            )
            who = f"side {result.winner} ({names}) wins"
        return f"{who}{termination.how_won}, scores {scores}"

    # -- the person's side ----------------------------------------------------------------------

    def act(self, text: str) -> None:
        """Play ``text`` (an action's canonical text) for the person.

        Raises:
            ActError: the match is over, it is not the person's turn, or the text is not one
                of the legal actions (the message lists them).
        """
        if self.state == "over":
            raise ActError("the match is over: nothing more to play")
        turn, observation = self._turn, self.observation
        if turn is None or turn.done() or observation is None or self.state != "turn":
            raise ActError(f"not your turn: {self.waiting_for()}")
        legal = observation.legal_actions
        listed = "; ".join(str(a) for a in legal)
        try:
            action = parse_action(text.strip())
        except InvalidActionError as exc:
            raise ActError(f"action: {exc}; legal now: {listed}") from None
        if action not in legal:
            raise ActError(f"action: {text.strip()[:80]!r} is not legal now; legal now: {listed}")
        self._sent.append(action)
        self.moves.append(words.step_text(self.players, self.seat, action, self.seat, self.game))
        if isinstance(action, Play | Discard) and action.tile is not None:
            with contextlib.suppress(ValueError):
                self.hand.remove(str(action.tile))
        self.state = "waiting"
        self._paced = 0.0  # the next batch of the others' steps is paced afresh
        turn.set_result(action)
        self._publish()

    def waiting_for(self) -> str:
        """Whom the person waits for now, in words."""
        if self.state == "starting":
            return "the match is starting"
        observation = self.observation
        if observation is None or observation.current_seat == self.seat:
            return "the other seats are playing"
        seat = observation.current_seat
        if not 0 <= seat < len(self.players):
            return "the other seats are playing"
        return f"{words.who(self.players, seat, self.seat)} is to move"

    def remaining(self) -> dict[str, int] | None:
        """The time left for the person's move now (move time, then the bank), in ms."""
        clock = self.turn_clock
        if clock is None:
            return None
        elapsed = int((self.clock() - clock.received) * 1000)
        move_left = max(0, clock.move_ms - elapsed)
        bank_left = max(0, clock.bank_ms - max(0, elapsed - clock.move_ms))
        return {"move_ms": move_left, "bank_ms": bank_left}

    def view(self) -> dict[str, Any]:
        """What the person's page shows now: the seat's own view, never another's."""
        observation = self.observation
        table = None
        if observation is not None:
            table = draw_public(observation)
            table["own_hand"] = list(self.hand)
            table["viewer"] = self.seat
        moon = self.game.name == "moon"
        legal = (
            [
                {
                    "action": str(a),
                    "label": words.action_label(a, moon=moon),
                    "kind": words.kind_of(a),
                }
                for a in observation.legal_actions
            ]
            if self.state == "turn" and observation is not None
            else []
        )
        if self.state == "over":
            status = f"Match over: {self.end['result'] if self.end else 'ended'}"
        elif self.state == "turn":
            status = "Your turn: choose an action."
        else:
            status = f"Waiting: {self.waiting_for()}."
        data = {
            "match_id": self.match_id,
            "game": self.game.name,
            "title": self.game.describe(),
            "seat": self.seat,
            "players": words.seats(self.players, self.seat, self.people),
            "state": self.state,
            "status": status,
            "step": self.steps,
            "version": self.version,
            "deal": self.deal,
            "scores": list(self.scores),
            "table": table,
            "hand": list(self.hand),
            "legal": legal,
            "clock": self.remaining(),
            "moves": list(self.moves),
            "notice": self.notice,
            "hand_end": self.hand_end,
            "end": self.end,
            "replay": replay_url(self.match_id),
        }
        shown: dict[str, Any] = self.names(data)
        return shown
