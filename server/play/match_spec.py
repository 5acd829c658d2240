"""What a match to run is (:class:`MatchSpec`), and what a played one leaves behind.

Kept apart from the arena that plays them, so tournaments, the ladder and the admin API can
build and read them without importing the arena.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from dataclasses import dataclass, field
from typing import Final

from domino_arena.sdk.local import DEFAULT_MAX_DEALS
from domino_arena.sdk.match.results import FaultPolicy, MatchResult
from domino_arena.sdk.rules import Game
from domino_arena.server.names import is_person
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tables import DEFAULT_COURSE

DEFAULT_MAX_STRIKES: Final = 3

MATCH_ID: Final = re.compile(r"[0-9a-f]{32}")
"""A match id the referee makes for a match, a ladder's or one a client names (``RunMatch``):
a uuid4's hex."""
GAME_MATCH_ID: Final = re.compile(r"[0-9a-f]{16}-[0-9]{5,7}")
"""A tournament game's match id: its tournament's id (16 hex digits) and the game's index
(``server/tournaments/lifecycle/schedule.py``: ``match_id_of``)."""
MATCH_ID_RULE: Final = (
    "32 lowercase hex digits (a uuid4's hex), or a tournament game's 16 hex digits, '-' and "
    "its 5-7 digit index"
)


def referee_match_id(text: str) -> bool:
    """Whether ``text`` is a match id in a form the referee makes (:data:`MATCH_ID_RULE`)."""
    return bool(MATCH_ID.fullmatch(text) or GAME_MATCH_ID.fullmatch(text))


__all__ = [
    "DEFAULT_MAX_DEALS",
    "DEFAULT_MAX_STRIKES",
    "MATCH_ID",
    "MATCH_ID_RULE",
    "FinishedMatch",
    "MatchSpec",
    "referee_match_id",
]


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """One match to run: the game, a connected bot per seat, the seed and the policies."""

    game: Game
    bots: tuple[str, ...]
    seed: int
    time_control: TimeControl = field(default_factory=TimeControl)
    fault_policy: FaultPolicy = FaultPolicy.SUBSTITUTE
    max_strikes: int = DEFAULT_MAX_STRIKES
    max_deals: int = DEFAULT_MAX_DEALS
    """The referee's cap on deals: a game nobody has won after this many is adjudicated."""
    match_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    rated: bool = True
    """Counts for the Elo ladder (only normal and forfeit endings are ever rated)."""
    absent: tuple[str, ...] = ()
    """Bots that were waited for and had not connected when the match started: they get no
    reconnect grace until they connect (the fault policy scores their seats)."""
    tournament_id: str | None = None
    game_index: int | None = None
    """The game's position in its tournament's schedule."""
    deal_id: int | None = None
    """Games of a tournament with the same deal id are played from the same seed."""
    rotation: int | None = None
    course: str = DEFAULT_COURSE
    """The course it is played in, and stored under (docs/courses.md)."""
    streams: tuple[str, ...] = ()
    """The name each seat's stream goes by, where it differs from ``bots`` (a person's seat:
    ``person:NAME#N`` plays as ``person:NAME``, docs/people.md); empty: the bots' names."""

    person_time: TimeControl | None = None
    """The clock of the people's seats (``person:NAME``: the course's human clock,
    docs/people.md); None: every seat plays on ``time_control``."""

    def seat_clocks(self) -> dict[int, TimeControl]:
        """The seats on another clock than ``time_control``: the people's, on ``person_time``."""
        if self.person_time is None:
            return {}
        return {seat: self.person_time for seat, bot in enumerate(self.bots) if is_person(bot)}

    @property
    def stream_names(self) -> tuple[str, ...]:
        """The name of each seat's stream in the lobby (``streams``, else ``bots``)."""
        return self.streams or self.bots


@dataclass(frozen=True, slots=True)
class FinishedMatch:
    """What :meth:`Arena.run_match` returns: the stored row's content."""

    spec: MatchSpec
    result: MatchResult
    record: str | None
    faults: tuple[int, ...]
    """Faults charged to each seat."""

    def to_row(self) -> StoredMatch:
        """The row the storage keeps of this match (stamped now)."""
        spec, result = self.spec, self.result
        return StoredMatch(
            id=spec.match_id,
            game=spec.game.name,
            options=spec.game.options(),
            seats=spec.bots,
            seed=spec.seed,
            termination=result.termination.value,
            winner=result.winner,
            scores=result.scores,
            faulted_seat=result.faulted_seat,
            fault=None if result.fault is None else result.fault.value,
            detail=result.detail,
            record=self.record,
            created=dt.datetime.now(dt.UTC),
            tournament_id=spec.tournament_id,
            game_index=spec.game_index,
            deal_id=spec.deal_id,
            rotation=spec.rotation,
            side_of_seat=tuple(spec.game.side_of(seat) for seat in range(spec.game.num_players)),
            faults=self.faults,
            rated=spec.rated,
            course=spec.course,
        )
