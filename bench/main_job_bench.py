"""The README's main job, timed: wall time from the command to its exit, and where it goes.

Usage (from the repository root)::

    python bench/main_job_bench.py [--runs N] [--against OTHER/domino-arena] [-- ROUND-ROBIN ARGS]

Runs ``domino-arena round-robin`` (the README's first command, web face included; the console
script beside this Python, or ``--command``) N times as a subprocess, after one untimed warm-up
run, reading its output line by line as it comes, and marks when each step is announced:

- **start**: from the command to "referee listening" (the interpreter, the imports, the
  SQLite file made and migrated, the bots registered, the referee up);
- **bots**: from there to "N bots connected" (the bot processes start and dial in);
- **tournaments**: from there to the last game's standings (one tournament per game);
- **shutdown**: from there to the exit (the referee and the bot processes stop).

Every 0.1 s it also reads the CPU time of the job's process and of each of its descendants from
``/proc``: CPU seconds of the referee process, of the bots (their launcher included) and of the
web face, whole runs.

The job runs as it does after ``pip install``: with Python's bytecode cache, even when this
shell sets ``PYTHONDONTWRITEBYTECODE`` (every process would compile its modules at every start:
about 1 s of CPU per bot process). The cache goes to a folder of the bench's own
(``PYTHONPYCACHEPREFIX``), filled by the warm-up run, so no source tree is written to; the
warm-up's own phases are printed too: what the first run after an editable install costs.

With ``--against`` another installation's ``domino-arena`` (e.g. a checkout of main) runs
interleaved with this one, run for run, and the medians are compared as a ratio measured in the
same run: the machine is shared, only ratios of one run mean much. Prints numbers, asserts
nothing; exits 1 when a run fails.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

CLOCK_TICKS: Final = os.sysconf("SC_CLK_TCK")
MARKS: Final = (
    ("start", re.compile(r"^referee listening on ")),
    ("bots", re.compile(r"^\d+ bots connected as separate processes")),
)
TABLE: Final = re.compile(r": (\d+) games in [\d.]+ s")
"""The title of a game's standings: the end of its tournament."""
RUN_LIMIT: Final = 600.0


class BenchError(Exception):
    """A run failed: the job exited with an error or ran past the limit."""


@dataclass
class Run:
    """One run's marks (seconds since the command) and CPU seconds."""

    marks: dict[str, float] = field(default_factory=dict)
    games: int = 0
    wall: float = 0.0
    referee_cpu: float = 0.0
    bots_cpu: dict[int, float] = field(default_factory=dict)
    web_cpu: dict[int, float] = field(default_factory=dict)

    def phases(self) -> dict[str, float]:
        """The four phases' seconds (see the module docstring)."""
        start, bots = self.marks["start"], self.marks["bots"]
        last = self.marks["tournaments"]
        return {
            "start": start,
            "bots": bots - start,
            "tournaments": last - bots,
            "shutdown": self.wall - last,
        }


def _cpu(pid: int) -> float | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (the bots are their launcher's children)."""
    found: list[int] = []
    queue = _children(pid)
    while queue:
        child = queue.pop()
        found.append(child)
        queue += _children(child)
    return found


def _is_web_face(pid: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"web" in argv and b"--socket-fd" in argv


def run_once(command: Sequence[str], cache: Path) -> Run:
    """Run the job once (its bytecode cache in ``cache``); return its marks and CPU."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "120"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    result = Run()
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    assert process.stdout is not None
    lines: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            now = time.perf_counter() - started
            lines.append(line)
            for name, pattern in MARKS:
                if name not in result.marks and pattern.search(line):
                    result.marks[name] = now
            if (table := TABLE.search(line)) is not None:
                result.marks["tournaments"] = now
                result.games += int(table.group(1))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while process.poll() is None:
        if time.perf_counter() - started > RUN_LIMIT:
            process.kill()
            raise BenchError(f"the job ran past {RUN_LIMIT:g} s")
        cpu = _cpu(process.pid)
        if cpu is not None:
            result.referee_cpu = cpu
        for child in _descendants(process.pid):
            if (seconds := _cpu(child)) is not None:
                where = result.web_cpu if _is_web_face(child) else result.bots_cpu
                where[child] = seconds
        time.sleep(0.1)
    result.wall = time.perf_counter() - started
    reader.join(10.0)
    missing = [name for name in ("start", "bots", "tournaments") if name not in result.marks]
    if process.returncode != 0 or missing:
        tail = "".join(lines[-20:])
        raise BenchError(f"exit status {process.returncode}, no {missing} line:\n{tail}")
    return result


def load_text() -> str:
    one, five, fifteen = Path("/proc/loadavg").read_text().split()[:3]
    return f"load average {one}, {five}, {fifteen} on {os.cpu_count()} CPUs"


def summary(name: str, runs: list[Run]) -> dict[str, float]:
    """Print the median of each phase over ``runs``; return them with the wall time."""
    medians = {
        phase: statistics.median(run.phases()[phase] for run in runs)
        for phase in ("start", "bots", "tournaments", "shutdown")
    }
    medians["wall"] = statistics.median(run.wall for run in runs)
    referee = statistics.median(run.referee_cpu for run in runs)
    bots = statistics.median(sum(run.bots_cpu.values()) for run in runs)
    web = statistics.median(sum(run.web_cpu.values()) for run in runs)
    walls = ", ".join(f"{run.wall:.1f}" for run in runs)
    print(f"\n{name}: median of {len(runs)} runs ({walls} s), {runs[0].games} games a run")
    for phase in ("start", "bots", "tournaments", "shutdown", "wall"):
        print(f"  {phase:<12} {medians[phase]:6.2f} s")
    print(
        f"  CPU: the job's process {referee:.1f} s, the bots {bots:.1f} s, the web face {web:.1f} s"
    )
    return medians


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Time the README's main job (domino-arena round-robin) and its phases."
    )
    parser.add_argument("--runs", type=int, default=3, metavar="N", help="runs (default 3)")
    beside = Path(sys.executable).parent / "domino-arena"
    parser.add_argument(
        "--command",
        default=str(beside),
        metavar="PATH",
        help=f"the domino-arena to time (default {beside})",
    )
    parser.add_argument(
        "--against",
        metavar="PATH",
        help="another domino-arena (e.g. main's) to run interleaved and compare with",
    )
    parser.add_argument(
        "job", nargs=argparse.REMAINDER, help="arguments for round-robin after '--'"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    extra = [a for a in args.job if a != "--"]
    commands = {"this": [args.command, "round-robin", *extra]}
    if args.against is not None:
        commands["against"] = [args.against, "round-robin", *extra]
    print(f"command: {' '.join(commands['this'][1:])}; {args.runs} runs each")
    print(f"machine: {load_text()} at the start")
    results: dict[str, list[Run]] = {name: [] for name in commands}
    folder = tempfile.TemporaryDirectory(prefix="main-job-bench-")
    caches = {name: Path(folder.name) / name for name in commands}
    try:
        for name, command in commands.items():
            warm = run_once(command, caches[name])
            phases = " ".join(f"{k} {v:.2f}" for k, v in warm.phases().items())
            print(
                f"warm-up {name}: {warm.wall:.2f} s ({phases}; fills the bytecode cache)",
                flush=True,
            )
        for index in range(args.runs):
            for name, command in commands.items():
                run = run_once(command, caches[name])
                results[name].append(run)
                phases = " ".join(f"{k} {v:.2f}" for k, v in run.phases().items())
                print(f"run {index + 1} {name}: {run.wall:.2f} s ({phases})", flush=True)
    except BenchError as exc:
        print(f"main_job_bench: error: {exc}", file=sys.stderr)
        return 1
    finally:
        folder.cleanup()
    medians = {
        name: summary(f"{name} ({commands[name][0]})", runs) for name, runs in results.items()
    }
    if "against" in medians:
        print("\nthis / against (medians of the same run, interleaved):")
        for phase in ("start", "bots", "tournaments", "shutdown", "wall"):
            ratio = medians["this"][phase] / max(medians["against"][phase], 1e-9)
            print(f"  {phase:<12} {ratio:5.2f}")
    print(f"\nmachine: {load_text()} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
