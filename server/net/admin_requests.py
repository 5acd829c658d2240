"""The admin API's requests, checked: the token, then each field, before anything changes.

Every check raises :class:`RequestError` with the status to answer and a message that names the
field, the rule and what was expected: UNAUTHENTICATED (the token), INVALID_ARGUMENT (the
request is wrong), FAILED_PRECONDITION (not now, e.g. a bot that is not connected).
"""

from __future__ import annotations

import dataclasses
import hmac
import secrets
from collections.abc import Awaitable, Callable, Iterable
from typing import Final

import grpc
from google.protobuf.message import Message

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.match.seeds import check_seed
from domino_arena.sdk.rules import GAMES, Game
from domino_arena.sdk.wire import (
    ConversionError,
    fault_policy_from_proto,
    game_from_proto,
    match_result_to_proto,
)
from domino_arena.server.logs import quote
from domino_arena.server.net.wire import deal_mode_from_proto, time_control_from_proto
from domino_arena.server.play.arena import MatchAbortedError, NotAcceptingError
from domino_arena.server.play.match_spec import (
    DEFAULT_MAX_DEALS,
    DEFAULT_MAX_STRIKES,
    MATCH_ID,
    FinishedMatch,
    MatchSpec,
)
from domino_arena.server.play.roster import Roster
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.bots import NAME_PATTERN, NAME_RULE
from domino_arena.server.tournaments.scheduler import DealMode
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import referee_pb2 as pb

METADATA_KEY: Final = "authorization"
TOKEN_HELP: Final = (
    "send call metadata 'authorization: Bearer <token>' "
    "(the CLI: --admin-token or $DOMINO_ARENA_ADMIN_TOKEN)"
)


MAX_ID_LENGTH: Final = 128
"""The longest match or tournament id a request may name (the referee's are 16-64)."""

LIMITS: Final[dict[str, int]] = {
    "time_control.move_ms": 600_000,
    "time_control.bank_ms": 3_600_000,
    "time_control.grace_ms": 10_000,
    "max_strikes": 100,
    "max_deals": 100_000,
    "concurrency": 1024,
    "games_per_pairing": 1000,
    "wait_ms": 86_400_000,
    "limit": 1000,
}
"""The largest value of each numeric field of the admin API (all are 0 or more; 0 takes the
default where the proto says so): docs/admin.md and admin.proto state the same ranges."""


class RequestError(Exception):
    """An admin request the referee refuses, with the status to answer."""

    def __init__(self, status: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.status = status


def invalid(message: str) -> RequestError:
    return RequestError(grpc.StatusCode.INVALID_ARGUMENT, message)


def not_found(message: str) -> RequestError:
    return RequestError(grpc.StatusCode.NOT_FOUND, message)


def not_now(message: str) -> RequestError:
    return RequestError(grpc.StatusCode.FAILED_PRECONDITION, message)


def bearer_token(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The token of the call's ``authorization: Bearer <token>`` metadata.

    Raises:
        RequestError: UNAUTHENTICATED: the metadata is missing or malformed.
    """
    unauthenticated = grpc.StatusCode.UNAUTHENTICATED
    values = [value for key, value in metadata or () if key.lower() == METADATA_KEY]
    if not values:
        raise RequestError(unauthenticated, f"admin token missing: {TOKEN_HELP}")
    value = values[0]
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    scheme, _, token = text.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise RequestError(
            unauthenticated,
            f"admin token missing: the authorization metadata is not 'Bearer <token>'; "
            f"{TOKEN_HELP}",
        )
    return token


def check_token(metadata: Iterable[tuple[str, str | bytes]] | None, expected: str) -> None:
    """Accept the call only if its metadata carries ``Bearer <expected>``.

    Raises:
        RequestError: UNAUTHENTICATED: the token is missing, malformed or wrong, or the
            referee has none (then every call is refused).
    """
    token = bearer_token(metadata)
    if not expected:
        raise RequestError(
            grpc.StatusCode.UNAUTHENTICATED,
            "wrong admin token: this referee has no admin token set, so its admin API is closed",
        )
    if not hmac.compare_digest(token.encode(), expected.encode()):
        raise RequestError(grpc.StatusCode.UNAUTHENTICATED, "wrong admin token")


def in_range(value: int, field: str) -> int:
    """Return ``value`` if it is at most ``LIMITS[field]``.

    Raises:
        RequestError: INVALID_ARGUMENT naming the field, its range and the value.
    """
    high = LIMITS[field.rpartition(".")[2] if field not in LIMITS else field]
    if value > high:
        raise invalid(f"{field}: must be at most {high}, got {value} (the range is 0-{high})")
    return value


def id_of(value: str, field: str, what: str) -> str:
    """Return an id a request names if it is present and not too long.

    Raises:
        RequestError: INVALID_ARGUMENT: empty, or longer than :data:`MAX_ID_LENGTH`.
    """
    if not value:
        raise invalid(f"{field}: missing; expected {what}")
    if len(value) > MAX_ID_LENGTH:
        raise invalid(
            f"{field}: at most {MAX_ID_LENGTH} characters, got {len(value):,} ({quote(value, 20)})"
        )
    return value


def bot_name_of(value: str, field: str = "name") -> str:
    """Return the bot name a request gives if it may name a bot (:data:`NAME_PATTERN`).

    Raises:
        RequestError: INVALID_ARGUMENT: empty, or not a bot name (a short escaped prefix of it
            is echoed).
    """
    if not value:
        raise invalid(f"{field}: missing; expected a bot name ({NAME_RULE})")
    if not NAME_PATTERN.match(value):
        raise invalid(
            f"{field}: bad bot name {quote(value, 64)} ({len(value):,} characters): {NAME_RULE}"
        )
    return value


def tournament_numbers(request: admin_pb.CreateTournamentRequest) -> None:
    """Check the numeric fields of a CreateTournament request against :data:`LIMITS`."""
    in_range(request.games_per_pairing, "games_per_pairing")
    in_range(request.max_strikes, "max_strikes")
    in_range(request.max_deals, "max_deals")
    in_range(request.concurrency, "concurrency")
    if request.HasField("wait_ms"):
        in_range(request.wait_ms, "wait_ms")


def ladder_numbers(request: admin_pb.StartLadderRequest) -> None:
    """Check the numeric fields of a StartLadder request against :data:`LIMITS`."""
    in_range(request.max_strikes, "max_strikes")
    in_range(request.max_deals, "max_deals")
    in_range(request.concurrency, "concurrency")


def game_of(message: Message, field: str = "game") -> Game:
    """Return the game of a ``GameConfig`` field of a request (``HasField`` checked).

    Raises:
        RequestError: INVALID_ARGUMENT naming ``field``.
    """
    if not message.HasField(field):
        raise invalid(f"{field}: missing; expected a game configuration")
    try:
        return game_from_proto(getattr(message, field), field)
    except ConversionError as exc:
        raise invalid(str(exc)) from None
    except ValueError as exc:
        raise invalid(f"{field}: {exc}") from None


def game_name(name: str, field: str = "game") -> str:
    """Check a game name (a rating pool or a filter).

    Raises:
        RequestError: INVALID_ARGUMENT: empty or unknown.
    """
    known = ", ".join(sorted(GAMES))
    if not name:
        raise invalid(f"{field}: missing; expected one of {known}")
    if name not in GAMES:
        raise invalid(f"{field}: unknown game {quote(name)}; expected one of {known}")
    return name


def time_control_of(message: pb.TimeControl, field: str = "time_control") -> TimeControl:
    """Return the time control of a request (zeros: the defaults) within :data:`LIMITS`."""
    for name in ("move_ms", "bank_ms", "grace_ms"):
        in_range(getattr(message, name), f"{field}.{name}")
    try:
        return time_control_from_proto(message)
    except ValueError as exc:
        raise invalid(f"{field}: {exc}") from None


def fault_policy_of(value: pb.FaultPolicy.ValueType, field: str = "fault_policy") -> FaultPolicy:
    """Return a request's fault policy (unset: substitute).

    Raises:
        RequestError: INVALID_ARGUMENT: a value the protocol does not define.
    """
    policy = fault_policy_from_proto(value)
    if policy is None:
        raise invalid(
            f"{field}: unknown value {value}; expected FAULT_POLICY_FORFEIT or "
            "FAULT_POLICY_SUBSTITUTE (or unset: substitute)"
        )
    return policy


def deal_mode_of(value: admin_pb.DealMode.ValueType, field: str = "deals") -> DealMode:
    """Return a request's deal mode (unset: duplicate).

    Raises:
        RequestError: INVALID_ARGUMENT: a value the protocol does not define.
    """
    mode = deal_mode_from_proto(value)
    if mode is None:
        raise invalid(
            f"{field}: unknown value {value}; expected DEAL_MODE_DUPLICATE, DEAL_MODE_SPREAD or "
            "DEAL_MODE_FRESH (or unset: duplicate)"
        )
    return mode


def seed_of(value: int, field: str = "seed") -> int:
    """Return a request's seed if a match can have it.

    Raises:
        RequestError: INVALID_ARGUMENT naming ``field``.
    """
    try:
        return check_seed(value, field)
    except ValueError as exc:
        raise invalid(str(exc)) from None


def match_spec(request: admin_pb.RunMatchRequest, lobby: Roster) -> MatchSpec:
    """Check ``request`` against the game and the lobby and return the match to run.

    Raises:
        RequestError: INVALID_ARGUMENT for a bad game, seat count, seed, time control or
            policy; FAILED_PRECONDITION for a bot that is not connected or does not play it.
    """
    game = game_of(request)
    bots = tuple(request.bots)
    if len(bots) != game.num_players:
        raise invalid(
            f"bots: {game.describe()} needs {game.num_players} bots, one per seat, got {len(bots)}"
        )
    twice = sorted({b for b in bots if bots.count(b) > 1})
    if twice:
        raise invalid(f"bots: {', '.join(twice)} listed twice: a bot plays one seat per match")
    seed = seed_of(request.seed) if request.has_seed else secrets.randbelow(10**9)
    time_control = time_control_of(request.time_control)
    fault_policy = fault_policy_of(request.fault_policy)
    max_strikes = in_range(request.max_strikes, "max_strikes") or DEFAULT_MAX_STRIKES
    max_deals = in_range(request.max_deals, "max_deals") or DEFAULT_MAX_DEALS
    for name in bots:
        connection = lobby.get(name)
        if connection is None:
            raise not_now(f"bot {quote(name)} is not connected")
        if game.name not in connection.games:
            raise not_now(
                f"bot '{name}' does not play {game.name} (it plays {', '.join(connection.games)})"
            )
    spec = MatchSpec(
        game=game,
        bots=bots,
        seed=seed,
        time_control=time_control,
        fault_policy=fault_policy,
        max_strikes=max_strikes,
        max_deals=max_deals,
    )
    if not request.match_id:
        return spec
    if not MATCH_ID.fullmatch(request.match_id):
        raise invalid(
            f"match_id: expected 32 lowercase hex digits (a uuid4's hex), got "
            f"{quote(request.match_id[:80])}"
        )
    return dataclasses.replace(spec, match_id=request.match_id)


async def played(
    run_match: Callable[[MatchSpec], Awaitable[FinishedMatch]], spec: MatchSpec
) -> tuple[FinishedMatch, pb.MatchResult]:
    """Play ``spec`` (``Arena.run_match``) for an admin request; return it and its result
    message (RunMatch, PracticeMatch).

    Raises:
        RequestError: UNAVAILABLE when the referee is shutting down or aborted the match;
            INTERNAL when the match was played but could not be stored.
    """
    try:
        finished = await run_match(spec)
    except (NotAcceptingError, MatchAbortedError) as exc:
        raise RequestError(grpc.StatusCode.UNAVAILABLE, str(exc)) from None
    except Exception as exc:  # e.g. the database refused the finished match
        raise RequestError(
            grpc.StatusCode.INTERNAL,
            f"the match was played but not stored: {type(exc).__name__}: {exc}",
        ) from None
    game = spec.game
    sides = tuple(game.side_of(s) for s in range(game.num_players))
    return finished, match_result_to_proto(finished.result, sides)
