"""A bot cut off for a limit mid-match: its seat is handled by the fault policy (issue 9).

The whole referee (:class:`~tests.fakes.referee_server.Referee`: the app over real gRPC on
127.0.0.1:0) runs a Passing match between an honest raw bot and one that, at its first request,
floods replies for a match it does not play, past the reply rate limit. The referee cuts its
stream (RESOURCE_EXHAUSTED, ``limits.replies_per_second``); its seat then sees a
disconnection, exactly as a dropped network: with ``substitute`` the referee plays that seat's
moves, a strike each, and the honest bot plays on until the strikes run out; with ``forfeit``
the match ends at once in that seat's forfeit.
The assertions are on the ``RunMatch`` result, the record and the stored match. With no
reconnection grace nothing waits for the bot to come back; nothing sleeps.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import grpc
import pytest

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.limits import StreamLimits
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.referee_server import WAIT, Ended, RawBot, Referee, first_legal

BURST: Final = 500
"""Replies a stream may send at once; an honest bot's whole match stays far below it."""
LIMITS: Final = StreamLimits(replies_per_second=0.001, reply_burst=BURST)
SEED: Final = 3
MAX_STRIKES: Final = 100
"""The most the admin API allows: a Passing game asks seat 0 for more decisions, so the match
ends in the forfeit the policy gives after the last strike, not by the rules."""


def flood_at_first_request(bot: RawBot, request: pb.ActionRequest) -> None:
    """Answer the first request with more replies than the burst, all for an unknown match."""
    flood = [pb.ActionReply(match_id="no-such-match", turn=1) for _ in range(BURST + 1)]
    bot.send(pb.BotMessage(replies=pb.ReplyBatch(replies=flood)))


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[tuple[Referee, dict[str, str]]]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'cut.db'}")
    storage.open()
    tokens = {name: storage.add_bot(name) for name in ("honest", "flooder")}
    referee = Referee(storage, reconnect_grace=0.0, limits=LIMITS)
    yield referee, tokens
    referee.close()
    storage.close()


def run_cut_off_match(
    referee: Referee, tokens: dict[str, str], policy: pb.FaultPolicy.ValueType
) -> tuple[admin_pb.RunMatchResponse, Ended]:
    referee.connect("honest", tokens["honest"], first_legal)
    flooder = referee.connect("flooder", tokens["flooder"], flood_at_first_request)
    request = admin_pb.RunMatchRequest(
        game=game_to_proto(make_game("passing", players=2)),
        bots=["flooder", "honest"],
        has_seed=True,
        seed=SEED,
        fault_policy=policy,
        max_strikes=MAX_STRIKES,
    )
    response = referee.admin.RunMatch(request, timeout=WAIT)
    end = flooder.wait_end()
    assert end.code == grpc.StatusCode.RESOURCE_EXHAUSTED, end
    last = flooder.messages("error")[-1].error
    assert last.field == "limits.replies_per_second"
    return response, end


def record_lines(record: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in record.splitlines()]


def test_with_substitute_the_referee_plays_the_cut_off_seat_until_its_strikes_run_out(
    referee: tuple[Referee, dict[str, str]],
) -> None:
    server, tokens = referee
    response, _ = run_cut_off_match(server, tokens, pb.FAULT_POLICY_SUBSTITUTE)
    lines = record_lines(response.record)
    faults = [line for line in lines if line.get("type") == "fault"]
    assert len(faults) == MAX_STRIKES  # every decision of seat 0 from its first request on
    assert {(f["seat"], f["kind"]) for f in faults} == {(0, "disconnected")}
    assert [f["strikes"] for f in faults] == list(range(1, MAX_STRIKES + 1))
    assert [f["forfeited"] for f in faults] == [False] * (MAX_STRIKES - 1) + [True]
    steps = [line for line in lines if "action" in line]
    substituted = [line for line in steps if line.get("substituted")]
    assert len(substituted) == MAX_STRIKES - 1 and {s["seat"] for s in substituted} == {0}
    assert sum(1 for line in steps if line["seat"] == 1) >= MAX_STRIKES - 1  # play went on
    result = response.result
    assert result.termination == pb.TERMINATION_FORFEIT, result
    assert (result.faulted_seat, result.fault, result.winner) == (0, pb.FAULT_KIND_DISCONNECTED, 1)
    assert f"forfeits after {MAX_STRIKES} faults" in result.detail
    assert server.connected() == {"honest": (("doubles", "moon", "passing", "straight"), 0)}
    (stored,) = server.app.storage.matches(limit=10)
    assert (stored.id, stored.termination, stored.faulted_seat) == (
        response.match_id,
        "forfeit",
        0,
    )


def test_with_forfeit_the_cut_off_seat_forfeits_the_match(
    referee: tuple[Referee, dict[str, str]],
) -> None:
    server, tokens = referee
    response, _ = run_cut_off_match(server, tokens, pb.FAULT_POLICY_FORFEIT)
    result = response.result
    assert result.termination == pb.TERMINATION_FORFEIT, result
    assert (result.faulted_seat, result.fault) == (0, pb.FAULT_KIND_DISCONNECTED)
    assert result.winner == 1
    lines = record_lines(response.record)
    (fault,) = [line for line in lines if line.get("type") == "fault"]
    assert (fault["seat"], fault["kind"], fault["forfeited"]) == (0, "disconnected", True)
    assert not any(line.get("substituted") for line in lines)
    (stored,) = server.app.storage.matches(limit=10)
    assert stored.id == response.match_id
    assert (stored.termination, stored.faulted_seat, stored.fault, stored.winner) == (
        "forfeit",
        0,
        "disconnected",
        1,
    )
