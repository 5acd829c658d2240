"""A stand-in for the arena's ``play`` (MatchSpec -> FinishedMatch) for the schedulers' tests.

The ladder runner and the tournament runner start matches through a ``play`` callable; this one
plays a match by sleeping ``duration`` seconds of trio time (run it under
``MockClock(autojump_threshold=0)``: nothing waits for real time), records when each match
started, checks that no bot is in two matches at once, and can store the finished match as the
arena would or fail a chosen match.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from domino_arena.sdk.match.results import MatchResult, Termination
from domino_arena.server.play.match_spec import FinishedMatch, MatchSpec
from domino_arena.server.play.roster import HostedSeat
from domino_arena.server.store.storage import Storage


def no_seats(name: str, match_id: str) -> HostedSeat:
    """The arena's seat factory where ``Arena.play`` is replaced: it is never asked for one."""
    raise AssertionError(f"a seat for {name} in {match_id}: no match should be played")


def finished_match(spec: MatchSpec, winner: int = 0) -> FinishedMatch:
    """A normal end of ``spec``'s match: side ``winner`` wins 10 to nothing."""
    sides = len(spec.game.sides)
    scores = tuple(10 if side == winner else 0 for side in range(sides))
    result = MatchResult(Termination.NORMAL, winner, scores)
    return FinishedMatch(spec, result, None, (0,) * len(spec.bots))


def strongest_wins(strength: Callable[[str], float]) -> Callable[[MatchSpec], int]:
    """A ``FakePlay`` winner rule: the side holding the strongest bot wins every game."""

    def winner(spec: MatchSpec) -> int:
        best = max(range(len(spec.bots)), key=lambda seat: strength(spec.bots[seat]))
        return spec.game.side_of(best)

    return winner


class FakePlay:
    """Plays each match for ``duration`` seconds; stores it in ``storage`` if one is given."""

    def __init__(
        self,
        duration: float = 1.0,
        storage: Storage | None = None,
        winner: Callable[[MatchSpec], int] | None = None,
    ) -> None:
        self.duration = duration
        self.storage = storage
        self.winner = winner
        """Which side wins each match (default: the first)."""
        self.calls: list[tuple[float, MatchSpec]] = []
        """(``trio.current_time()`` at the start, spec) of every match, in the order started."""
        self.finished: list[str] = []
        """The match ids of the matches that ended normally, in the order they ended."""
        self.in_flight: set[str] = set()
        self.max_in_flight = 0
        self.playing: set[str] = set()
        self.fail: dict[int, Exception] = {}
        """1-based number of a match (in the order started) -> the error it raises (after the
        duration)."""
        self._changed = trio.Event()

    @property
    def specs(self) -> list[MatchSpec]:
        """Every match's spec, in the order started."""
        return [spec for _, spec in self.calls]

    def indexes(self) -> list[int]:
        """The tournament game indexes of the matches started, in that order."""
        return [spec.game_index for spec in self.specs if spec.game_index is not None]

    async def __call__(self, spec: MatchSpec) -> FinishedMatch:
        self.calls.append((trio.current_time(), spec))
        number = len(self.calls)
        # House bots (house:NAME) are hosted by the referee for every seat apart.
        own = [b for b in spec.bots if not b.startswith("house:")]
        assert self.playing.isdisjoint(own), f"a bot of {spec.bots} plays twice at once"
        self.playing.update(own)
        self.in_flight.add(spec.match_id)
        self.max_in_flight = max(self.max_in_flight, len(self.in_flight))
        self._notify()
        try:
            await trio.sleep(self.duration)
            if number in self.fail:
                raise self.fail[number]
            finished = finished_match(spec, self.winner(spec) if self.winner else 0)
            if self.storage is not None:
                # Synchronous on purpose: a worker thread would let MockClock jump meanwhile.
                self.storage.save_match(finished.to_row())
            self.finished.append(spec.match_id)
            return finished
        finally:
            self.playing.difference_update(own)
            self.in_flight.discard(spec.match_id)
            self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def until(self, predicate: Callable[[], bool]) -> None:
        """Return once ``predicate()`` holds (checked whenever a match starts or ends)."""
        while not predicate():
            await self._changed.wait()
