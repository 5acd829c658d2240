"""House bots the referee hosts in-process: a :class:`HouseSeat` plays one in a match.

A practice match (``PracticeMatch``) and the check of a connected bot (``CheckBot``) put house
bots in the seats the bot under test does not take, with no process and no stream of their own:
the seat calls the bot's ``choose`` in a worker thread (a search bot thinks for a while; the
referee's trio loop must not stall). Its seat is named ``house:NAME``, which no registered bot
can be called (a bot name has no ':'), so a stored match shows which seats were the house's.

Which house bots there are is the command line's to say (``server/cli`` is the only server code
that imports ``domino_arena.bots``): it calls :func:`provide` before the referee starts, and
every :class:`~.arena.Arena` made afterwards hosts them (tests may give an arena its own).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import trio

from domino_arena.sdk.bot import Bot
from domino_arena.sdk.match.bot_errors import BotError
from domino_arena.sdk.match.notices import FaultNotice
from domino_arena.sdk.match.results import MatchResult
from domino_arena.sdk.rules import HandResult, LogEntry, Observation
from domino_arena.server.play.seats import MatchInfo, Reply
from domino_arena.server.store.tables import HOUSE_PREFIX

HouseBots = Mapping[str, Callable[[int], Bot]]
"""A house bot's name -> a factory taking the bot's seed."""

_PROVIDED: dict[str, Callable[[int], Bot]] = {}


def provide(bots: HouseBots) -> None:
    """Make ``bots`` the house bots every arena made from now on hosts (the CLI calls this)."""
    _PROVIDED.clear()
    _PROVIDED.update(bots)


def provided() -> dict[str, Callable[[int], Bot]]:
    """The house bots given to :func:`provide` (a copy; empty if none was given)."""
    return dict(_PROVIDED)


def house_name(seat_name: str) -> str | None:
    """The house bot a seat name stands for (``house:greedy`` -> ``greedy``), else None."""
    if seat_name.startswith(HOUSE_PREFIX):
        return seat_name[len(HOUSE_PREFIX) :]
    return None


class HouseSeat:
    """A :class:`~.roster.HostedSeat` played by a house bot in this process.

    It never faults on its own: the bot's answer is returned as it is (the referee's core judges
    it like any other), and an exception from the bot is its error (a ``bot_error`` fault).
    """

    def __init__(self, name: str, bot: Bot) -> None:
        self.name = name
        self.bot = bot

    async def start(self, info: MatchInfo, snapshot: Observation | None) -> None:
        return None

    async def request(self, turn: int, observation: Observation, move: float, bank: float) -> Reply:
        try:
            return await trio.to_thread.run_sync(
                self.bot.choose, observation, abandon_on_cancel=True
            )
        except Exception as exc:
            return BotError.of(exc)

    async def event(self, step: LogEntry, scores: tuple[int, ...], deal: int) -> None:
        return None

    async def hand_end(self, result: HandResult, scores: tuple[int, ...]) -> None:
        return None

    async def fault(self, notice: FaultNotice) -> None:
        return None

    async def finish(self, result: MatchResult) -> None:
        return None

    async def reconnected(self) -> None:
        await trio.sleep_forever()  # never gone

    def end(self, result: MatchResult) -> None:
        return None

    def close(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"<HouseSeat {self.name}>"
