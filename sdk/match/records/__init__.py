"""Match records as JSON Lines, and their replay through the engine (docs/referee.md: records).

The package is split by job: :mod:`.model` (the record types and building one from a game),
:mod:`.writing`, :mod:`.reading` (parsing and checking the form) and :mod:`.replay`; every name
below is importable from ``domino_arena.sdk.match.records``.

A record is what a match leaves behind: enough to re-run it exactly and to check every step.
Line 1 is the header (game, options, rules version, seats, seed, first seat), then one line
per step (the acting seat, the action's canonical text and its think time; the ``deal`` chance
step between hands has seat -1), then one result line::

    {"type": "header", "format": 1, "rules": "1", "game": "passing", "options": {...}, ...}
    {"type": "step", "index": 0, "seat": 1, "action": "play 6-5", "think_ms": 0.41}
    ...
    {"type": "result", "winner": 1, "scores": [40, 101], "sides": [[0], [1]], "hands": [...]}

Step ``i`` is always on line ``i + 2`` (blank lines are refused), so every message can name
both. Nothing in a record depends on the clock unless the caller passes a ``created`` time or
think times, so the same game always writes the same bytes.

Format 2 adds what a refereed match needs (format 1 records are still read and replayed):

* a ``fault`` line per fault charged to a seat, after the last step and before the result
  (docs/referee.md: faults)::

    {"type": "fault", "seat": 1, "turn": 7, "step": 12, "kind": "timeout", "reason": "...",
     "strikes": 1, "forfeited": false}

  ``step`` is the index of the step that was due; ``turn`` the request it answered.
* ``"substituted": true`` on a step the referee played for a faulting seat;
* ``"termination"`` on the result line when the match did not end by the rules: ``forfeit``
  (the winner is then :func:`forfeit_winner`'s), ``adjudicated`` (the referee's cap on deals:
  the winner is :func:`adjudicated_winner`'s, null for a tie at the top), ``void`` or
  ``aborted`` (``winner`` null); the scores and hands are those reached when play stopped;
* optional header fields ``match_id`` and ``fault_policy``.

A record written without any of these is a format 1 record with ``"format": 2``.

A record a referee hands out may end with one more line, its signature (docs/referee.md,
"Signed records")::

    {"type": "signature", "alg": "ed25519", "key": "9f2c41d07be3a815", "sig": "..."}

The reader checks its form and otherwise ignores it (:func:`split_signature` returns it):
checking the signature needs the referee's public key, which is the importing arena's job.

>>> from domino_arena.sdk.rules import make_game
>>> state = make_game("passing").new_game(seed=7, first_seat=0)
>>> while not state.is_terminal():
...     state = state.apply(state.legal_actions()[0])
>>> record = record_from_state(state, seats=["a", "b"], seed=7, first_seat=0)
>>> str(replay(record)).startswith("OK: ")
True
"""

from .model import (
    FORMAT_VERSION,
    READABLE_FORMATS,
    RULES_VERSION,
    MatchRecord,
    RecordError,
    RecordFault,
    RecordResult,
    RecordStep,
    adjudicated_winner,
    forfeit_winner,
    record_from_state,
)
from .reading import SIGNATURE_TYPE, parse_record, read_record, split_signature
from .replay import ReplayReport, replay
from .writing import record_lines, write_record

__all__ = [
    "FORMAT_VERSION",
    "READABLE_FORMATS",
    "RULES_VERSION",
    "SIGNATURE_TYPE",
    "MatchRecord",
    "RecordError",
    "RecordFault",
    "RecordResult",
    "RecordStep",
    "ReplayReport",
    "adjudicated_winner",
    "forfeit_winner",
    "parse_record",
    "read_record",
    "record_from_state",
    "record_lines",
    "replay",
    "split_signature",
    "write_record",
]
