"""The official standings: one maximum-likelihood fit over all the rated games of a pool at once.

docs/ratings.md. Incremental Elo depends on the order of the games; this fit does not
(the games are put in a canonical order first, so shuffling them changes no bit of the result).
It is the model of BayesElo and Ordo, extended to the finishing orders of 3 and 4 sides:

* **Plackett-Luce over the finishing order of the sides.** A side of strength ``u`` is placed
  first among the sides still unplaced with probability ``exp(u) / sum(exp(u') for those
  sides)``, then the next place likewise among the rest. For two sides this is Bradley-Terry,
  ``P(A beats B) = 1 / (1 + exp(u_B - u_A))``, the logistic Elo curve.
* **Ties** (sides with the same place) count as every strict order consistent with them, each
  with an equal share: a game's log-likelihood is the mean of the log-likelihoods of those
  orders. For two sides a draw is therefore half a win each way, as in Elo's scoring; a game
  of 4 sides where two tie second has two orders, each weighing 1/2. (This is a composite
  likelihood, not a model of how often draws happen: no draw rate is fitted.)
* **Partnerships:** a side's strength is the mean of its partners' strengths (the mean keeps the
  Elo scale of single play), plus the mean of its seats' seat advantages.
* **Seat advantage:** one term per seat *position* ``p = (seat - first_seat) mod players``,
  counted from the game's first leader or starter (the first bidder in Moon); position 0 is 0,
  so each term is the advantage of sitting p seats after the first starter, fitted jointly with
  the strengths. The terms belong to one pool (one game type and number of seats): the caller
  fits one pool at a time, and mixing numbers of seats is refused. In Doubles the holder of the
  highest double opens whatever the first seat, so its terms measure nothing and stay near 0.
* **A weak Gaussian prior** (a ridge) of standard deviation :data:`PRIOR_SIGMA` Elo, centred on
  0, on every strength and seat term: a bot that won every game gets a large, finite rating
  rather than an infinite one, and a direction the games cannot tell (two bots that only ever
  played as partners: only their sum is known) is split evenly. On any real table its pull is
  far below the noise; :func:`fit` takes ``prior_sigma`` to make it vanish in tests.

Strengths are found in natural units (nats of log-odds) with scipy's L-BFGS-B and an analytic
gradient, then reported on the Elo scale (``400 / ln 10`` Elo per natural unit) and anchored:
the pool's mean rating is 1500, or a named anchor bot (a frozen baseline) is held at a given
rating, as Ordo and BayesElo's ``offset`` do. Only differences are measured; the anchor places
them. A course's several frozen baselines (``fixed``: ``house:greedy`` at 1500, ``house:random``
at 1000, ...) are held instead: their strengths are constants, not parameters, so the spacing
of their ratings is imposed rather than measured, and every other bot and the seat terms are
fitted against them (Ordo's multiple anchors). The prior is then centred on their mean rating.
The bots must form one connected pool (every two linked by a chain of games): ratings of pools
that never met could only be compared through the prior, so :func:`fit` refuses them and
names the parts.

>>> from domino_arena.server.ladder.elo import RatedGame
>>> win = RatedGame(("ann", "bob"), (0, 1), (0, 1), (0, 0))
>>> loss = RatedGame(("ann", "bob"), (0, 1), (1, 0), (0, 0))
>>> games = [FitGame(g, 0, f"u{i}") for i, g in enumerate([win, win, win, loss])]
>>> result = fit(games, seat_terms=False)
>>> round(result.ratings["ann"] - result.ratings["bob"], 1)  # 400 log10(3) = 190.8 less the prior
187.1
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import permutations, product
from typing import TYPE_CHECKING, Final

from domino_arena.sdk.match.records import parse_record
from domino_arena.sdk.rules.dealing import first_seat as random_first_seat
from domino_arena.server.ladder.elo import INITIAL_RATING, RatedGame
from domino_arena.server.ladder.ratings_store import rated_game_of
from domino_arena.server.store.matches import StoredMatch

# numpy and scipy (some 40 MiB and 0.4 s) are imported by the functions that fit, not here:
# the web face and the referee import this module's types at start and may never fit.
if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from threadpoolctl import threadpool_limits

    Vector = npt.NDArray[np.float64]

MODEL: Final = "plackett-luce/1"
"""The model and its version, stored with what it produced (a game record says which fed it)."""

ELO_PER_NATURAL: Final = 400 / math.log(10)
"""Elo points per natural unit of strength: a difference ``d`` is odds of ``exp(d)`` to 1."""

PRIOR_SIGMA: Final = 1000.0
"""Standard deviation, in Elo, of the Gaussian prior on every strength and seat term."""


@dataclass(frozen=True, slots=True)
class FitGame:
    """One rated game as the fit reads it: the game, who started it and its independent unit.

    Raises:
        ValueError: ``first_seat`` not a seat of the game, or ``unit`` empty.
    """

    game: RatedGame
    first_seat: int
    """The first leader or starter (first bidder in Moon): seat positions count from it."""
    unit: str
    """The independent unit the game belongs to: games of one unit are resampled together by
    the bootstrap (a duplicate set: one deal under all its rotations; else the match)."""

    def __post_init__(self) -> None:
        seats = len(self.game.bots)
        if not 0 <= self.first_seat < seats:
            raise ValueError(
                f"first_seat: expected a seat in 0..{seats - 1}, got {self.first_seat}"
            )
        if not isinstance(self.unit, str) or not self.unit:
            raise ValueError(f"unit: expected a non-empty unit key, got {self.unit!r}")

    def position(self, seat: int) -> int:
        """The seat position of ``seat``: how many seats after the first starter it sits."""
        return (seat - self.first_seat) % len(self.game.bots)


def fit_game_of(match: StoredMatch) -> FitGame:
    """Return a stored rated match as the fit reads it.

    The game is :func:`.ratings_store.rated_game_of`'s. The first seat is the one in the match's
    record when the row carries it; otherwise the referee's default, the seat drawn from the
    seed (``sdk.rules.dealing.first_seat``), which is what every match gets: neither the arena
    nor a tournament passes a first seat, and no game's options hold one. The unit is the
    duplicate set ``"{tournament_id}/{deal_id}"`` for a tournament game with a deal id (every
    rotation of one deal), else the match id.

    Raises:
        ValueError: the match is not rated or is damaged (the message says which field), or
            its record cannot be read (:class:`~domino_arena.sdk.match.records.RecordError`).
    """
    game = rated_game_of(match)
    if match.record is not None:
        first = parse_record(match.record).first_seat
    else:
        first = random_first_seat(match.seed, len(match.seats))
    if match.tournament_id is not None and match.deal_id is not None:
        unit = f"{match.tournament_id}/{match.deal_id}"
    else:
        unit = match.id
    return FitGame(game, first, unit)


@dataclass(frozen=True, slots=True)
class FitResult:
    """The standings of one pool from one fit; every number on the Elo scale."""

    ratings: Mapping[str, float]
    """Each bot's rating, anchored (see :func:`fit`)."""
    games: Mapping[str, int]
    """How many of the fitted games each bot played."""
    seat_advantage: tuple[float, ...]
    """Per seat position (0 = the first starter, always 0.0): the Elo a side gains by sitting
    there, relative to the first starter's seat. All 0.0 when fitted without seat terms."""
    log_likelihood: float
    """The log-likelihood of the games at the fit (ties as their mean order; prior excluded)."""
    players: int
    """Seats per game in the pool."""
    units: int
    """Independent units (duplicate sets or single games) among the games."""
    anchor: str | None
    anchor_rating: float
    prior_sigma: float
    seat_terms: bool
    model: str = MODEL
    fixed: Mapping[str, float] = field(default_factory=dict)
    """The frozen baselines held at their ratings (empty: anchored by ``anchor``)."""

    def standings(self) -> list[tuple[str, float]]:
        """The table: highest rating first, equal ratings by name."""
        return sorted(self.ratings.items(), key=lambda item: (-item[1], item[0]))


def fit(
    games: Sequence[FitGame],
    *,
    anchor: str | None = None,
    anchor_rating: float = INITIAL_RATING,
    prior_sigma: float = PRIOR_SIGMA,
    seat_terms: bool = True,
    fixed: Mapping[str, float] | None = None,
) -> FitResult:
    """Fit every bot's rating and the seat advantages of one pool to ``games`` at once.

    Args:
        anchor: the bot held at ``anchor_rating``; None anchors the mean of all the bots there.
        fixed: frozen baselines, bot -> rating, held there (constants of the fit) instead of
            an anchor; each must have played some of the games.
        prior_sigma: the Gaussian prior's standard deviation in Elo (see the module doc).
        seat_terms: False fits strengths alone (plain Plackett-Luce / Bradley-Terry).

    Raises:
        ValueError: no games, games with different numbers of seats, an anchor that played
            none of them, a ``prior_sigma`` or ``anchor_rating`` that is not a positive or
            finite number, bots in parts that never met (the message names the parts), or
            ``fixed`` with an anchor, with a bot that played none of the games or a rating that
            is not finite.
    """
    import numpy as np  # noqa: PLC0415

    if fixed and anchor is not None:
        raise ValueError(
            f"anchor: {anchor!r} given with fixed baselines; expected one way to anchor the scale"
        )
    problem = Problem(games, seat_terms=seat_terms, prior_sigma=prior_sigma, fixed=fixed)
    problem.check_anchor(anchor, anchor_rating)
    parts = problem.components(np.ones(len(problem.games)))
    if len(parts) > 1:
        described = "; ".join(", ".join(part) for part in parts[:4])
        more = "" if len(parts) <= 4 else f"; and {len(parts) - 4} more"
        raise ValueError(
            f"games: the bots form {len(parts)} parts that never met ({described}{more}); "
            "their ratings could not be compared, so fit each part on its own"
        )
    with one_thread():
        params = problem.solve(np.ones(len(problem.games)), np.zeros(problem.size))
    return problem.result(params, anchor, anchor_rating)


def one_thread() -> threadpool_limits:
    """A context that keeps BLAS on one thread: the solves are far too small to gain from
    threads, and on a busy machine OpenBLAS's waiting threads made each one 13 times slower."""
    from threadpoolctl import threadpool_limits  # noqa: PLC0415

    return threadpool_limits(limits=1, user_api="blas")


class Problem:
    """The games of one pool as arrays, with the likelihood's value and gradient at any
    parameters and any per-game weights (the bootstrap's resample counts).

    The parameters are each bot's strength (bots sorted by name), then the seat terms of
    positions 1..players-1, in natural units. Sides are rows of a sparse design matrix that maps
    the parameters to side strengths; the strict finishing orders of games with the same number
    of sides are rows of one integer array, so the likelihood is a few numpy operations per
    number of sides.
    """

    def __init__(
        self,
        games: Sequence[FitGame],
        *,
        seat_terms: bool,
        prior_sigma: float,
        fixed: Mapping[str, float] | None = None,
    ) -> None:
        import numpy as np  # noqa: PLC0415

        if not games:
            raise ValueError("games: expected at least one rated game to fit, got none")
        if not (math.isfinite(prior_sigma) and prior_sigma > 0):
            raise ValueError(
                f"prior_sigma: expected a positive finite number of Elo, got {prior_sigma}"
            )
        players = len(games[0].game.bots)
        for index, item in enumerate(games):
            if len(item.game.bots) != players:
                raise ValueError(
                    f"games[{index}]: {len(item.game.bots)} seats, but games[0] has {players}; "
                    "expected one pool (one game type and number of seats) per fit"
                )
        # A canonical order: the sums below then run in the same order however the games came.
        self.games: tuple[FitGame, ...] = tuple(sorted(games, key=_game_key))
        self.players = players
        self.seat_terms = seat_terms
        self.prior_sigma = prior_sigma
        self.bots: tuple[str, ...] = tuple(sorted({b for g in self.games for b in g.game.bots}))
        self.index = {bot: i for i, bot in enumerate(self.bots)}
        self.size = len(self.bots) + (players - 1 if seat_terms else 0)
        self.units: tuple[str, ...] = tuple(sorted({g.unit for g in self.games}))
        unit_index = {unit: i for i, unit in enumerate(self.units)}
        self.unit_of_game = np.array([unit_index[g.unit] for g in self.games], dtype=np.intp)
        self._precision = (ELO_PER_NATURAL / prior_sigma) ** 2
        self.fixed: dict[str, float] = dict(sorted((fixed or {}).items()))
        self._set_fixed()
        self._build()

    def _set_fixed(self) -> None:
        """Check the frozen baselines and set the constants that hold them: a mask of their
        parameters and their values in natural units, centred on their mean rating (the
        prior's centre and the offset of every rating)."""
        import numpy as np  # noqa: PLC0415

        for bot, rating in self.fixed.items():
            if bot not in self.index:
                shown = ", ".join(self.bots[:10]) + (", ..." if len(self.bots) > 10 else "")
                raise ValueError(
                    f"fixed: baseline {bot!r} played none of the games; expected bots of "
                    f"the games ({shown})"
                )
            if not math.isfinite(rating):
                raise ValueError(f"fixed: {bot!r} at {rating}; expected a finite rating")
        self.centre = (
            math.fsum(self.fixed.values()) / len(self.fixed) if self.fixed else INITIAL_RATING
        )
        self.free = np.ones(self.size, dtype=np.bool_)
        self.constants = np.zeros(self.size)
        for bot, rating in self.fixed.items():
            self.free[self.index[bot]] = False
            self.constants[self.index[bot]] = (rating - self.centre) / ELO_PER_NATURAL

    def _build(self) -> None:
        import numpy as np  # noqa: PLC0415
        from scipy import sparse  # noqa: PLC0415

        rows: list[int] = []
        cols: list[int] = []
        values: list[float] = []
        incidence: list[tuple[int, int]] = []
        groups: dict[int, tuple[list[list[int]], list[int], list[float]]] = {}
        side_row = 0
        for g, item in enumerate(self.games):
            game = item.game
            base = side_row
            members: list[list[int]] = [[] for _ in range(game.sides)]
            for seat, side in enumerate(game.side_of_seat):
                members[side].append(seat)
            for side, seats in enumerate(members):
                share = 1.0 / len(seats)
                for seat in seats:
                    rows.append(base + side)
                    cols.append(self.index[game.bots[seat]])
                    values.append(share)
                    position = item.position(seat)
                    if self.seat_terms and position > 0:
                        rows.append(base + side)
                        cols.append(len(self.bots) + position - 1)
                        values.append(share)
            side_row += game.sides
            incidence.extend((g, self.index[bot]) for bot in game.bots)
            orders = _orders(game.standing)
            order_rows, order_games, order_weights = groups.setdefault(game.sides, ([], [], []))
            for order in orders:
                order_rows.append([base + side for side in order])
                order_games.append(g)
                order_weights.append(1.0 / len(orders))
        self.side_rows = side_row
        self.design = sparse.csr_array(
            (values, (rows, cols)), shape=(side_row, self.size), dtype=np.float64
        )
        self.design_t = self.design.T.tocsr()
        games_at, bots_at = zip(*incidence, strict=True)
        self.incidence = sparse.csr_array(
            (np.ones(len(incidence)), (games_at, bots_at)),
            shape=(len(self.games), len(self.bots)),
        )
        self.groups = [
            (
                np.array(order_rows, dtype=np.intp),
                np.array(order_games, dtype=np.intp),
                np.array(order_weights, dtype=np.float64),
            )
            for _, (order_rows, order_games, order_weights) in sorted(groups.items())
        ]

    def check_anchor(self, anchor: str | None, anchor_rating: float) -> None:
        """Raise ``ValueError`` unless ``anchor`` is None or a bot of the games, at a finite
        rating."""
        if not math.isfinite(anchor_rating):
            raise ValueError(f"anchor_rating: expected a finite rating, got {anchor_rating}")
        if anchor is not None and anchor not in self.index:
            shown = ", ".join(self.bots[:10]) + (", ..." if len(self.bots) > 10 else "")
            raise ValueError(
                f"anchor: {anchor!r} played none of the games; expected one of {shown}"
            )

    def components(self, weights: Vector) -> list[tuple[str, ...]]:
        """The parts of the bots linked by the games of positive weight (largest first);
        bots without such a game are left out."""
        import numpy as np  # noqa: PLC0415
        from scipy import sparse  # noqa: PLC0415
        from scipy.sparse import csgraph  # noqa: PLC0415

        active = sparse.diags_array(weights > 0, dtype=np.float64) @ self.incidence
        present = np.asarray(active.sum(axis=0)).ravel() > 0
        linked = active.T @ active
        _, labels = csgraph.connected_components(linked, directed=False)
        parts: dict[int, list[str]] = {}
        for bot, label, here in zip(self.bots, labels, present, strict=True):
            if here:
                parts.setdefault(int(label), []).append(bot)
        return sorted((tuple(part) for part in parts.values()), key=lambda p: (-len(p), p))

    def log_likelihood(self, params: Vector, weights: Vector) -> tuple[float, Vector]:
        """The weighted log-likelihood of the games at ``params``, and its gradient."""
        import numpy as np  # noqa: PLC0415

        strength = self.design @ params
        total = 0.0
        by_side = np.zeros(self.side_rows)
        for orders, order_games, order_weights in self.groups:
            weight = weights[order_games] * order_weights
            utility = strength[orders]
            sides = orders.shape[1]
            terms = np.zeros(len(orders))
            slope = np.zeros_like(utility)
            for place in range(sides - 1):
                rest = utility[:, place:]
                top = rest.max(axis=1, keepdims=True)
                chance = np.exp(rest - top)
                total_chance = chance.sum(axis=1, keepdims=True)
                terms += utility[:, place] - (top + np.log(total_chance))[:, 0]
                slope[:, place] += 1.0
                slope[:, place:] -= chance / total_chance
            total += float(weight @ terms)
            by_side += np.bincount(
                orders.ravel(), (slope * weight[:, None]).ravel(), minlength=self.side_rows
            )
        return total, np.asarray(self.design_t @ by_side, dtype=np.float64)

    def _objective(self, params: Vector, weights: Vector) -> tuple[float, Vector]:
        """The negative log-posterior and its gradient: what L-BFGS-B minimises."""
        value, gradient = self.log_likelihood(params, weights)
        prior = 0.5 * self._precision * float(params @ params)
        return prior - value, self._precision * params - gradient

    def solve(self, weights: Vector, start: Vector) -> Vector:
        """The parameters of the maximum posterior under ``weights``, from ``start``.

        Raises:
            RuntimeError: the optimiser stopped far from a stationary point.
        """
        import numpy as np  # noqa: PLC0415
        from scipy import optimize  # noqa: PLC0415

        free = self.free

        def objective(x: Vector) -> tuple[float, Vector]:
            params = self.constants.copy()
            params[free] = x
            value, gradient = self._objective(params, weights)
            return value, gradient[free]

        found = optimize.minimize(
            objective,
            start[free],
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": 10_000, "ftol": 1e-14, "gtol": 1e-9},
        )
        params = self.constants.copy()
        params[free] = np.asarray(found.x, dtype=np.float64)
        _, gradient = objective(params[free])
        scale = max(1.0, float(weights.sum()))
        if not np.all(np.isfinite(params)) or float(np.abs(gradient).max()) > 1e-5 * scale:
            raise RuntimeError(
                f"the rating fit did not converge ({found.message}); "
                f"largest gradient {float(np.abs(gradient).max()):.3g}"
            )
        return params

    def elo(self, params: Vector) -> Vector:
        """Each bot's strength at ``params`` in Elo, before anchoring."""
        return params[: len(self.bots)] * ELO_PER_NATURAL

    def seat_elo(self, params: Vector) -> tuple[float, ...]:
        """The seat advantage of each position at ``params`` in Elo (position 0 first)."""
        terms = params[len(self.bots) :] * ELO_PER_NATURAL if self.seat_terms else ()
        padded = [0.0, *(float(t) for t in terms)]
        return tuple(padded + [0.0] * (self.players - len(padded)))

    def result(self, params: Vector, anchor: str | None, anchor_rating: float) -> FitResult:
        """The fit at ``params`` as the standings report it."""
        import numpy as np  # noqa: PLC0415

        elo = self.elo(params)
        if self.fixed:
            offset = self.centre
        else:
            offset = anchor_rating - (
                float(np.mean(elo)) if anchor is None else float(elo[self.index[anchor]])
            )
        counts = np.asarray(self.incidence.sum(axis=0)).ravel()
        value, _ = self.log_likelihood(params, np.ones(len(self.games)))
        return FitResult(
            ratings={bot: float(r) + offset for bot, r in zip(self.bots, elo, strict=True)},
            games={bot: int(n) for bot, n in zip(self.bots, counts, strict=True)},
            seat_advantage=self.seat_elo(params),
            log_likelihood=value,
            players=self.players,
            units=len(self.units),
            anchor=anchor,
            anchor_rating=anchor_rating,
            prior_sigma=self.prior_sigma,
            seat_terms=self.seat_terms,
            fixed=dict(self.fixed),
        )

    def start_of(self, point: FitResult) -> Vector:
        """The parameters of a fit's result: a warm start for refits of the same games."""
        import numpy as np  # noqa: PLC0415

        ratings = np.array([point.ratings[bot] for bot in self.bots])
        centre = self.centre if self.fixed else ratings.mean()
        strengths = (ratings - centre) / ELO_PER_NATURAL
        seats = np.array(point.seat_advantage[1:] if self.seat_terms else ()) / ELO_PER_NATURAL
        start = np.concatenate([strengths, seats]).astype(np.float64)
        return np.where(self.free, start, self.constants)


def _orders(standing: Sequence[int]) -> list[tuple[int, ...]]:
    """Every strict finishing order of the sides consistent with ``standing`` (ties in every
    order among themselves), best first."""
    blocks = [
        [side for side, at in enumerate(standing) if at == place] for place in sorted(set(standing))
    ]
    return [
        tuple(side for block in chosen for side in block)
        for chosen in product(*(permutations(block) for block in blocks))
    ]


def _game_key(item: FitGame) -> tuple[object, ...]:
    game = item.game
    return (item.unit, game.bots, game.side_of_seat, game.standing, item.first_seat, game.faults)
