"""End to end: ``domino-arena check`` and ``practice`` against ``domino-arena serve``.

The referee runs as a subprocess on a fresh SQLite file (its house bots are the command line's,
given at ``serve``); a house bot connects with ``bot run`` (the SDK, its own process) and a raw
gRPC bot that answers every request with an illegal action stands for a broken bot in another
language. The check exits 0 for the first and 1 for the second, naming the fault; a practice
match is played against hosted house bots and stored unrated.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import grpc
import pytest

from domino_arena.sdk.match.records import read_record, replay
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import games_pb2
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.processes import Process, command, served_port
from tests.fakes.referee_server import RawBot

ADMIN_TOKEN: Final = "e2e-check-token"


@dataclass
class Served:
    folder: Path
    db: str
    port: int
    server: Process
    tokens: dict[str, str]

    def cli(self, *args: str) -> tuple[int, str]:
        full = [*args, "--server", f"127.0.0.1:{self.port}", "--admin-token", ADMIN_TOKEN]
        return Process(command(*full), self.folder, wait=300).finish()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("check-e2e")
    db = f"sqlite:///{folder / 'arena.db'}"
    tokens: dict[str, str] = {}
    for name in ("steady", "wrong"):
        code, output = Process(command("bot", "add", name, "--db", db), folder).finish()
        assert code == 0, output
        tokens[name] = output.splitlines()[-1]
    server = Process(
        command("serve", "--port", "0", "--db", db, "--admin-token", ADMIN_TOKEN), folder
    )
    processes = [server]
    try:
        port = served_port(server)
        bot = Process(
            command(
                "bot", "run", "steady", "--server", f"127.0.0.1:{port}", "--token",
                tokens["steady"], "--bot", "greedy",
            ),
            folder,
        )  # fmt: skip
        processes.append(bot)
        server.wait_line("bot connected: name=steady", context=[bot])
        yield Served(folder, db, port, server, tokens)
    finally:
        for process in processes:
            process.stop()


def test_check_of_a_connected_sdk_bot_passes(served: Served) -> None:
    code, output = served.cli("check", "steady", "--games", "passing,straight", "--positions", "3")
    assert code == 0, output
    assert "connected bot 'steady': PASSED" in output
    assert "full games" in output


def illegal(bot: RawBot, request: pb.ActionRequest) -> None:
    bot.reply(request, games_pb2.Action(bid=games_pb2.BidAction(value=4)))


def test_check_of_a_broken_bot_fails_naming_the_fault(served: Served) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{served.port}") as channel:
        bot = RawBot(channel, illegal)
        bot.hello("wrong", served.tokens["wrong"], ("passing",))
        bot.wait_kind("welcome")
        try:
            code, output = served.cli("check", "wrong", "--positions", "2", "--no-games")
        finally:
            bot.close()
    assert code == 1, output
    # the progress (the games it plays, one at a time), then the report: three illegal answers
    # in a row, and the check stops there rather than asking every position
    assert output.startswith("checking 'wrong' in passing (1/1)\n")
    assert "connected bot 'wrong': FAILED (3 failures)" in output
    assert "illegal: Passing Game" in output
    assert "returned: 'bid 4'" in output and "legal:" in output
    assert output.endswith(
        "stopped early: 3 asks in a row failed the same way (illegal); fix that first, then "
        "check again"
    )


def test_practice_against_house_bots_is_stored_unrated(served: Served) -> None:
    record = served.folder / "practice.jsonl"
    code, output = served.cli(
        "practice", "steady", "passing", "--players", "3", "--against", "random",
        "--seat", "2", "--seed", "4", "--record", str(record),
    )  # fmt: skip
    assert code == 0, output
    assert "(unrated)" in output and "seat 0 house:random" in output
    assert "seat 2 steady" in output
    parsed = read_record(record)
    assert parsed.seats == ("house:random", "house:random", "steady")
    assert replay(parsed).ok
    code, output = served.cli("practice", "steady", "passing", "--against", "alphago")
    assert code == 2 and "opponents[0]: unknown house bot 'alphago'" in output, output
    storage = RatedStorage(served.db)
    storage.open()
    try:
        (stored,) = [m for m in storage.matches(bot="steady") if m.seats == parsed.seats]
        assert not stored.rated
    finally:
        storage.close()
