"""The repeat-deal check: does a bot do better on the later rotations of a deal than on its first?

With duplicate deals every rotation of a table is played from the same seed, so a bot that
remembers a deal from one game knows, in the next, the hand its opponent now holds and part of
the boneyard's order (docs/tournaments.md: memorizing bots). Nothing can wipe a remote bot's
memory, so the referee measures what memory would buy.

For each bot, every deal (tournament id + deal id) it played under two or more rotations is one
pair: its *first* game of the deal (lowest game index) against its *later* ones. A game scores
as the Elo ladder and the tournament results count it (:func:`game_scores`): 1 when the bot's
side is alone in first place, 1/2 when first with others, 0 otherwise (in partnerships both
partners take their side's score). A later rotation moves the bot to another seat, and seats
are not equal (who opens, who draws last), so each score has its seat's advantage taken out:
the seat's mean score less the mean over the seats, over the counted games of the same game
configuration that the bot did not play (:class:`_SeatTotals` says why), scaled to the bot's
own mean score (:func:`_deals` says why). The deal's difference is the mean corrected later
score minus the corrected first score; a one-sided
paired test over the deals (:func:`gain_p`: the sum of the differences against the largest
variance a score in [0, 1] with the bot's mean can have, :func:`score_variance`) gives the
chance of a gain this large from a bot that does not remember. Voided and aborted games never
count.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from domino_arena.sdk.match.results import Termination
from domino_arena.server.ladder.ratings_store import rated_game_of
from domino_arena.server.store.matches import StoredMatch

FLAG_BELOW: Final = 0.001
"""A bot is flagged when its p-value is below this."""

MIN_DEALS: Final = 10
"""Fewer repeated deals give p-value 1: the normal tail is not to be trusted on fewer."""


@dataclass(frozen=True, slots=True)
class RepeatDealCheck:
    """One bot's repeat-deal check (the admin API's ``RepeatDealCheck``)."""

    bot: str
    deals: int
    """Deals it played under two or more rotations."""
    first_score: float
    """Its mean score in the first game it played of each such deal (0 with no deals)."""
    later_score: float
    """Its mean score in its later games of those deals (0 with no deals)."""
    gain: float
    """Mean over the deals of later minus first, seat means taken out."""
    p_value: float
    """One-sided; 1 with fewer than :data:`MIN_DEALS` deals."""
    flagged: bool
    """``p_value`` below :data:`FLAG_BELOW`."""


def counts(match: StoredMatch) -> bool:
    """Whether ``match`` counts: it ended normally or by forfeit (as for the results)."""
    return Termination(match.termination).rated


def game_scores(match: StoredMatch) -> tuple[float, ...]:
    """Return each seat's score in a counted ``match``: win 1, draw 1/2, loss 0 (the ladder's)."""
    game = rated_game_of(match)
    value = {"win": 1.0, "draw": 0.5, "loss": 0.0}
    return tuple(value[game.outcome(seat)] for seat in range(len(match.seats)))


def repeat_deal_checks(
    matches: Iterable[StoredMatch], bots: Sequence[str]
) -> list[RepeatDealCheck]:
    """Return the check of every bot in ``bots`` over ``matches``, sorted by bot name.

    Two passes: the seat means of a bot leave out its own games; when some bots are flagged,
    the second pass also leaves their games out of every other bot's seat means (a bot that
    remembers deals wins its later rotations in the same seats, which would make the seats
    look unequal to everyone it did not play with). Matches outside a tournament (no deal id)
    only feed the seat means.
    """
    counted = [m for m in matches if counts(m)]
    scores = {m.id: game_scores(m) for m in counted}
    wanted = sorted(set(bots))
    totals = _SeatTotals(counted, scores)
    first = {bot: _check(bot, *_deals(bot, counted, scores, totals.mean_without)) for bot in wanted}
    flagged = {bot for bot, check in first.items() if check.flagged}
    if not flagged:
        return list(first.values())
    second = []
    for bot in wanted:
        without = _SeatTotals(counted, scores, exclude=flagged | {bot})
        means = without.mean_without if without.games else totals.mean_without
        second.append(_check(bot, *_deals(bot, counted, scores, means)))
    return second


SeatMean = Callable[[str, str, int], float]
"""(bot, configuration, seat) -> the seat's mean score that is taken out of the bot's score."""


def _deals(
    bot: str,
    counted: Sequence[StoredMatch],
    scores: dict[str, tuple[float, ...]],
    seat_mean: SeatMean,
) -> tuple[Iterable[list[tuple[int, float, float]]], float]:
    """Each tournament deal ``bot`` played: (game index, score, seat-corrected score) per game;
    and the variance bound of one of its scores (:func:`score_variance`).

    A seat's advantage is its mean score less the mean over the seats; it is taken out scaled
    by ``p(1 - p) / (q(1 - q))``, ``p`` the bot's mean score and ``q`` the mean over the seats:
    on the logistic scale a seat adds the same to every bot, which moves the score of a bot
    that wins (or loses) every game by nothing. Unscaled, a bot that beats a weak one in both
    seats would seem to gain in whichever seat is the weaker.
    """
    own = [scores[m.id][m.seats.index(bot)] for m in counted if bot in m.seats]
    p = sum(own) / len(own) if own else 0.5
    variance = score_variance(sum(own), len(own))
    deals: dict[tuple[str, int], list[tuple[int, float, float]]] = defaultdict(list)
    for m in counted:
        if m.tournament_id is None or m.deal_id is None or m.game_index is None:
            continue
        if bot in m.seats:
            key = _config(m)
            means = [seat_mean(bot, key, s) for s in range(len(m.seats))]
            q = sum(means) / len(means)
            scale = p * (1 - p) / (q * (1 - q)) if 0 < q < 1 else 0.0
            seat = m.seats.index(bot)
            raw = scores[m.id][seat]
            deals[m.tournament_id, m.deal_id].append(
                (m.game_index, raw, raw - scale * (means[seat] - q))
            )
    return deals.values(), variance


def score_variance(total: float, games: int) -> float:
    """Return the most a bot's score in one game may vary, from its ``total`` over ``games``.

    A score in [0, 1] with mean ``p`` varies by at most ``p(1 - p)`` (a win-or-loss score
    reaches it), so a bot that wins most of its games varies less than 1/4, the bound for any
    mean; the mean is estimated as ``(total + 1) / (games + 2)``, which keeps a bot with every
    game won (or lost) away from a bound of 0. Against the bound for any mean, the check needs
    about half the deals to flag a memorizing bot that wins 80% of its games.

    >>> score_variance(0, 0)
    0.25
    >>> round(score_variance(8, 8), 4)
    0.09
    """
    p = (total + 1) / (games + 2)
    return p * (1 - p)


def gain_p(
    differences: Sequence[float], later_games: Sequence[int], variance: float = 0.25
) -> float:
    """Return the one-sided p-value of a gain as large as ``sum(differences)`` without memory.

    ``differences[i]`` is deal ``i``'s mean seat-corrected later score minus its corrected first
    score, over ``later_games[i]`` later games. Without memory it averages 0, and a game's score
    varies by at most ``variance`` (:func:`score_variance`; 1/4 for any bot), so the difference
    varies by at most ``variance * (1 + 1 / later_games[i])``; the p-value is the normal tail of
    the sum against that bound. The bound matters: the seat correction turns two equal results
    (two wins in two seats) into a small difference of one sign, and a test that read only signs
    or ranks (a sign-flip or Wilcoxon test) would take many of those for evidence. With no deal
    it is 1.

    >>> round(gain_p([1.0] * 12, [1] * 12), 9)
    4.82e-07
    >>> gain_p([0.5, -0.5], [1, 1])
    0.5
    """
    if not differences:
        return 1.0
    bound = sum(variance * (1 + 1 / k) for k in later_games)
    z = sum(differences) / math.sqrt(bound)
    return 0.5 * math.erfc(z / math.sqrt(2))


def _check(
    bot: str, deals: Iterable[list[tuple[int, float, float]]], variance: float
) -> RepeatDealCheck:
    firsts: list[float] = []
    laters: list[float] = []
    differences: list[float] = []
    later_games: list[int] = []
    for games in deals:
        if len(games) < 2:
            continue
        first, *later = sorted(games)
        firsts.append(first[1])
        laters.extend(g[1] for g in later)
        differences.append(sum(g[2] for g in later) / len(later) - first[2])
        later_games.append(len(later))
    n = len(differences)
    if n == 0:
        return RepeatDealCheck(bot, 0, 0.0, 0.0, 0.0, 1.0, False)
    p = gain_p(differences, later_games, variance) if n >= MIN_DEALS else 1.0
    return RepeatDealCheck(
        bot,
        n,
        sum(firsts) / n,
        sum(laters) / len(laters),
        sum(differences) / n,
        p,
        p < FLAG_BELOW,
    )


def _config(match: StoredMatch) -> str:
    """The game configuration a match was played in: its seats are comparable within it."""
    return json.dumps([match.game, match.options], sort_keys=True)


class _SeatTotals:
    """Each configuration's score totals per seat, overall and over the games of each bot.

    A bot's seat correction is the seats' mean over the games it did *not* play (and, with
    ``exclude``, that none of those bots played): every pairing meets in every seat order (the
    rotations of a table), so over the rest the means hold no bot's strength.
    """

    def __init__(
        self,
        counted: Sequence[StoredMatch],
        scores: dict[str, tuple[float, ...]],
        exclude: frozenset[str] | set[str] = frozenset(),
    ) -> None:
        self.totals: dict[str, list[float]] = {}
        self.games: dict[str, int] = defaultdict(int)
        self.of_bot: dict[tuple[str, str], list[float]] = {}
        self.games_of_bot: dict[tuple[str, str], int] = defaultdict(int)
        for match in counted:
            if exclude.isdisjoint(match.seats):
                self._add(match, scores[match.id])

    def _add(self, match: StoredMatch, scores: Sequence[float]) -> None:
        key = _config(match)
        rows = [self.totals.setdefault(key, [0.0] * len(scores))]
        self.games[key] += 1
        for bot in match.seats:
            rows.append(self.of_bot.setdefault((bot, key), [0.0] * len(scores)))
            self.games_of_bot[bot, key] += 1
        for row in rows:
            for seat, score in enumerate(scores):
                row[seat] += score

    def mean_without(self, bot: str, key: str, seat: int) -> float:
        """The mean score of ``seat`` in configuration ``key`` over the games without ``bot``
        (over all of them when every one had ``bot``; 0 when there are none)."""
        if not self.games[key]:
            return 0.0
        games = self.games[key] - self.games_of_bot[bot, key]
        if games == 0:
            return self.totals[key][seat] / self.games[key]
        own = self.of_bot.get((bot, key))
        return (self.totals[key][seat] - (own[seat] if own else 0.0)) / games
