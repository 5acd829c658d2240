"""Following what a referee does as it happens: ``tournament status --follow`` (a progress bar)
and ``watch`` (a running match, step by step, as a spectator).

This module imports grpc and rich's progress bar at the top: it is imported only when ``watch``
or a ``tournament`` command runs.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any, Final

import grpc
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from domino_arena.sdk.rules import DEAL, Game
from domino_arena.sdk.wire import game_from_proto, hand_result_from_proto, step_from_proto
from domino_arena.server.cli.admin_client import (
    admin_call,
    channel_tls,
    console,
    open_channel,
    print_result,
    rpc_error,
    token_file,
)
from domino_arena.server.cli.arguments import Handler, Handlers, scores_text, server_arguments
from domino_arena.server.logs import escape
from domino_arena.v1 import admin_pb2, admin_pb2_grpc

FOLLOW_INTERVAL: Final = 1.0
"""Seconds between two looks at a tournament that ``tournament status --follow`` follows."""


def follow_tournament(
    args: argparse.Namespace,
    request: Any,
    t: Any,
    *,
    describe: Callable[[Any], str] | None = None,
    live: bool = True,
) -> Any:
    """Poll ``t`` while it runs and return it as it is when it stops; with ``live``, a progress
    bar whose line is ``describe(t)`` (default: its name and running and waiting games)."""

    def running(t: Any) -> str:
        p = t.progress
        return f"{t.name} ({p.running} running, {p.waiting} waiting)"

    line = describe or running
    if not live:
        while t.state == admin_pb2.TOURNAMENT_STATE_RUNNING:
            time.sleep(FOLLOW_INTERVAL)
            t = admin_call(args, "GetTournament", request)
        return t
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console(),
    ) as bar:
        task = bar.add_task(line(t), total=t.progress.total, completed=t.progress.done)
        while t.state == admin_pb2.TOURNAMENT_STATE_RUNNING:
            time.sleep(FOLLOW_INTERVAL)
            t = admin_call(args, "GetTournament", request)
            bar.update(task, description=line(t), total=t.progress.total, completed=t.progress.done)
    return t


# -- watch -----------------------------------------------------------------------------------------


def _watch_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("match_id", metavar="MATCH_ID", help="a running match's id")
    parser.add_argument(
        "--token-file",
        metavar="FILE",
        help="a token of the match's course (its organizer's or an owner's), for a match its "
        "course shows signed in (docs/spectators.md); a public match needs none",
    )
    server_arguments(parser, token=False)


def _watch(args: argparse.Namespace) -> int:
    """Print a running match as its spectator stream brings it; a public match needs no token."""
    tls = channel_tls(args)
    token = None if args.token_file is None else token_file(args.token_file, "--token-file")
    metadata = None if token is None else (("authorization", f"Bearer {token}"),)
    with open_channel(args.server, tls) as channel:
        stub = admin_pb2_grpc.SpectatorServiceStub(channel)
        stream = stub.Watch(admin_pb2.WatchRequest(match_id=args.match_id), metadata=metadata)
        printer = _Spectator()
        try:
            for message in stream:
                printer.show(message)
        except grpc.RpcError as exc:
            raise rpc_error(args.server, exc, tls) from None
        except KeyboardInterrupt:
            stream.cancel()
    return 0


class _Spectator:
    """Prints what a spectator receives, one line per step, as ``play`` prints its transcript."""

    def __init__(self) -> None:
        self.game: Game | None = None
        self.bots: tuple[str, ...] = ()
        self.scores: tuple[int, ...] = ()

    def show(self, message: admin_pb2.SpectatorMessage) -> None:
        kind = message.WhichOneof("message")
        if kind == "start":
            start = message.start
            self.game = game_from_proto(start.game)
            self.bots = tuple(start.players)
            print(f"match {escape(start.match_id)}: {self.game.describe()}", flush=True)
            for side, seats in enumerate(self.game.sides):
                who = ", ".join(f"seat {s} {escape(self.bots[s])}" for s in seats)
                print(f"side {side}: {who}", flush=True)
        elif kind == "event":
            event = message.event
            entry = step_from_proto(event.step)
            scores = tuple(event.scores)
            if entry.action == DEAL:
                print(f"deal {event.deal}", flush=True)
            else:
                line = f"  seat {entry.seat}: {entry.action}"
                if self.scores and scores != self.scores:
                    line += f"  (scores {scores_text(scores)})"
                print(line, flush=True)
            self.scores = scores
        elif kind == "hand_end":
            result = hand_result_from_proto(message.hand_end)
            print(f"  end of deal {result.deal} ({result.end.value}): {escape(result.detail)}")
            print(f"  scores: {scores_text(tuple(message.hand_end.scores))}", flush=True)
            self.scores = tuple(message.hand_end.scores)
        elif kind == "match_end":
            assert self.game is not None, "the start comes first"
            print_result(self.game, self.bots, message.match_end.result)


HANDLERS: Final[Handlers] = {"watch": Handler(_watch_arguments, _watch)}
