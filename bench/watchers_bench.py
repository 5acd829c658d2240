"""The referee's moves per second with 0, 200 and 2,000 spectators, gRPC and web, in one run
(issue 29: the drop at 2,000 must be under 10%).

Usage::

    python bench/watchers_bench.py [--levels 0,200,2000] [--seconds S] [--matches N]
                                   [--think-ms MS] [--bots K] [--no-direct] [--no-nice]

Everything runs on this machine, in separate processes: ``domino-arena serve --port 0`` on a
fresh SQLite file (its default watcher bounds, a relay token from a file); K SDK bots in one
process, each answering a random legal move after ``--think-ms`` (the issue measured a 4 ms
median gap between turns; the default 20 ms is a quick search bot's); ``domino-arena web
--server`` (the live pages, holding the relay token) and ``domino-arena relay --server`` (the
gRPC spectators' relay, holding it too). The tournament: this script keeps N games running
through ``AdminService.RunMatch`` (a game starts when one ends, as a tournament's concurrency
does; Passing Game, 2 players), for ``--seconds`` at each level. A *move* is a record step with
a seat >= 0; moves/s is the sum over the games running at once (the lanes) of each lane's
moves over the time it ran, so the lanes that finished early leave no tail; every level plays
the same deal seeds.

At a level of W spectators, W/2 gRPC spectators watch through the relay and W/2 browsers
follow the live pages' event streams (one process of each, reading raw bytes; each browser
connects from a loopback address of its own, as a crowd of machines would; the gRPC spectators
share one, so the relay's bound per address is raised to the crowd's size): every one of
them keeps watching a running game, spread evenly over the games listed, and takes the next
game when its game ends. The "direct" row (skip it with ``--no-direct``) points the top
level's W gRPC spectators at the referee itself, as the issue's crowd did: the referee's
bounds (server/net/watch_limits.py) admit a few and refuse the rest at once; each spectator
refused tries again only on another game.

The crowd's processes (web face, relay, the two spectator processes) run at ``nice 10``: on a
deployment they run on other machines (docs/spectators.md), and on a 2-core machine they
would otherwise take the referee's core from it; ``--no-nice`` runs them as the referee. The
second table says what each process cost: CPU in % of one core, and the referee's CPU per move
(the figure the spectators' cost on the referee shows in, whatever the machine's load).
The run exits 1 on an error (a process died, a game ended abnormally), never on a missed floor
(it says "above 10%").
"""

from __future__ import annotations

import sys
from pathlib import Path

if not __package__:  # run as a file: the repository root holds bench/ and tests/
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse
import asyncio
import contextlib
import json
import random
import re
import secrets
import signal
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import grpc

from bench.referee_bench import (
    ADMIN_TOKEN,
    Cluster,
    CycleError,
    Lanes,
    busy_percent,
    count_moves,
    cpu_seconds,
    load_text,
    machine_ticks,
    play_until_sigterm,
    python_command,
    stop_process,
    wait_connected,
    wait_for_line,
)
from bench.referee_bench import run_ours as run_lanes
from domino_arena.sdk.bot import AsyncBot
from domino_arena.sdk.rules import Action, Observation, make_game
from domino_arena.server.net import watch_limits
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import referee_pb2 as pb

FLOOR: Final = 0.10
"""The issue's bound on the drop of moves/s at 2,000 spectators."""
NICE: Final = 10
LOBBY_SECONDS: Final = 0.25
"""How often a crowd process looks at the games listed."""
WATCH_SERVICE: Final = "/domino_arena.v1.SpectatorService/Watch"


def this_script(*args: str) -> list[str]:
    return python_command(str(Path(__file__).resolve()), *args)


# -- the bots (role "bots") ------------------------------------------------------------------------


class ThinkingBot(AsyncBot):
    """A random legal move after ``think`` seconds (awaited: a thousand of them share a loop)."""

    def __init__(self, seed: int, think: float) -> None:
        self.rng = random.Random(seed)
        self.think = think

    async def choose(self, observation: Observation) -> Action:
        await asyncio.sleep(self.think)
        return self.rng.choice(observation.legal_actions)


async def bots_main(server: str, credentials: Path, game: str, think: float) -> None:
    from domino_arena.sdk import run_async  # noqa: PLC0415

    tokens: dict[str, str] = json.loads(credentials.read_text())
    seeds = iter(range(1, 1 << 30))
    players = asyncio.gather(
        *(
            run_async(
                lambda: ThinkingBot(next(seeds), think),
                server=server,
                name=name,
                token=token,
                games=[game],
            )
            for name, token in tokens.items()
        )
    )
    await play_until_sigterm(players)


# -- the crowds (roles "grpc-crowd" and "web-crowd") -----------------------------------------------


@dataclass
class CrowdCounts:
    """What one crowd process saw, printed as JSON when it stops."""

    admitted: int = 0
    refused: int = 0
    dropped: int = 0
    messages: int = 0
    refusals: dict[str, int] = field(default_factory=dict)


class Crowd:
    """``size`` spectators, each keeping a watch on a running game (see the module)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.games: list[str] = []
        self.counts = CrowdCounts()
        self.listed = asyncio.Event()

    def game_for(self, slot: int, last: str | None) -> str | None:
        """The game spectator ``slot`` watches next: its share of the games listed, never the
        one it just watched (that one ended, or refused it)."""
        games = [g for g in self.games if g != last]
        return games[slot % len(games)] if games else None

    def refused(self, why: str) -> None:
        self.counts.refused += 1
        key = re.sub(r"[0-9a-f]{32}", "ID", why)[:70]
        self.counts.refusals[key] = self.counts.refusals.get(key, 0) + 1

    async def run(self, lobby: Any, watch: Any) -> None:
        """Keep the lobby fresh and every spectator watching until SIGTERM."""

        async def keep_listing() -> None:
            while True:
                with contextlib.suppress(Exception):
                    self.games = await lobby()
                    self.listed.set()
                await asyncio.sleep(LOBBY_SECONDS)

        async def spectator(slot: int) -> None:
            last: str | None = None
            while True:
                game = self.game_for(slot, last)
                if game is None:
                    await asyncio.sleep(LOBBY_SECONDS)
                    continue
                last = game
                await watch(game, slot)

        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        tasks = [asyncio.create_task(keep_listing())]
        await self.listed.wait()
        tasks += [asyncio.create_task(spectator(i)) for i in range(self.size)]
        await stop.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        print("counts " + json.dumps(self.counts.__dict__), flush=True)


async def grpc_crowd_main(server: str, size: int) -> None:
    crowd = Crowd(size)
    channels = [grpc.aio.insecure_channel(server) for _ in range(max(1, size // 100))]
    lobby_channel = channels[0]
    list_live = lobby_channel.unary_unary(
        "/domino_arena.v1.SpectatorService/ListLive",
        request_serializer=admin_pb.ListLiveRequest.SerializeToString,
        response_deserializer=admin_pb.ListLiveResponse.FromString,
    )
    watches = [
        c.unary_stream(
            WATCH_SERVICE,
            request_serializer=admin_pb.WatchRequest.SerializeToString,
            response_deserializer=bytes,
        )
        for c in channels
    ]
    turn = iter(range(1 << 62))

    async def lobby() -> list[str]:
        answer = await list_live(admin_pb.ListLiveRequest(), timeout=5)
        return [m.match_id for m in answer.matches]

    async def watch(match_id: str, slot: int) -> None:
        call = watches[next(turn) % len(watches)](admin_pb.WatchRequest(match_id=match_id))
        seen = 0
        try:
            async for _ in call:
                if seen == 0:
                    crowd.counts.admitted += 1
                seen += 1
                crowd.counts.messages += 1
        except grpc.aio.AioRpcError as exc:
            if seen == 0:
                crowd.refused(f"{exc.code().name}: {exc.details()}")
                await asyncio.sleep(LOBBY_SECONDS)  # a refused spectator waits for another game
            elif exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
                crowd.counts.dropped += 1

    await crowd.run(lobby, watch)


async def web_crowd_main(base: str, size: int) -> None:
    """Browsers reading the live pages' event streams over plain HTTP/1.1 sockets."""
    crowd = Crowd(size)
    host, _, port_text = base.removeprefix("http://").rstrip("/").partition(":")
    port = int(port_text)

    async def get(
        path: str, slot: int = 0
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, int]:
        # Each browser from an address of its own (127.1.0.1, ...): a crowd of machines, as the
        # web face's cap per client address sees it.
        source = f"127.1.{slot // 250}.{slot % 250 + 1}"
        reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        status = int((await reader.readline()).split()[1])
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        return reader, writer, status

    async def lobby() -> list[str]:
        reader, writer, _ = await get("/api/live")
        body = await reader.read()
        writer.close()
        start = body.index(b"{")  # past a chunk size line, if any
        data = json.loads(body[start : body.rindex(b"}") + 1])
        return [m["id"] for m in data["matches"]]

    async def watch(match_id: str, slot: int) -> None:
        try:
            reader, writer, status = await get(f"/api/live/{match_id}/events", slot)
        except OSError as exc:
            crowd.refused(f"connect: {exc}")
            await asyncio.sleep(LOBBY_SECONDS)
            return
        try:
            if status != 200:
                crowd.refused(f"HTTP {status}")
                await asyncio.sleep(LOBBY_SECONDS)
                return
            crowd.counts.admitted += 1
            while chunk := await reader.read(65536):
                crowd.counts.messages += chunk.count(b"event: ")
                if b"event: cut" in chunk:
                    crowd.counts.dropped += 1
        finally:
            writer.close()

    await crowd.run(lobby, watch)


# -- the orchestra ---------------------------------------------------------------------------------


@dataclass
class Row:
    """One level's figures."""

    label: str
    spectators: int
    moves: int
    wall: float
    cpu: dict[str, float]
    """CPU seconds per process during the level."""
    busy: float
    counts: dict[str, dict[str, Any]]
    turn_ms: float
    """The median time from the referee's request to the reply it took in (think_ms): the
    bots' think time plus every delay on the way, the referee's busy loop included."""
    rate: float
    """Moves per second: the sum over the lanes of each lane's moves over the time it ran."""


def crowd_command(args: argparse.Namespace, role: str, target: str, size: int) -> list[str]:
    command = this_script("--role", role, "--target", target, "--size", str(size))
    return command if args.no_nice else ["nice", "-n", str(NICE), *command]


async def level(
    args: argparse.Namespace,
    cluster: Cluster,
    lanes: Lanes,
    label: str,
    *,
    crowds: Sequence[tuple[str, str, int]],
    seed_base: int,
) -> Row:
    """Run the tournament for ``args.seconds`` with ``crowds`` watching: (role, target, size)."""
    started = []
    for index, (role, target, size) in enumerate(crowds):
        if size:
            name = f"{role}-{seed_base}-{index}"
            started.append((name, cluster.start(name, crowd_command(args, role, target, size))))
    await asyncio.sleep(2.0 if started else 0.0)  # the crowd finds the games and settles
    pids = {name: p.pid for name, p in cluster.processes.items() if p.poll() is None}
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    ticks = machine_ticks()
    lane_times: list[tuple[int, float]] = []
    responses, wall = await run_lanes(lanes, args.matches, args.seconds, seed_base, lane_times)
    busy = busy_percent(ticks)
    cpu = {name: cpu_seconds(pid) - before[name] for name, pid in pids.items()}
    counts: dict[str, dict[str, Any]] = {}
    for name, process in started:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
        line = wait_for_line(cluster.log_path(name), "counts ", process)
        counts[name.rsplit("-", 2)[0]] = json.loads(line.split("counts ", 1)[1])
        del cluster.processes[name]
    cluster.check_alive()
    moves = 0
    turns: list[float] = []
    moves_of: list[int] = []
    for response in responses:
        if response.result.termination != pb.TERMINATION_NORMAL:
            raise CycleError(f"a game ended {response.result.termination}: {response}")
        moves_of.append(count_moves(response.record)[0])
        moves += moves_of[-1]
        for line in response.record.splitlines():
            step = json.loads(line)
            if step.get("type") == "step" and step.get("think_ms") is not None:
                turns.append(float(step["think_ms"]))
    turn_ms = statistics.median(turns) if turns else float("nan")
    spectators = sum(size for _, _, size in crowds)
    # Each lane's moves over the time it ran: the lanes that finished early leave no tail.
    bounds = [*sorted(lane_times), (len(responses), 0.0)]
    rate = sum(
        sum(moves_of[first : bounds[i + 1][0]]) / seconds
        for i, (first, seconds) in enumerate(bounds[:-1])
    )
    return Row(label, spectators, moves, wall, cpu, busy, counts, turn_ms, rate)


@dataclass(frozen=True, slots=True)
class Arena:
    """A referee with its bots, web face and relay, running in ``cluster``."""

    referee: subprocess.Popen[Any]
    address: str
    web: str
    relay: str
    lanes: Lanes


async def start_arena(
    args: argparse.Namespace, cluster: Cluster, serve_options: Sequence[str] = ()
) -> Arena:
    """Start the referee (with ``serve_options``), the bots, the web face and the relay."""
    from domino_arena.server.store.storage import Storage  # noqa: PLC0415

    folder = cluster.folder
    database = f"sqlite:///{folder / 'referee.db'}"
    storage = Storage(database)
    storage.open()
    names = [f"bench-{i:03d}" for i in range(args.bots)]
    tokens = {name: storage.add_bot(name) for name in names}
    storage.close()
    credentials = folder / "tokens.json"
    credentials.write_text(json.dumps(tokens))
    relay_token = folder / "relay.token"
    relay_token.write_text(secrets.token_urlsafe(24) + "\n")
    relay_token.chmod(0o600)
    cli = ["-m", "domino_arena.server.cli.main"]
    profiled = ["-m", "cProfile", "-o", str(args.profile)] if args.profile else []
    referee = cluster.start(
        "referee",
        python_command(
            *profiled, *cli, "serve", "--port", "0", "--admin-token", ADMIN_TOKEN, "--db", database,
            "--relay-token-file", str(relay_token), "--no-web", *serve_options,
        ),
    )  # fmt: skip
    line = wait_for_line(cluster.log_path("referee"), "serving on 127.0.0.1:", referee)
    address = f"127.0.0.1:{int(line.rsplit(':', 1)[1])}"
    cluster.start(
        "bots",
        this_script(
            "--role", "bots", "--target", address, "--credentials", str(credentials),
            "--think-ms", str(args.think_ms),
        ),
    )  # fmt: skip
    await wait_connected(address, names)
    nice = [] if args.no_nice else ["nice", "-n", str(NICE)]
    web = cluster.start(
        "web",
        [
            *nice,
            *python_command(
                *cli, "web", "--server", address, "--port", "0", "--db", database,
                "--relay-token-file", str(relay_token),
            ),
        ],
    )  # fmt: skip
    web_line = wait_for_line(cluster.log_path("web"), "web face on http://", web)
    relay = cluster.start(
        "relay",
        [
            *nice,
            *python_command(
                *cli, "relay", "--server", address, "--port", "0",
                "--relay-token-file", str(relay_token),
                "--max-watchers-per-address", str(max(64, *args.levels)),
            ),
        ],
    )  # fmt: skip
    relay_line = wait_for_line(cluster.log_path("relay"), "relay of the referee", relay)
    lanes = Lanes(
        address,
        make_game("passing", players=2),
        [(names[i], names[i + 1]) for i in range(0, len(names) - 1, 2)],
        TimeControl.parse("10s+60s/1s"),
        call_timeout=600.0,
    )
    return Arena(
        referee,
        address,
        web_line.split("web face on ", 1)[1].split()[0],
        relay_line.rsplit(" on ", 1)[1].strip(),
        lanes,
    )


async def orchestrate(args: argparse.Namespace, cluster: Cluster) -> list[Row]:
    """The levels and the direct crowd, on an arena with the referee's default bounds."""
    arena = await start_arena(args, cluster)
    print(
        f"processes: referee {arena.address}; web face {arena.web}; relay {arena.relay}; "
        f"{args.bots} bots thinking {args.think_ms:g} ms a move; {args.matches} games at once"
    )
    rows = []
    for spectators in args.levels:
        half = spectators // 2
        crowds = [("grpc-crowd", arena.relay, half), ("web-crowd", arena.web, spectators - half)]
        row = await level(args, cluster, arena.lanes, f"{spectators}", crowds=crowds, seed_base=0)
        print(f"  {row.label} spectators: {row.rate:.0f} moves/s", flush=True)
        rows.append(row)
    if not args.no_direct:
        top = max(args.levels)
        crowds = [("grpc-crowd", arena.address, top)]
        row = await level(args, cluster, arena.lanes, f"{top} direct", crowds=crowds, seed_base=0)
        print(f"  {row.label} spectators: {row.rate:.0f} moves/s", flush=True)
        rows.append(row)
    if args.profile:  # a clean stop, so cProfile writes its statistics
        stop_process(arena.referee, signal.SIGINT, 30.0)
    return rows


async def ceiling(args: argparse.Namespace, cluster: Cluster) -> list[Row]:
    """The referee's work per turn at its ceiling: every game at its bound of direct watchers
    (the bound per address raised so one address holds them all, as if they came from many
    machines; the web face's watch besides), against no watcher at all."""
    at_bound = watch_limits.MAX_WATCHERS_PER_MATCH * args.matches
    arena = await start_arena(args, cluster, ("--max-watchers-per-address", str(at_bound)))
    rows = [await level(args, cluster, arena.lanes, "0 (ceiling run)", crowds=[], seed_base=0)]
    crowds = [("grpc-crowd", arena.address, at_bound), ("web-crowd", arena.web, 2)]
    rows.append(
        await level(args, cluster, arena.lanes, f"{at_bound} at bound", crowds=crowds, seed_base=0)
    )
    print(f"  ceiling: {rows[0].rate:.0f} and {rows[1].rate:.0f} moves/s", flush=True)
    return rows


def print_tables(rows: Sequence[Row]) -> None:
    base = rows[0].rate
    print()
    print(f"{'spectators':>16} {'moves/s':>8} {'drop':>7} {'turn ms':>8} {'referee µs/move':>16} "
          f"{'admitted':>9} {'refused':>8} {'dropped':>8} {'msgs/s':>8}")  # fmt: skip
    for row in rows:
        drop = 1 - row.rate / base
        referee_us = 1e6 * row.cpu.get("referee", 0.0) / max(1, row.moves)
        admitted = sum(c["admitted"] for c in row.counts.values())
        refused = sum(c["refused"] for c in row.counts.values())
        dropped = sum(c["dropped"] for c in row.counts.values())
        messages = sum(c["messages"] for c in row.counts.values()) / row.wall
        verdict = "" if drop < FLOOR or row.spectators < 2000 else "  above 10%"
        print(f"{row.label:>16} {row.rate:>8.0f} {100 * drop:>6.1f}% {row.turn_ms:>8.1f} "
              f"{referee_us:>16.0f} {admitted:>9} {refused:>8} {dropped:>8} {messages:>8.0f}"
              f"{verdict}")  # fmt: skip
    print()
    names = sorted({n for row in rows for n in row.cpu if not n.startswith(("grpc", "web-"))})
    print(f"CPU, % of one core: {'spectators':>16} " + " ".join(f"{n:>8}" for n in names)
          + f" {'crowds':>8} {'machine':>8}")  # fmt: skip
    for row in rows:
        crowd = sum(v for n, v in row.cpu.items() if n.startswith(("grpc", "web-")))
        cells = " ".join(f"{100 * row.cpu.get(n, 0.0) / row.wall:>8.0f}" for n in names)
        print(f"{'':>20}{row.label:>16} {cells} {100 * crowd / row.wall:>8.0f} {row.busy:>8.0f}")
    for row in rows:
        for name, counts in row.counts.items():
            if counts["refusals"]:
                print(f"refusals at {row.label}, {name}: {counts['refusals']}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="0,200,2000")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--matches", type=int, default=8, help="games at once (default 8)")
    parser.add_argument("--think-ms", type=float, default=20.0)
    parser.add_argument("--bots", type=int, default=16)
    parser.add_argument("--no-direct", action="store_true")
    parser.add_argument("--no-nice", action="store_true")
    parser.add_argument("--no-ceiling", action="store_true")
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="run the referee under cProfile, its statistics to FILE (slower than normal)",
    )
    parser.add_argument("--role", default="orchestra", help=argparse.SUPPRESS)
    parser.add_argument("--target", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--credentials", type=Path, help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.role == "bots":
        asyncio.run(bots_main(args.target, args.credentials, "passing", args.think_ms / 1000))
        return 0
    if args.role == "grpc-crowd":
        asyncio.run(grpc_crowd_main(args.target, args.size))
        return 0
    if args.role == "web-crowd":
        asyncio.run(web_crowd_main(args.target, args.size))
        return 0
    args.levels = sorted({int(v) for v in args.levels.split(",")})
    print(f"machine: {load_text()} at the start")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="watchers-bench-") as folder:
        cluster = Cluster(Path(folder))
        try:
            rows = asyncio.run(orchestrate(args, cluster))
            if not args.no_ceiling:
                cluster.close()
                cluster = Cluster(Path(folder) / "ceiling")
                cluster.folder.mkdir()
                rows += asyncio.run(ceiling(args, cluster))
        except CycleError as exc:
            print(f"watchers_bench: error: {exc}", file=sys.stderr)
            for name in cluster.processes:
                tail = cluster.log_path(name).read_text()[-1500:]
                print(f"--- {name}'s output ends:\n{tail}", file=sys.stderr)
            return 1
        finally:
            cluster.close()
    print_tables(rows)
    print(f"\nmachine: {load_text()} at the end; {time.perf_counter() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
