"""Every conversion between the protocol's messages and the domain's types, in one place.

The referee and the SDK client both speak through here, so a bot sees exactly the rules
library's own types (:class:`~domino_arena.sdk.rules.Observation` with its legal actions,
:class:`~domino_arena.sdk.rules.Action`) and the referee validates exactly what the bot sent.
Every conversion comes in a ``*_to_proto`` / ``*_from_proto`` pair and the pairs round-trip.
Decoding is strict: what the rules library cannot represent raises :class:`ConversionError`
naming the field path and what was expected.

Callers import from this package; the modules hold one job each:

- :mod:`.common`: :class:`ConversionError` and the bounded message caches;
- :mod:`.tiles_actions`: tiles and actions, and the action of a bot's reply;
- :mod:`.games`: games and their options;
- :mod:`.events`: steps and the events that carry them;
- :mod:`.observations`: what one seat may see;
- :mod:`.spectators`: the public table a spectator sees;
- :mod:`.results`: how hands and matches ended, and the result enums;
- :mod:`.timecontrol`: milliseconds, a request's clock and a match's time limits;
- :mod:`.hooks`: the bot hooks' values and the messages that carry them.
"""

from .common import ConversionError
from .events import (
    EventEncoder,
    event_to_proto,
    events_of_entries,
    step_from_proto,
    step_to_proto,
)
from .games import game_from_proto, game_to_proto
from .hooks import (
    History,
    fault_from_proto,
    fault_to_proto,
    hand_end_from_proto,
    match_end_from_proto,
    match_end_to_proto,
    match_start_from_proto,
    match_start_to_proto,
    time_limits_to_proto,
)
from .observations import observation_from_proto, observation_to_proto
from .results import (
    MatchResultFields,
    fault_kind_from_proto,
    fault_kind_to_proto,
    fault_policy_from_proto,
    fault_policy_to_proto,
    hand_end_from_kind,
    hand_end_kind,
    hand_result_from_proto,
    hand_result_to_proto,
    match_result_to_proto,
    outcome_from_proto,
    termination_from_proto,
    termination_to_proto,
)
from .spectators import spectator_table_from_proto, spectator_table_to_proto
from .tiles_actions import action_from_proto, action_to_proto, bot_error_to_proto, reply_action
from .timecontrol import clock_from_proto, ms, time_limits_from_proto

__all__ = [
    "ConversionError",
    "EventEncoder",
    "History",
    "MatchResultFields",
    "action_from_proto",
    "action_to_proto",
    "bot_error_to_proto",
    "clock_from_proto",
    "event_to_proto",
    "events_of_entries",
    "fault_from_proto",
    "fault_kind_from_proto",
    "fault_kind_to_proto",
    "fault_policy_from_proto",
    "fault_policy_to_proto",
    "fault_to_proto",
    "game_from_proto",
    "game_to_proto",
    "hand_end_from_kind",
    "hand_end_from_proto",
    "hand_end_kind",
    "hand_result_from_proto",
    "hand_result_to_proto",
    "match_end_from_proto",
    "match_end_to_proto",
    "match_result_to_proto",
    "match_start_from_proto",
    "match_start_to_proto",
    "ms",
    "observation_from_proto",
    "observation_to_proto",
    "outcome_from_proto",
    "reply_action",
    "spectator_table_from_proto",
    "spectator_table_to_proto",
    "step_from_proto",
    "step_to_proto",
    "termination_from_proto",
    "termination_to_proto",
    "time_limits_from_proto",
    "time_limits_to_proto",
]
