"""The rules of the four domino games: pure, standard library only (docs/decisions.md: decision 3).

>>> from domino_arena.sdk.rules import make_game, parse_action
>>> state = make_game("passing", players=3).new_game(seed=1)
>>> state = state.apply(state.legal_actions()[0])
"""

from .actions import (
    DEAL,
    DRAW,
    NO_TRUMP,
    PASS,
    TRUMP_DOUBLES,
    Action,
    Bid,
    Deal,
    Discard,
    Draw,
    Pass,
    Play,
    Trump,
    parse_action,
)
from .doubles import DoublesGame, DoublesObservation, DoublesState
from .errors import (
    GameOptionError,
    GameOverError,
    IllegalActionError,
    InvalidActionError,
    PositionError,
    RulesError,
)
from .linegame import LineObservation, OpenEnd
from .moon import MoonGame, MoonObservation, MoonState, Trick
from .passing import PassingGame, PassingObservation, PassingState
from .perft import perft
from .registry import GAMES, configurations, game_options, make_game
from .state import (
    CHANCE,
    SPECTATOR,
    TERMINAL,
    Game,
    GameState,
    HandEnd,
    HandResult,
    LogEntry,
    Observation,
    Outcome,
    Phase,
)
from .straight import StraightGame, StraightObservation, StraightState
from .straight_layout import StraightLayout
from .tiles import DOUBLE_SIX, Tile, parse_tiles, pip_total

__all__ = [
    "CHANCE",
    "DEAL",
    "DOUBLE_SIX",
    "DRAW",
    "GAMES",
    "NO_TRUMP",
    "PASS",
    "SPECTATOR",
    "TERMINAL",
    "TRUMP_DOUBLES",
    "Action",
    "Bid",
    "Deal",
    "Discard",
    "DoublesGame",
    "DoublesObservation",
    "DoublesState",
    "Draw",
    "Game",
    "GameOptionError",
    "GameOverError",
    "GameState",
    "HandEnd",
    "HandResult",
    "IllegalActionError",
    "InvalidActionError",
    "LineObservation",
    "LogEntry",
    "MoonGame",
    "MoonObservation",
    "MoonState",
    "Observation",
    "OpenEnd",
    "Outcome",
    "Pass",
    "PassingGame",
    "PassingObservation",
    "PassingState",
    "Phase",
    "Play",
    "PositionError",
    "RulesError",
    "StraightGame",
    "StraightLayout",
    "StraightObservation",
    "StraightState",
    "Tile",
    "Trick",
    "Trump",
    "configurations",
    "game_options",
    "make_game",
    "parse_action",
    "parse_tiles",
    "perft",
    "pip_total",
]
