"""What hosting a bot costs: its cold start, its time per move against the same bot connected
remotely, and its memory (docs/hosting.md, "What hosting costs").

Usage (from the repository root; bubblewrap and user namespaces needed)::

    .venv/bin/python -m bench.hosting_bench [--matches 20] [--game passing]

One referee (the whole App, its own runner, tests/fakes/hosted.py), in one run:

- **cold start**: a Python submission (a first-legal ``Bot``) stored as a new version, from the
  store to accepted (the validation in its sandbox), to connected by the runner, and from the
  start of its first match to its first move (its sandboxed process started then);
- **warm time per move**: the same first-legal bot, hosted and connected remotely (the SDK's
  gRPC client in its own process), each playing ``--matches`` matches against a raw first-legal
  bot; the referee's think time of its seat per move (the record's ``think_ms``: from the
  request written to the reply read), medians and their ratio;
- **memory**: the resident memory of the hosted bot's processes (bubblewrap's two, the Python
  host) and of the remote bot's process.

The forty-bot class is ``bench/class_bench.py --hosted``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

from domino_arena.server.store import hosted
from domino_arena.server.store.bots import create_bot
from tests.fakes.hosted import PYTHON_BOT, HostedArena, sandbox_processes
from tests.fakes.processes import resident
from tests.fakes.referee_server import ALL_GAMES, first_legal

REMOTE_BOT = textwrap.dedent(
    """
    import sys
    from domino_arena.sdk import Bot
    from domino_arena.sdk.runner import run

    class FirstLegal(Bot):
        def choose(self, observation):
            return observation.legal_actions[0]

    run(FirstLegal(), server=sys.argv[1], name=sys.argv[2], token=sys.argv[3], log_level=None)
    """
)


def think_times(record: str, seat: int) -> list[float]:
    times = []
    for line in record.splitlines():
        step = json.loads(line)
        if step.get("type") == "step" and step.get("seat") == seat and step.get("think_ms"):
            times.append(float(step["think_ms"]))
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--game", default="passing")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="hosting-bench-") as folder:
        arena = HostedArena(Path(folder), idle_stop_seconds=600)
        remote: subprocess.Popen[bytes] | None = None
        try:
            engine = arena.storage.engine
            opponent = create_bot(engine, "opponent").token
            arena.referee.connect("opponent", opponent, first_legal, ALL_GAMES)

            began = time.perf_counter()
            number = arena.submit(
                "hosted", {"bot.py": PYTHON_BOT}, games=(args.game,), accepted=None
            )
            arena.wait_status("hosted", number, hosted.ACCEPTED)
            validated = time.perf_counter() - began
            arena.wait_connected("hosted")
            connected = time.perf_counter() - began
            first = arena.match("hosted", "opponent", game=args.game, move_ms=10_000)
            cold = think_times(first.record, 0)[0]

            token = create_bot(engine, "remote").token
            remote = subprocess.Popen(
                [sys.executable, "-c", REMOTE_BOT, arena.referee.address, "remote", token]
            )
            arena.wait_connected("remote")

            warm: dict[str, list[float]] = {"hosted": [], "remote": []}
            for index in range(args.matches):
                for bot in ("hosted", "remote") if index % 2 else ("remote", "hosted"):
                    played = arena.match(bot, "opponent", game=args.game, seed=index + 10)
                    warm[bot] += think_times(played.record, 0)
            hosted_rss = resident(sandbox_processes(str(arena.workdir)))
            remote_rss = resident([remote.pid])
        finally:
            if remote is not None:
                remote.terminate()
                remote.wait(10)
            arena.close()
    medians = {bot: statistics.median(times) for bot, times in warm.items()}
    print(f"cold start: stored -> accepted (validated in its sandbox)  {validated:7.2f} s")
    print(f"            stored -> connected by the runner             {connected:7.2f} s")
    print(f"            first match's first move (process started)    {cold:7.1f} ms")
    print(
        f"warm move ({args.game}, {args.matches} matches each, think time at the referee): "
        f"hosted {medians['hosted']:.2f} ms, remote SDK client {medians['remote']:.2f} ms, "
        f"ratio {medians['hosted'] / medians['remote']:.2f} "
        f"({len(warm['hosted'])} and {len(warm['remote'])} moves)"
    )
    print(
        f"memory: the hosted bot {hosted_rss / 2**20:.1f} MiB (sandbox and host), "
        f"the remote bot's process {remote_rss / 2**20:.1f} MiB"
    )
    print(
        f"load average (1 min) {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end; "
        f"{os.cpu_count()} cores"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
