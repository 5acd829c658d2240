"""The one vocabulary of how a match ended and what a fault was (docs/decisions.md: decision 9).

Records, storage, the wire conversion, the command line and the admin API all use these enums;
their values are the words written in records and stored in the database, so each is a
:class:`enum.StrEnum` and compares equal to its word (``FaultKind.TIMEOUT == "timeout"``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..rules import Outcome


class Termination(enum.StrEnum):
    """How a match ended."""

    NORMAL = "normal"
    """Played to the end by the rules."""
    FORFEIT = "forfeit"
    """A seat forfeited by the fault policy; its side loses."""
    VOID = "void"
    """A failure of the referee's own: counts for nobody, never charged to a bot."""
    ABORTED = "aborted"
    """The referee shut down before the end."""
    ADJUDICATED = "adjudicated"
    """The referee's cap on deals (``max_deals``) ended a game nobody had won yet: the sides
    are ranked by their scores then, the side alone at the top wins and a tie at the top is a
    draw among those sides. Never shown as a win by the rules."""

    @property
    def rated(self) -> bool:
        """Whether a match that ended this way counts for the ratings."""
        return self in (Termination.NORMAL, Termination.FORFEIT, Termination.ADJUDICATED)

    @property
    def how_won(self) -> str:
        """What follows "X won" for a win that ended this way: "" by the rules, else e.g.
        " by forfeit" or " on adjudication", so no page shows an adjudication as a plain win."""
        return _HOW_WON.get(self, f" ({self.value})")


_HOW_WON: dict[Termination, str] = {
    Termination.NORMAL: "",
    Termination.FORFEIT: " by forfeit",
    Termination.ADJUDICATED: " on adjudication",
}


class FaultKind(enum.StrEnum):
    """What a bot did wrong."""

    TIMEOUT = "timeout"
    ILLEGAL = "illegal"
    MALFORMED = "malformed"
    DISCONNECTED = "disconnected"
    BOT_ERROR = "bot_error"
    """The bot's own code raised while choosing; the reason is the exception's type and
    message (:class:`~.bot_errors.BotError`)."""

    @property
    def label(self) -> str:
        """The kind in words, as results and pages show it: "bot error", else the value."""
        return self.value.replace("_", " ")


class FaultPolicy(enum.StrEnum):
    """What a fault costs: the game at once, or a substituted move and a strike."""

    FORFEIT = "forfeit"
    SUBSTITUTE = "substitute"


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The end of a match: the rules' outcome, or how the referee (or the match core) ended it."""

    termination: Termination
    winner: int | None
    """The winning side, None when nobody won (void, aborted)."""
    scores: tuple[int, ...]
    faulted_seat: int | None = None
    fault: FaultKind | None = None
    detail: str = ""
    outcome: Outcome | None = None
    """The engine's outcome when the game was played to its end."""
