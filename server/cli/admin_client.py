"""The admin client: what every admin command shares, and ``match run``, ``standings``,
``matches`` and ``record``.

Every admin command is one or more calls of the referee's admin API (admin.proto) through
:func:`admin_call`, with the token of ``--admin-token`` or ``$DOMINO_ARENA_ADMIN_TOKEN``. This
module imports grpc and the protos at the top: ``main`` imports it only when an admin command
runs.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, Final

import grpc
from rich.console import Console

from domino_arena.sdk.client.tls import (
    ClientTls,
    TlsConfigError,
    client_tls,
    handshake_error,
    plaintext_hint,
    read_secret,
)
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import Game
from domino_arena.sdk.wire import fault_policy_to_proto, game_from_proto, game_to_proto
from domino_arena.server.cli.arguments import (
    ADMIN_TOKEN_ENV,
    PROG,
    CliError,
    Handler,
    Handlers,
    check_writable,
    checked_seed,
    course_argument,
    game_arguments,
    game_from_args,
    seat_bots,
    server_arguments,
)
from domino_arena.server.cli.json_output import json_argument, message_json, print_json
from domino_arena.server.cli.tables import table, terminal
from domino_arena.server.logs import escape
from domino_arena.server.net.wire import time_control_from_proto, time_control_to_proto
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.v1 import admin_pb2, admin_pb2_grpc, referee_pb2

_USER_MISTAKES: Final = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.OUT_OF_RANGE,
    }
)
"""Refusals that are the user's to fix (exit status 2); any other failure exits 1."""

# -- calling the admin API -----------------------------------------------------------------------


def admin_call(
    args: argparse.Namespace,
    method: str,
    request: Any,
    *,
    absent: Collection[grpc.StatusCode] = (),
) -> Any:
    """Call ``method`` of the admin API at ``args.server`` with the admin token; return the answer
    (None when the referee refuses it with a status of ``absent``: the caller's to handle).

    Ctrl-C cancels the call on the referee (``RunMatch`` then aborts its match) before the
    ``KeyboardInterrupt`` goes on.

    Raises:
        CliError: no token (2); a refusal the user can fix (2, the referee's reason); the
            referee cannot be reached or failed (1).
    """
    token = admin_token(args)
    if not token:
        raise CliError(
            f"no admin token: pass --admin-token or set ${ADMIN_TOKEN_ENV}, or read it from a "
            "file with --admin-token-file (the referee prints one at start when it was given "
            "none)"
        )
    tls = channel_tls(args)
    with open_channel(args.server, tls) as channel:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        metadata = (("authorization", f"Bearer {token}"),)
        call = getattr(stub, method).future(request, metadata=metadata)
        try:
            return call.result()
        except KeyboardInterrupt:
            call.cancel()
            raise
        except grpc.RpcError as exc:
            if exc.code() in absent:
                return None
            raise rpc_error(args.server, exc, tls) from None


def admin_token(args: argparse.Namespace) -> str | None:
    """The admin token: ``--admin-token-file``'s (it wins), else ``--admin-token`` or
    ``$DOMINO_ARENA_ADMIN_TOKEN``.

    Raises:
        CliError: the file cannot be read or is empty.
    """
    path: str | None = getattr(args, "admin_token_file", None)
    if path is None:
        token: str | None = args.admin_token
        return token
    return token_file(path, "--admin-token-file")


def token_file(path: str, option: str) -> str:
    """The token in the file ``path`` that ``option`` named (its first line).

    Raises:
        CliError: the file cannot be read or is empty (the message names ``option``).
    """
    try:
        return read_secret(path, option)
    except TlsConfigError as exc:
        raise CliError(str(exc)) from None


def channel_tls(args: argparse.Namespace) -> ClientTls | None:
    """The TLS the client options ask for (``--tls``, ``--tls-ca``, ``$DOMINO_ARENA_TLS_CA``,
    the client certificate), or None for plaintext.

    Raises:
        CliError: a TLS file cannot be read or is not PEM (exit status 2).
    """
    try:
        return client_tls(
            getattr(args, "tls", False),
            getattr(args, "tls_ca", None),
            getattr(args, "tls_client_cert", None),
            getattr(args, "tls_client_key", None),
        )
    except TlsConfigError as exc:
        raise CliError(str(exc)) from None


def open_channel(server: str, tls: ClientTls | None) -> grpc.Channel:
    """The one channel helper of the client commands: plaintext, or TLS with ``tls``."""
    if tls is None:
        return grpc.insecure_channel(server)
    return grpc.secure_channel(server, tls.credentials())


def rpc_error(server: str, exc: grpc.RpcError, tls: ClientTls | None = None) -> CliError:
    """The one-line error of a failed call: unreachable referee, or its refusal and reason.

    Exit status 2 for the user's mistakes, 1 for the rest.
    """
    code: grpc.StatusCode = exc.code()
    details: str = exc.details() or ""
    tls_message = handshake_error(server, tls, details)
    if code is grpc.StatusCode.UNAVAILABLE and tls_message is not None:
        message = tls_message
    elif code is grpc.StatusCode.UNAVAILABLE and "connect" in details.lower():
        hint = plaintext_hint(details) if tls is None else ""
        message = f"cannot reach the referee at {server}: {details}{hint}"
    else:
        message = f"the referee at {server} answered {code.name}: {details}"
    return CliError(message, code=2 if code in _USER_MISTAKES else 1)


def subcommands(
    parser: argparse.ArgumentParser,
    dest: str,
    actions: Sequence[
        tuple[str, str, Callable[[argparse.ArgumentParser], None], Callable[..., int]]
    ],
) -> None:
    """Add one sub-action per ``(name, help, add_arguments, run)``; ``run`` is set as ``action``."""
    subparsers = parser.add_subparsers(dest=dest, metavar="ACTION", required=True)
    for name, help_text, add_arguments, run in actions:
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        add_arguments(sub)
        sub.set_defaults(action=run)


def run_action(args: argparse.Namespace) -> int:
    """Run the sub-action :func:`subcommands` chose."""
    run: Callable[[argparse.Namespace], int] = args.action
    return run(args)


# -- time control and fault policy ---------------------------------------------------------------


def policy_arguments(parser: argparse.ArgumentParser) -> None:
    """``--time-control``, ``--fault-policy``, ``--max-strikes`` and ``--max-deals``: read by
    :func:`policies`."""
    parser.add_argument(
        "--time-control",
        metavar="TC",
        help="MOVE[+BANK][/GRACE], e.g. 1s+10s/50ms (default: the referee's, 1s+10s/50ms)",
    )
    parser.add_argument(
        "--fault-policy",
        choices=[p.value for p in FaultPolicy],
        help="what a fault costs (default substitute)",
    )
    parser.add_argument(
        "--max-strikes",
        type=int,
        metavar="K",
        help="substitute: faults that forfeit (default 3)",
    )
    parser.add_argument(
        "--max-deals",
        type=int,
        metavar="N",
        help=(
            "the cap on deals: a game nobody has won after N deals is adjudicated by its "
            "scores (default 1000, at most 100000)"
        ),
    )


def policies(args: argparse.Namespace, request: Any) -> None:
    """Copy ``--time-control``, ``--fault-policy``, ``--max-strikes`` and ``--max-deals`` into
    ``request``."""
    if args.time_control is not None:
        try:
            time_control = TimeControl.parse(args.time_control)
        except ValueError as exc:
            raise CliError(f"--time-control: {exc}") from None
        request.time_control.CopyFrom(time_control_to_proto(time_control))
    if args.fault_policy is not None:
        request.fault_policy = fault_policy_to_proto(FaultPolicy(args.fault_policy))
    if args.max_strikes is not None:
        if args.max_strikes < 1:
            raise CliError(f"--max-strikes: must be 1 or more, got {args.max_strikes}")
        request.max_strikes = args.max_strikes
    if args.max_deals is not None:
        if args.max_deals < 1:
            raise CliError(f"--max-deals: must be 1 or more, got {args.max_deals}")
        request.max_deals = args.max_deals


def time_control_text(message: referee_pb2.TimeControl) -> str:
    """A ``TimeControl`` message as the ``--time-control`` text that makes it."""
    return str(time_control_from_proto(message))


# -- printing ------------------------------------------------------------------------------------


def console() -> Console:
    """A rich console on stdout. Off a terminal it writes plain text, no escape codes even with
    ``$FORCE_COLOR`` set, wide enough for the tables."""
    if terminal():
        return Console(highlight=False)
    return Console(highlight=False, width=160, force_terminal=False, no_color=True)


def enum_name(enum: Any, value: int, prefix: str) -> str:
    """``TOURNAMENT_STATE_RUNNING`` -> ``running``."""
    name: str = enum.Name(value)
    return name.removeprefix(prefix).lower().replace("_", " ")


def print_result(game: Game, bots: Sequence[str], result: referee_pb2.MatchResult) -> None:
    """Print a ``MatchResult`` message: how it ended, the winner, each side's score."""
    termination = enum_name(referee_pb2.Termination, result.termination, "TERMINATION_")
    winner = result.winner
    if winner >= 0:
        seats = ", ".join(str(s) for s in game.sides[winner])
        score = "-".join(str(s) for s in result.scores)
        plural = "s" if len(game.sides[winner]) > 1 else ""
        print(f"result: {termination}; side {winner} (seat{plural} {seats}) wins {score}")
    else:
        print(f"result: {termination}; no winner")
    if result.detail:
        print(f"  {escape(result.detail)}")
    for side, seats_of_side in enumerate(game.sides):
        who = ", ".join(f"seat {s} {escape(bots[s])}" for s in seats_of_side)
        mark = "  winner" if side == winner else ""
        score_text = result.scores[side] if side < len(result.scores) else "?"
        print(f"  side {side} ({who}): {score_text}{mark}")


def print_head_to_head(
    console: Console, title: str, records: Sequence[Any], bots: Sequence[str] = ()
) -> None:
    """A square table: row bot against column bot, as wins-draws-losses.

    ``bots``: the rows and columns, in order (default: every bot that met another, sorted).
    """
    bots = bots or sorted({r.bot for r in records} | {r.opponent for r in records})
    cells = {(r.bot, r.opponent): f"{r.wins}-{r.draws}-{r.losses}" for r in records}
    console.print(
        table(
            title,
            ["bot", *bots],
            ([a, *(cells.get((a, b), "" if a != b else "x") for b in bots)] for a in bots),
        )
    )


def print_repeat_deals(console: Console, checks: Sequence[Any]) -> None:
    """The repeat-deal check of each bot (docs/tournaments.md: memorizing bots), flagged marked.

    A line per bot: deals played under two or more rotations, mean score in its first and in
    its later games of them, the seat-corrected gain and the one-sided p-value.
    """
    if not checks:
        return
    console.print(
        table(
            "repeat deals (later rotations against the first)",
            ["bot", "deals", "first", "later", "gain", "p", "flagged"],
            (
                (
                    c.bot,
                    c.deals,
                    f"{c.first_score:.3f}",
                    f"{c.later_score:.3f}",
                    f"{c.gain:+.3f}",
                    f"{c.p_value:.2g}",
                    "FLAGGED: plays better on deals it has seen" if c.flagged else "",
                )
                for c in checks
            ),
        )
    )
    flagged = [c.bot for c in checks if c.flagged]
    if flagged:
        console.print(
            f"flagged as remembering deals across games: {', '.join(flagged)} "
            "(see docs/tournaments.md: memorizing bots)"
        )


def _write_text(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write the record to {path}: {exc.strerror}") from None


# -- match run -----------------------------------------------------------------------------------


def _match_arguments(parser: argparse.ArgumentParser) -> None:
    subcommands(
        parser,
        "match_action",
        [
            (
                "run",
                "ask a referee to run one match between connected bots; print the result and "
                "optionally write the record",
                _match_run_arguments,
                _match_run,
            )
        ],
    )


def _match_run_arguments(parser: argparse.ArgumentParser) -> None:
    game_arguments(parser, "one connected bot per seat, seat 0 first")
    server_arguments(parser)
    course_argument(parser, "the course the match is played in (its bots' course)")
    parser.add_argument("--record", metavar="FILE", help="write the match record (JSON Lines)")
    policy_arguments(parser)
    json_argument(parser, "the match's id, bots and result")


def _match_run(args: argparse.Namespace) -> int:
    game = game_from_args(args)
    bots = seat_bots(game, args.bots)
    request = admin_pb2.RunMatchRequest(game=game_to_proto(game), bots=bots, course=args.course)
    if args.seed is not None:
        request.has_seed = True
        request.seed = checked_seed(args.seed) or 0
    policies(args, request)
    if args.record is not None:
        check_writable(args.record)
    request.match_id = uuid.uuid4().hex  # named here, so Ctrl-C can say which match it cancels
    try:
        response = admin_call(args, "RunMatch", request)
    except KeyboardInterrupt:
        print(
            f"{PROG}: match {request.match_id} cancelled on the referee at {args.server} "
            "(Ctrl-C): aborted, not stored; its bots are free",
            file=sys.stderr,
        )
        return 130
    written = args.record is not None and bool(response.record)
    if written:
        _write_text(args.record, response.record)
    if args.json:
        print_json(
            {
                "match_id": response.match_id,
                "bots": bots,
                "result": message_json(response.result),
                "record_file": args.record if written else None,
            }
        )
        return 0
    print(f"match {escape(response.match_id)}: {game.describe()}")
    print_result(game, bots, response.result)
    if written:
        print(f"record written to {args.record}")
    return 0


# -- standings, matches, record --------------------------------------------------------------------


def _matches_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tournament", metavar="ID", help="only this tournament's games")
    parser.add_argument("--bot", metavar="NAME", help="only matches this bot played")
    parser.add_argument("--game", metavar="GAME", help="only this game")
    parser.add_argument(
        "--limit", type=int, default=20, metavar="N", help="at most N, newest first (default 20)"
    )
    server_arguments(parser)
    course_argument(parser, "only this course's matches")
    json_argument(parser, "the matches")


def _matches(args: argparse.Namespace) -> int:
    if not 1 <= args.limit <= 1000:
        raise CliError(f"--limit: must be 1 to 1000, got {args.limit}")
    request = admin_pb2.ListMatchesRequest(
        tournament_id=args.tournament or "",
        bot=args.bot or "",
        game=args.game or "",
        limit=args.limit,
        course=args.course,
    )
    response = admin_call(args, "ListMatches", request)
    if args.json:
        print_json(message_json(response))
        return 0
    if not response.matches:
        print("no matches")
        return 0

    def winner(m: Any) -> str:
        side = m.result.winner
        if side < 0:
            return "-"
        return ", ".join(
            b for b, s in zip(m.bots, m.result.side_of_seat, strict=False) if s == side
        )

    console().print(
        table(
            None,
            ["id", "game", "bots", "result", "winner", "scores", "created"],
            (
                (
                    m.match_id,
                    game_from_proto(m.game).describe(),
                    ", ".join(m.bots),
                    enum_name(referee_pb2.Termination, m.result.termination, "TERMINATION_"),
                    winner(m),
                    "-".join(str(s) for s in m.result.scores),
                    f"{m.created.ToDatetime():%Y-%m-%d %H:%M}",
                )
                for m in response.matches
            ),
        )
    )
    return 0


def _record_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("match_id", metavar="MATCH_ID", help="a stored match's id")
    parser.add_argument("-o", "--output", metavar="FILE", help="write it here (default: stdout)")
    server_arguments(parser)


def _record(args: argparse.Namespace) -> int:
    if args.output is not None:
        check_writable(args.output)
    response = admin_call(args, "GetMatch", admin_pb2.GetMatchRequest(match_id=args.match_id))
    if not response.record:
        raise CliError(
            f"match {args.match_id} has no record (it was void: {response.match.result.detail})",
            code=1,
        )
    if args.output is None:
        sys.stdout.write(response.record)
    else:
        _write_text(args.output, response.record)
        print(f"record written to {args.output}", file=sys.stderr)
    return 0


HANDLERS: Final[Handlers] = {
    "match": Handler(_match_arguments, run_action),
    "matches": Handler(_matches_arguments, _matches),
    "record": Handler(_record_arguments, _record),
}
