"""Time per move through the stdio bridge against the same bot without it.

Local play: a first-legal bot in-process, the same Bot class in a child over stdio
(``python -m domino_arena.sdk.stdio``, ExecBot), and a stdlib-json program over stdio; each plays
``--games`` games of Passing against greedy, and a move's time is the bot's ``choose`` call
(``time.perf_counter`` around it).

Through a referee (the whole app on port 0, as tests/fakes/referee_server.py serves it): the
same bot through the SDK's gRPC client, through the relay with the Python host as its child,
and through the relay with the stdlib-json program; a move's time is the referee's think time of
the bot's seat (request sent to reply read, network included), over ``--games`` matches against
a raw first-legal bot.

    .venv/bin/python -m bench.stdio_bench [--games 20]

Medians in microseconds, and each row's ratio to its baseline (in-process, SDK client).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from domino_arena.bots import make_bot
from domino_arena.sdk import run_async
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.records import parse_record
from domino_arena.sdk.rules import Action, Observation, make_game
from domino_arena.sdk.stdio.child import ChildCommand
from domino_arena.sdk.stdio.exec_bot import ExecBot
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.bots import FirstLegal
from tests.fakes.referee_server import WAIT, Referee, passing_match
from tests.fakes.stdio_bots import RelayThread, script_command, write_script

BOT = "from tests.fakes.bots import FirstLegal\n"


def _local(make: Callable[[], Bot], games: int) -> list[float]:
    times: list[float] = []
    game = make_game("passing")
    for seed in range(games):
        bot = make()
        choose = bot.choose

        def timed(
            observation: Observation, choose: Callable[[Observation], Action] = choose
        ) -> Action:
            began = time.perf_counter()
            try:
                return choose(observation)
            finally:
                times.append((time.perf_counter() - began) * 1000)

        bot.choose = timed  # type: ignore[method-assign]  # this object's calls, timed
        play_game(game, [bot, make_bot("greedy", seed)], seed=seed, timer=None)
    return times


def _remote(referee: Referee, name: str, games: int) -> list[float]:
    times: list[float] = []
    for seed in range(games):
        request = passing_match(name, "house", policy=pb.FAULT_POLICY_FORFEIT)
        request.seed = seed
        record = parse_record(referee.admin.RunMatch(request, timeout=WAIT).record)
        times += [s.think_ms for s in record.steps if s.seat == 0 and s.think_ms is not None]
    return times


class _SdkThread:
    def __init__(self, referee: Referee, name: str, token: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.task: asyncio.Task[None] | None = None
        ready = threading.Event()

        def main() -> None:
            asyncio.set_event_loop(self.loop)
            self.task = self.loop.create_task(
                run_async(FirstLegal, server=referee.address, name=name, token=token)
            )
            self.loop.call_soon(ready.set)
            with contextlib.suppress(asyncio.CancelledError):  # cancelled at the end
                self.loop.run_until_complete(self.task)

        self.thread = threading.Thread(target=main, daemon=True)
        self.thread.start()
        ready.wait(WAIT)
        deadline = time.monotonic() + WAIT
        while name not in referee.connected() and time.monotonic() < deadline:
            time.sleep(0.02)  # a bench may poll: the bot's welcome

    def close(self) -> None:
        if self.task is not None:
            self.loop.call_soon_threadsafe(self.task.cancel)
        self.thread.join(WAIT)


def _row(name: str, times: list[float], base: float) -> None:
    median = statistics.median(times)
    print(f"{name:<44} {median * 1000:9.1f} µs  {len(times):6d} moves  x{median / base:8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=20)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    script = write_script(folder)
    root = str(Path(__file__).resolve().parents[1])
    (folder / "hostbot.py").write_text(BOT)
    host = ChildCommand(
        (sys.executable, "-m", "domino_arena.sdk.stdio", str(folder / "hostbot.py:FirstLegal")),
        env={"PYTHONPATH": root},
    )
    quiet = {"on_stderr": lambda _chunk: None}
    print(f"local play, {args.games} games of Passing against greedy (median per move):")
    base = _local(FirstLegal, args.games)
    _row("in-process Bot", base, statistics.median(base))
    exec_host = ExecBot(host, **quiet)  # type: ignore[arg-type]
    _row(
        "ExecBot, python -m domino_arena.sdk.stdio",
        _local(exec_host.seat, args.games),
        statistics.median(base),
    )
    exec_json = ExecBot(script_command(script, "play"), **quiet)  # type: ignore[arg-type]
    _row(
        "ExecBot, stdlib-json program", _local(exec_json.seat, args.games), statistics.median(base)
    )
    exec_host.close()
    exec_json.close()

    storage = RatedStorage(f"sqlite:///{folder / 'bench.db'}")
    storage.open()
    referee = Referee(storage)
    referee.connect("house", storage.add_bot("house"))
    print(f"through a referee, {args.games} matches against a raw bot (referee's think time):")
    sdk = _SdkThread(referee, "sdk", storage.add_bot("sdk"))
    remote_base = _remote(referee, "sdk", args.games)
    sdk.close()
    _row("SDK gRPC client", remote_base, statistics.median(remote_base))
    for name, command in (("relay-host", host), ("relay-json", script_command(script, "play"))):
        relay = RelayThread(referee.address, name, storage.add_bot(name), command)
        label = (
            "relay, python -m domino_arena.sdk.stdio"
            if name == "relay-host"
            else ("relay, stdlib-json program")
        )
        _row(label, _remote(referee, name, args.games), statistics.median(remote_base))
        relay.close()
    referee.close()
    storage.close()


if __name__ == "__main__":
    main()
