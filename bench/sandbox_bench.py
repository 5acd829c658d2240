"""What the hosted bots' sandbox costs: its start, and the memory of an idle sandboxed Python bot.

Usage (from the repository root)::

    python bench/sandbox_bench.py [--runs 20]

1. **Start**: ``true`` run directly (``subprocess.run``) and in a sandbox
   (``server/hosting/sandbox.py``: as root, the private mount namespace, setpriv, bubblewrap,
   prlimit, nice), interleaved, ``--runs`` each; then ``python3 -c pass`` the same way. Medians,
   and the sandbox's extra milliseconds.
2. **Memory**: a Python process that imports what the sdk's stdio host needs (the Bot API, the
   wire converters, the proto and protobuf's JSON mapping) and waits on stdin, started directly
   and in a sandbox; the RSS (``VmRSS``) of the Python process, and of the sandbox's own
   processes (bubblewrap's monitor outside and its init inside).

It asserts nothing; it exits 1 if a sandbox does not start.
"""

from __future__ import annotations

import sys
from pathlib import Path

if not __package__:  # run as a file: the repository root holds bench/ and tests/
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from typing import Final

from domino_arena.sdk.stdio.child import ChildCommand
from domino_arena.server.hosting.sandbox import probe, sandboxed
from domino_arena.server.hosting.spec.limits import DEFAULT_LIMITS
from tests.fakes.processes import memory
from tests.fakes.sandboxed import inside, spawn

MIB: Final = 1 << 20
IDLE_BOT: Final = (
    "import sys, domino_arena.sdk.bot, domino_arena.sdk.wire, domino_arena.v1.referee_pb2, "
    "google.protobuf.json_format; print('ready', flush=True); sys.stdin.read()"
)


def timed(argv: Sequence[str], env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} ... exited {done.returncode}")
    return (time.perf_counter() - started) * 1000


def start_times(bundle: Path, command: list[str], runs: int) -> tuple[float, float]:
    child = sandboxed(bundle, command, DEFAULT_LIMITS)
    direct, boxed = [], []
    for _ in range(runs):
        direct.append(
            timed([sys.executable if command[0] == "python3" else command[0], *command[1:]])
        )
        boxed.append(timed(child.argv, dict(child.env or {})))
    return statistics.median(direct), statistics.median(boxed)


def idle_rss(child: ChildCommand) -> dict[str, float]:
    """MiB of RSS of the idle bot (the last process started) and of the others, once ready."""
    process = spawn(child)
    try:
        assert process.stdout is not None
        if process.stdout.readline() != b"ready\n":
            raise SystemExit(f"the idle bot did not start: {process.stderr}")
        pids = inside(process.pid) if child.argv[0] != sys.executable else []
        bot = max(pids) if pids else process.pid
        figures = {"bot": memory(bot)["VmRSS"] / MIB}
        if pids:
            others = [process.pid, *(pid for pid in pids if pid != bot)]
            figures["sandbox"] = sum(memory(pid)["VmRSS"] for pid in others) / MIB
        return figures
    finally:
        process.kill()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    probe()
    with tempfile.TemporaryDirectory() as folder:
        bundle = Path(folder)
        bundle.chmod(0o755)
        for command in (["true"], ["python3", "-c", "pass"]):
            direct, boxed = start_times(bundle, command, args.runs)
            print(
                f"{' '.join(command):<20} direct {direct:6.1f} ms   sandboxed {boxed:6.1f} ms"
                f"   (+{boxed - direct:.1f} ms, medians of {args.runs})"
            )
        direct_rss = idle_rss(ChildCommand(argv=(sys.executable, "-c", IDLE_BOT)))
        boxed_rss = idle_rss(sandboxed(bundle, ["python3", "-c", IDLE_BOT], DEFAULT_LIMITS))
        print(
            f"idle sdk python       direct {direct_rss['bot']:6.1f} MiB  sandboxed "
            f"{boxed_rss['bot']:6.1f} MiB  (+ {boxed_rss['sandbox']:.1f} MiB: bubblewrap's "
            "monitor and init)"
        )


if __name__ == "__main__":
    main()
