"""Every golden case: a name -> a function that plays the match and returns its record's text.

The records pin what the match loops do today (``sdk.local.play_game`` and the referee's
``play_match``) so that a rewrite of either, or a move of modules, cannot change a game, a
clock charge, a fault or a byte of the record format without a test failing. Each function
returns the exact text ``sdk.records.write_record`` writes; ``test_golden.py`` compares it with
``records/<name>.jsonl`` and ``regenerate.py`` rewrites those files.

This is the one module of ``tests/golden`` that imports project code (the fakes in
``tests/fakes/seats.py`` import some too): when a module moves, only the imports below change.

Nothing in a record may depend on the run: local games are untimed (``timer=None``) and carry a
fixed ``created``; refereed matches run under ``MockClock(autojump_threshold=0)``, so every think
time is a virtual duration fixed by the fakes' ``trio.sleep`` calls, and their match id is the
case's name. The referee never sets ``created`` (``play_match`` has no such argument and its
record leaves the field out), so nothing needs normalising.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import trio
from trio.testing import MockClock

from domino_arena.bots import make_bot
from domino_arena.sdk.local import DEFAULT_MAX_DEALS, play_game
from domino_arena.sdk.match.records import MatchRecord, parse_record, replay, write_record
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.match.seeds import bot_seed
from domino_arena.sdk.rules import make_game
from domino_arena.server.play.referee import play_match
from domino_arena.server.play.seats import Malformed
from domino_arena.server.play.timecontrol import TimeControl

from ..fakes.seats import (
    CrashSeat,
    EventBugSeat,
    FakeSeat,
    IllegalSeat,
    LateReplySeat,
    MalformedSeat,
    ReconnectSeat,
    SilentSeat,
    SlowSeat,
)

RECORDS: Final = Path(__file__).parent / "records"
"""The folder of the approved records, one ``<case>.jsonl`` per case."""

CREATED: Final = "2025-01-01T00:00:00Z"
"""The ``created`` header of every local record: a real time would change on every run."""

CLOCK: Final = TimeControl(move=1.0, bank=10.0, grace=0.05)
"""The referee's time control unless a case says otherwise (the classroom default)."""

FORFEIT: Final = FaultPolicy.FORFEIT
SUBSTITUTE: Final = FaultPolicy.SUBSTITUTE

Case = Callable[[], str]
"""Plays one match and returns its record's text."""

CASES: dict[str, Case] = {}
"""Every case by name; the name is also the record's file name and a refereed match's id."""


def record_path(name: str) -> Path:
    """Return the file that holds the approved record of case ``name``."""
    return RECORDS / f"{name}.jsonl"


def replay_report(text: str) -> tuple[bool, str]:
    """Parse a record's text and replay it through the engine: (sound, what replay says).

    A golden record is approved by a reviewer; this lets the tests refuse one the engine itself
    would not accept, whatever the diff looked like.
    """
    report = replay(parse_record(text))
    return report.ok, str(report)


def _text(record: MatchRecord) -> str:
    out = io.StringIO()
    write_record(record, out)
    return out.getvalue()


def _add(name: str, play: Case) -> None:
    if name in CASES:
        raise ValueError(f"golden case '{name}' is defined twice")
    CASES[name] = play


# -- local play: sdk.local.play_game between house bots -----------------------------------------


def _local(
    name: str,
    game: str,
    bots: Sequence[str],
    seed: int,
    max_deals: int = DEFAULT_MAX_DEALS,
    **options: Any,
) -> None:
    """Add a local game of ``game`` (built as the CLI does, ``make_game(game, **options)``)
    between house bots named ``bots``, each seeded from the game's seed and its seat as
    ``domino-arena play`` seeds them; ``max_deals`` is ``play --max-deals``.
    """

    def play() -> str:
        players = [make_bot(bot, bot_seed(seed, seat)) for seat, bot in enumerate(bots)]
        result = play_game(
            make_game(game, **options),
            players,
            seed,
            timer=None,
            created=CREATED,
            max_deals=max_deals,
        )
        return _text(result.record)

    _add(name, play)


G, R = "greedy", "random"

# Every game in every seating, greedy and random bots in alternate seats so that both house
# bots are pinned in every configuration.
_local("local-moon", "moon", [G, R, G], seed=1)
_local("local-passing-2p", "passing", [G, R], seed=1, players=2)
_local("local-passing-3p", "passing", [G, R, G], seed=1, players=3)
_local("local-passing-4p", "passing", [G, R, G, R], seed=1, players=4)
_local("local-passing-4p-partners", "passing", [G, R, G, R], seed=1, players=4, partnerships=True)
_local("local-straight-2p", "straight", [G, R], seed=1, players=2)
_local("local-straight-3p", "straight", [G, R, G], seed=1, players=3)
_local("local-straight-4p", "straight", [G, R, G, R], seed=1, players=4)
_local("local-straight-4p-partners", "straight", [G, R, G, R], seed=1, players=4, partnerships=True)
_local("local-doubles-2p", "doubles", [G, R], seed=1, players=2)
_local("local-doubles-3p", "doubles", [G, R, G], seed=1, players=3)
_local("local-doubles-4p", "doubles", [G, R, G, R], seed=1, players=4)
# Doubles has no partnerships (its only option is `players`; docs/rules.md D11), so no 4-partners
# case. A second seed where the game has a second path to its end or a second scoring rule: Moon
# between greedy bots reaches 21; random bidders rarely do, and local play's cap on deals
# adjudicates the game by its scores (docs/rules.md 7.2), here a small cap; the pagat target
# rule of the Passing Game.
_local("local-moon-greedy", "moon", [G, G, G], seed=2)
_local("local-moon-random-max-deals", "moon", [R, R, R], seed=4, max_deals=3)
_local("local-passing-4p-pagat", "passing", [G, R, G, R], seed=2, players=4, target_rule="pagat")


# -- through the referee: server.referee.play_match over the fake seats, on trio's MockClock ----


def _refereed(
    name: str,
    game: str,
    seats: Callable[[], Sequence[FakeSeat]],
    *,
    policy: FaultPolicy,
    seed: int,
    clock: TimeControl = CLOCK,
    options: dict[str, Any] | None = None,
    **referee: Any,
) -> None:
    """Add a refereed match of ``game`` between fresh ``seats()`` (fakes keep state, so each
    run builds its own); ``referee`` holds any further argument of ``play_match``.
    """

    def play() -> str:
        async def main() -> MatchRecord:
            report = await play_match(
                make_game(game, **(options or {})),
                seats(),
                match_id=name,
                seed=seed,
                time_control=clock,
                fault_policy=policy,
                **referee,
            )
            return report.record

        return _text(trio.run(main, clock=MockClock(autojump_threshold=0)))

    _add(name, play)


def _good(*names: str) -> list[FakeSeat]:
    """Well-behaved seats, each bot seeded by its seat so no two play alike."""
    return [FakeSeat(seat_name, seed=seat) for seat, seat_name in enumerate(names)]


MALFORMED: Final = Malformed("action: no tile 9-9 (docs/rules.md 0.1)")
"""What a remote seat hands the referee for a reply it could not parse."""

# Clean matches, one per game. The slow seat's think times, within the move time, pin how the
# referee times a reply; the first starter comes from the seed.
_refereed(
    "referee-passing-clean",
    "passing",
    lambda: [SlowSeat(0.25, name="slow"), FakeSeat("quick", seed=1)],
    policy=FORFEIT,
    seed=3,
)
_refereed("referee-straight-clean", "straight", lambda: _good("a", "b"), policy=FORFEIT, seed=4)
_refereed("referee-doubles-clean", "doubles", lambda: _good("a", "b"), policy=FORFEIT, seed=5)
# Random bidders rarely end a Moon game by the rules: the referee's cap on deals adjudicates it
# by the scores (docs/rules.md 7.2); a small cap keeps the record short.
_refereed(
    "referee-moon-adjudicated-max-deals",
    "moon",
    lambda: _good("a", "b", "c"),
    policy=FORFEIT,
    seed=6,
    max_deals=3,
)

# Each fault under `substitute`: strikes, the seeded substitute moves, then the forfeit at the
# third strike (the faults start at the bad seat's second request).
_refereed(
    "referee-substitute-timeout",
    "passing",
    lambda: [SilentSeat(from_request=2), FakeSeat("good", seed=1)],
    policy=SUBSTITUTE,
    seed=3,
)
_refereed(
    "referee-substitute-illegal",
    "passing",
    lambda: [IllegalSeat(from_request=2), FakeSeat("good", seed=1)],
    policy=SUBSTITUTE,
    seed=3,
)
_refereed(
    "referee-substitute-malformed",
    "passing",
    lambda: [MalformedSeat(MALFORMED, from_request=2), FakeSeat("good", seed=1)],
    policy=SUBSTITUTE,
    seed=3,
)
_refereed(
    "referee-substitute-not-an-action",
    "passing",
    lambda: [MalformedSeat("play 6-6", from_request=2), FakeSeat("good", seed=1)],
    policy=SUBSTITUTE,
    seed=3,
)
_refereed(
    "referee-substitute-crash",
    "passing",
    lambda: [CrashSeat(from_request=3), FakeSeat("good", seed=1)],
    policy=SUBSTITUTE,
    seed=3,
)
# Back within the grace: no fault, and the wait is never charged (think time 0).
_refereed(
    "referee-substitute-reconnect-in-grace",
    "passing",
    lambda: [ReconnectSeat(drop_at=2, back_after=4.0), FakeSeat("good", seed=1)],
    policy=SUBSTITUTE,
    seed=3,
)
# Back after the grace: one disconnection strike and a substitute move, then it plays on.
_refereed(
    "referee-substitute-reconnect-late",
    "passing",
    lambda: [ReconnectSeat(drop_at=2, back_after=12.0), FakeSeat("good", seed=1)],
    policy=SUBSTITUTE,
    seed=3,
)
# A reply after its deadline: a timeout strike, then the stale reply is dropped by the seat,
# or (drop_stale=False) handed on and refused as illegal at the later turns.
_refereed(
    "referee-substitute-late-reply",
    "passing",
    lambda: [LateReplySeat(slow_request=2), FakeSeat("good", seed=1)],
    policy=SUBSTITUTE,
    seed=3,
)
_refereed(
    "referee-substitute-stale-replies",
    "passing",
    lambda: [LateReplySeat(slow_request=2, drop_stale=False), FakeSeat("good", seed=1)],
    policy=SUBSTITUTE,
    seed=3,
)
# A tournament's absent bot gets no grace: it faults at once, every time, up to max_strikes.
_refereed(
    "referee-substitute-absent",
    "passing",
    lambda: [CrashSeat(from_request=0), FakeSeat("good", seed=1)],
    policy=SUBSTITUTE,
    seed=3,
    max_strikes=2,
    absent=[0],
)
# Substitutes in the other games' phases: Moon's bids and trumps, the draws of Doubles.
_refereed(
    "referee-moon-substitute-illegal",
    "moon",
    lambda: [FakeSeat("a", seed=0), IllegalSeat(from_request=1, name="b"), FakeSeat("c", seed=2)],
    policy=SUBSTITUTE,
    seed=7,
    max_strikes=5,
)
_refereed(
    "referee-doubles-3p-substitute-timeout",
    "doubles",
    lambda: [FakeSeat("a", seed=0), FakeSeat("b", seed=1), SilentSeat(from_request=4, name="c")],
    policy=SUBSTITUTE,
    seed=8,
    options={"players": 3},
)

# Under `forfeit` the first fault ends the match.
_refereed(
    "referee-forfeit-illegal",
    "passing",
    lambda: [IllegalSeat(from_request=3), FakeSeat("good", seed=1)],
    policy=FORFEIT,
    seed=3,
)
_refereed(
    "referee-forfeit-malformed",
    "straight",
    lambda: [FakeSeat("good", seed=0), MalformedSeat(MALFORMED, from_request=3)],
    policy=FORFEIT,
    seed=4,
)
# Think times past the move time drain the bank until the deadline is move + grace only.
_refereed(
    "referee-forfeit-bank-timeout",
    "passing",
    lambda: [SlowSeat(1.5), FakeSeat("good", seed=1)],
    policy=FORFEIT,
    seed=3,
    clock=TimeControl(move=1.0, bank=2.0, grace=0.05),
)
_refereed(
    "referee-forfeit-reconnect-late",
    "passing",
    lambda: [ReconnectSeat(drop_at=3, back_after=10.5), FakeSeat("good", seed=1)],
    policy=FORFEIT,
    seed=3,
)
# The winner of a forfeit among three sides, and of a partnership.
_refereed(
    "referee-forfeit-passing-3p",
    "passing",
    lambda: [FakeSeat("a", seed=0), SilentSeat(from_request=15, name="b"), FakeSeat("c", seed=2)],
    policy=FORFEIT,
    seed=3,
    options={"players": 3},
)
_refereed(
    "referee-forfeit-straight-4p-partners",
    "straight",
    lambda: [*_good("p0", "p1"), IllegalSeat(from_request=2, name="p2"), FakeSeat("p3", seed=3)],
    policy=FORFEIT,
    seed=9,
    options={"players": 4, "partnerships": True},
)

# No winner within max_deals (adjudicated by the scores after one deal of the Passing Game), and
# a void match: a failure of the referee's own (a seat raising from `event`), charged to nobody.
_refereed(
    "referee-passing-adjudicated-max-deals",
    "passing",
    lambda: _good("a", "b"),
    policy=FORFEIT,
    seed=3,
    max_deals=1,
)
_refereed(
    "referee-void-referee-failure",
    "passing",
    lambda: [FakeSeat("good", seed=0), EventBugSeat(at_event=5)],
    policy=SUBSTITUTE,
    seed=3,
)
