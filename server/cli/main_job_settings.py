"""What the main job plays (``domino-arena round-robin``, :mod:`.main_job`): its entrants, its
settings, each game's outcome, the ids of its tournaments, and its errors.

The tournament ids come from the settings alone (:func:`tournament_id`), so the match ids and
deal seeds do, and the same ``--seed`` gives the same records on every run (docs/referee.md,
"Reproducible play").
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from domino_arena.bots import HOUSE_BOTS, is_bot_spec, player_factory
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import Game
from domino_arena.server.ladder.elo import Rating
from domino_arena.server.play.match_spec import DEFAULT_MAX_DEALS
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.bots import NAME_PATTERN, NAME_RULE
from domino_arena.v1 import admin_pb2


class MainJobError(Exception):
    """The job cannot run (a bot process died, a bot never connected); the message says why."""


class StoppedError(MainJobError):
    """Ctrl-C stopped the job; the message says where the results so far are."""


@dataclass(frozen=True, slots=True)
class Entrant:
    """A bot taking part: its bot name in the referee and what it runs, a house bot's name or
    a bot of one's own (``MODULE:NAME``), each in its own process."""

    name: str
    kind: str


def entrant_of(text: str) -> Entrant:
    """Parse ``greedy`` or ``greedy-2`` (a house bot with an optional suffix), or a bot of
    one's own: ``mine=./mybot.py:HeavyFirst`` (named ``mine``) or ``./mybot.py:HeavyFirst``
    (named after the class, ``heavyfirst``).

    Raises:
        ValueError: neither, a bad bot name, or a bot that cannot be loaded.
    """
    name, equals, spec = text.rpartition("=")
    if not equals:
        spec, name = text, ""
    if is_bot_spec(spec):
        name = name or re.sub(r"[^A-Za-z0-9_.-]", "-", spec.rpartition(":")[2]).lower()
        if not NAME_PATTERN.match(name):
            raise ValueError(f"'{text}': bad bot name {name!r}: {NAME_RULE}")
        try:
            player_factory(spec, 0)
        except (ImportError, AttributeError, OSError, ValueError) as exc:
            raise ValueError(f"'{text}': cannot load {spec}: {type(exc).__name__}: {exc}") from None
        return Entrant(name, spec)
    kind = text.split("-", 1)[0]
    if kind not in HOUSE_BOTS or equals:
        raise ValueError(
            f"'{text}' is not a house bot ({', '.join(sorted(HOUSE_BOTS))}) "
            "with an optional '-suffix', nor a bot of your own as [NAME=]MODULE:CLASS"
        )
    return Entrant(text, kind)


@dataclass(frozen=True, slots=True)
class Settings:
    """What to play: the games, the entrants, how often, and how."""

    games: tuple[Game, ...]
    entrants: tuple[Entrant, ...]
    games_per_pairing: int = 1
    seed: int = 1
    concurrency: int = 4
    time_control: TimeControl = field(
        default_factory=lambda: TimeControl(move=1.0, bank=10.0, grace=0.5)
    )
    fault_policy: FaultPolicy = FaultPolicy.SUBSTITUTE
    max_deals: int = DEFAULT_MAX_DEALS
    """The referee's cap on deals: a game nobody has won by then is adjudicated."""
    db_url: str | None = None
    """None: a fresh SQLite file in a temporary folder."""
    keep_web: bool = False
    """Keep the web face (and the referee) up after the tournaments, until Ctrl-C."""


@dataclass(frozen=True, slots=True)
class GameStandings:
    """The outcome of one game's tournament: its id, its official standings (None when its
    games cannot be fitted) and the live ladder after it."""

    game: Game
    tournament_id: str
    games_played: int
    seconds: float
    official: admin_pb2.BatchStandings | None
    table: list[tuple[str, Rating]]


def playable(settings: Settings) -> list[Game]:
    """The games with enough entrants for a table."""
    return [g for g in settings.games if len(settings.entrants) >= g.num_players]


def tournament_id(settings: Settings, game: Game) -> str:
    """The id of ``game``'s tournament: the same for the same settings (so are its match ids,
    which the records hold), another for other entrants or seeds (one database may keep
    several runs)."""
    entrants = ",".join(f"{e.name}={e.kind}" for e in settings.entrants)
    key = f"{settings.seed}/{game.name}/{sorted(game.options().items())}/{entrants}"
    key += f"/{settings.games_per_pairing}/{settings.max_deals}"
    return "rr-" + hashlib.sha256(key.encode()).hexdigest()[:14]
