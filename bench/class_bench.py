"""A class of forty, timed phase by phase: the scripted class of tests/fakes/class_term.py.

Usage (from the repository root)::

    .venv/bin/python -m bench.class_bench [--students 40] [--second-versions 10]
        [--playing 40] [--parallel 4]

Runs the class tests/e2e/test_class.py asserts, with every student's bot playing by default:
the admin opens the course and the organizer makes the invites; the students register on the
light install (a ``domino-arena`` process each, ``--parallel`` at once), ten of them a second
version with their owner token; an impersonation and a reused invite are refused; the graded
tournament, sized by ``--precision``, is played by the connected bots (raw gRPC clients, first
legal action, one deal a game); the grades are exported as CSV, JSON and gradebook CSV; one
student's late version is regraded on fresh deals. Prints the wall time of each phase, the
games played and the machine's load; asserts only what the class needs to go on (each command
succeeds, each refusal is refused).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from tests.fakes.class_term import ClassTerm

T = TypeVar("T")


def timed(label: str, step: Callable[[], T], times: list[tuple[str, float]]) -> T:
    start = time.perf_counter()
    answer = step()
    seconds = time.perf_counter() - start
    times.append((label, seconds))
    print(f"{label:<44} {seconds:8.1f} s", flush=True)
    return answer


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--second-versions", type=int, default=10)
    parser.add_argument("--playing", type=int, default=40, help="students whose bots play")
    parser.add_argument("--parallel", type=int, default=4, help="registrations at once")
    parser.add_argument(
        "--hosted",
        action="store_true",
        help="the playing students submit their bots and the arena hosts them (docs/hosting.md)",
    )
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="with --hosted: on a match host, a gateway and two runners (serve --role runner)",
    )
    args = parser.parse_args(argv)
    if args.cluster and not args.hosted:
        parser.error("--cluster plays a hosted class: add --hosted")
    load = os.getloadavg()[0]
    times: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="class-bench-") as folder:
        term = ClassTerm(
            Path(folder),
            args.students,
            args.second_versions,
            args.playing,
            args.parallel,
            hosted=args.hosted,
            cluster=args.cluster,
        )
        try:
            timed("open the course, make the invites", term.open_course, times)
            timed(
                f"{args.students} students register, {args.second_versions} twice",
                term.register,
                times,
            )
            impersonation, reused = timed("an impersonation, a reused invite", term.intrude, times)
            if impersonation.code == 0 or reused.code == 0:
                print("an intruder got in", file=sys.stderr)
                return 1
            if args.hosted:
                timed(
                    f"{args.playing} submit (half Python, half stdio), all validated",
                    term.submit,
                    times,
                )
                timed("the runner connects them all", term.wait_hosted, times)
            timed(f"the graded tournament ({args.playing} playing)", term.play, times)
            t = timed(
                "its status, results and fit (GetTournament)",
                lambda: term.wait_finished(term.tournament_id),
                times,
            )
            timed("grades: CSV, JSON, gradebook", term.export, times)
            r = None
            if not args.hosted:  # a hosted class's regrade is the same but for one raw bot
                timed("a regrade, graded with the original", term.regrade, times)
                r = term.wait_finished(term.regrade_id)
            sandboxed = term.hosted_memory() if args.hosted else None
        finally:
            term.close()
    total = sum(seconds for _, seconds in times)
    print(f"{'the whole class':<44} {total:8.1f} s")
    regraded = (
        "no regrade"
        if r is None
        else f"regrade {r.progress.total - len(r.carried)} played and {len(r.carried)} carried"
    )
    print(
        f"games: tournament {t.progress.total} ({t.games_per_pairing} per pairing, "
        f"{len(t.entrants)} entrants), {regraded}; load average (1 min) {load:.2f} at the "
        f"start, {os.getloadavg()[0]:.2f} at the end; {os.cpu_count()} cores"
    )
    if sandboxed is not None:
        count, rss = sandboxed
        print(
            f"hosted processes at the end of the tournament: {count} sandboxes, "
            f"{rss / count / 2**20:.1f} MiB RSS each on average (bubblewrap's included)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
