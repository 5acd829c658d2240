"""A scripted class through the real referee and the real command line (docs/courses.md).

The organizer runs ``domino-arena`` with the whole install; every student runs it on the light
install (tests/fakes/light_install.py: the server extra is unimportable in their processes),
as ``pip install domino-arena`` gives them. The referee is the whole application on port 0
(tests/fakes/referee_server.py), and the students' bots are raw gRPC clients written from the
proto that play the first legal action. Each phase is one method, so tests/e2e/test_class.py
asserts what each one did and bench/class_bench.py times it:

1. ``open_course``: the admin creates the course with frozen baselines; the organizer makes
   one invite per student and one spare;
2. ``register``: every student registers a first bot with an invite (the owner token it gives
   is kept in a file), and ``second_versions`` of them a second bot with that owner token;
3. ``intrude``: one student tries the spare invite under another student's name, one the
   invite already used: both refused;
4. ``play``: the ``playing`` students' latest bots connect and a graded tournament, sized with
   ``--precision``, starts at once and is waited for. A ``hosted`` class first ``submit``s
   them instead (``bot submit`` on the light install: half a Python file with a Bot, half a
   stdio program with no SDK), and the referee's own runner hosts them once validated; a
   ``cluster`` class does the same on a match host, a gateway and two runners of their own
   (docs/hosting.md);
5. ``export``: the grades as CSV, JSON and the gradebook CSV, with a grade scale;
6. ``regrade``: one student registers a new version, which replaces the old one in a regrade on
   fresh deals; the original and the regrade are graded together.

Commands run one at a time but for the registrations, which run ``parallel`` at once (a class
registers at the same time). Every wait is bounded by ``WAIT`` and only matters on failure.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import grpc

from domino_arena.bots import HOSTED_BOTS
from domino_arena.server.hosting.runner import Hosting
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play import house
from domino_arena.server.store import hosted
from domino_arena.server.store.tournaments import TournamentState
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc

from .cluster import ADMIN_TOKEN as CLUSTER_ADMIN_TOKEN
from .cluster import Cluster, fresh_database
from .hosted import PYTHON_BOT, STDIO_BOT, polled, sandbox_processes
from .hosted_cluster import GATEWAY, HOST, ClusterReferee
from .light_install import light_env
from .processes import command, resident
from .referee_server import ADMIN_TOKEN, WAIT, BearerToken, RawBot, Referee, first_legal

COURSE: Final = "ai101"
GAME: Final = "passing"
SCALE: Final = "A:beats greedy,B:beats random,F"
PRECISION: Final = 450.0
"""The baseline comparisons' half-width asked for (Elo): two duplicate sets per baseline."""
COMMAND_WAIT: Final = 120.0
"""Seconds one command may take before the run fails (a loaded machine starts Python slowly)."""
PLAY_WAIT: Final = 600.0
"""Seconds a tournament may take before the run fails."""
POLL: Final = 0.05


@dataclass(frozen=True, slots=True)
class Ran:
    """One finished command: its exit status and its output streams."""

    args: tuple[str, ...]
    code: int
    out: str
    err: str

    def ok(self) -> Ran:
        assert self.code == 0, f"{' '.join(self.args)} -> {self.code}: {self.err}"
        return self


def student_name(n: int) -> str:
    return f"s{n:02d}"


@dataclass
class ClassTerm:
    """One class on one referee; its phases are called in order (see the module's docstring)."""

    folder: Path
    students: int = 40
    second_versions: int = 10
    playing: int = 40
    parallel: int = 4
    hosted: bool = False
    """The playing students submit their bots and the referee's runner hosts them in its
    sandboxes (:meth:`submit`); else their bots are raw clients connected by the test."""
    cluster: bool = False
    """With ``hosted``: the class on a scaled-out arena (a match host, a gateway and two runners
    of their own, ``serve --role runner``, on NATS and a fresh PostgreSQL database)."""
    referee: Referee | ClusterReferee = field(init=False)
    storage: RatedStorage = field(init=False)
    organizer_token: str = ""
    invites: list[str] = field(default_factory=list)
    spare_invite: str = ""
    bot_tokens: dict[str, str] = field(default_factory=dict)
    latest: dict[str, str] = field(default_factory=dict)
    """Student -> the name of their latest bot."""
    bots: list[RawBot] = field(default_factory=list)
    tournament_id: str = ""
    regrade_id: str = ""
    _hosted: Any = None

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.light = light_env(self.folder / "light")
        self._hosted = house.provided()
        house.provide(HOSTED_BOTS)
        self.hosting_dir = Path(tempfile.mkdtemp(prefix="class-hosted-"))
        self.hosting_dir.chmod(0o755)  # the sandbox's user reads the unpacked versions
        self._stack = contextlib.ExitStack()
        if self.cluster:
            self._start_cluster()
            return
        self.admin_token = ADMIN_TOKEN
        self.storage = RatedStorage(f"sqlite:///{self.folder / 'referee.db'}")
        self.storage.open()
        hosting = Hosting(self.hosting_dir, poll_seconds=0.2) if self.hosted else None
        referee = Referee(self.storage, hosting=hosting)
        self.referee, self.server, self.admin_channel = referee, referee.address, referee.channel

    def _start_cluster(self) -> None:
        assert self.hosted, "a class on a cluster is a hosted class"
        db = self._stack.enter_context(fresh_database())
        arena = Cluster(self.folder, db)
        self._stack.callback(arena.stop)
        arena.start([HOST], [GATEWAY])
        for runner in ("runner-1", "runner-2"):
            workdir = self.hosting_dir / runner
            workdir.mkdir(mode=0o755)
            arena.start_runners([runner], [GATEWAY], hosting_dir=workdir, idle_stop=60.0)
        referee = ClusterReferee(arena)
        self.admin_token = CLUSTER_ADMIN_TOKEN
        self.storage = arena.storage
        self.referee, self.server, self.admin_channel = (
            referee,
            referee.host_address,
            referee.host_channel,
        )

    def close(self) -> None:
        for bot in self.bots:
            bot.close()
        self.referee.close()
        if self.cluster:
            self._stack.close()  # the cluster's processes, its storage and its database
        else:
            self.storage.close()
        shutil.rmtree(self.hosting_dir, ignore_errors=True)
        house.provide(self._hosted)

    # -- running commands -----------------------------------------------------------------------

    def run(self, *args: str, token: str = "", light: bool = False) -> Ran:
        """``domino-arena ARGS --server REFEREE``: as the organizer (``token``: the admin or
        organizer token, from the environment as a user sets it) or as a student on the light
        install."""
        env = {**os.environ, **(self.light if light else {})}
        env.pop("DOMINO_ARENA_ADMIN_TOKEN", None)
        if token:
            env["DOMINO_ARENA_ADMIN_TOKEN"] = token
        full = (*args, "--server", self.server)
        done = subprocess.run(
            command(*full),
            cwd=self.folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=COMMAND_WAIT,
            check=False,
        )
        return Ran(full, done.returncode, done.stdout, done.stderr)

    def organizer(self, *args: str) -> Ran:
        return self.run(*args, token=self.organizer_token).ok()

    def student(self, *args: str) -> Ran:
        return self.run(*args, light=True)

    def owner_file(self, student: str) -> Path:
        return self.folder / f"{student}.owner"

    def token_file(self, bot: str) -> Path:
        return self.folder / f"{bot}.token"

    # -- the phases -----------------------------------------------------------------------------

    def open_course(self) -> None:
        created = self.run(
            "course", "create", COURSE, "--title", "AI 101",
            "--baseline", "greedy=1500", "--baseline", "random=1000",
            token=self.admin_token,
        ).ok()  # fmt: skip
        self.organizer_token = created.out.strip().splitlines()[-1]
        made = self.organizer("invite", "create", "--count", str(self.students + 1))
        codes = made.out.split()
        assert len(codes) == self.students + 1, made
        self.invites, self.spare_invite = codes[:-1], codes[-1]

    def _first_bot(self, n: int) -> Ran:
        student, bot = student_name(n), f"{student_name(n)}-v1"
        return self.student(
            "bot", "register", bot, "--invite", self.invites[n - 1], "--owner", student,
            "--owner-token-file", str(self.owner_file(student)),
            "--token-file", str(self.token_file(bot)),
        )  # fmt: skip

    def _next_bot(self, n: int, version: int) -> Ran:
        student, bot = student_name(n), f"{student_name(n)}-v{version}"
        return self.student(
            "bot", "register", bot, "--owner-token-file", str(self.owner_file(student)),
            "--token-file", str(self.token_file(bot)),
        )  # fmt: skip

    def _kept(self, student: str, bot: str) -> None:
        self.bot_tokens[bot] = self.token_file(bot).read_text().strip()
        self.latest[student] = bot

    def register(self) -> list[Ran]:
        """Every student's first bot, then the second versions; returns every command run."""
        numbers = range(1, self.students + 1)
        with ThreadPoolExecutor(self.parallel) as pool:
            firsts = list(pool.map(self._first_bot, numbers))
            for n, ran in zip(numbers, firsts, strict=True):
                ran.ok()
                self._kept(student_name(n), f"{student_name(n)}-v1")
            again = numbers[: self.second_versions]
            seconds = list(pool.map(lambda n: self._next_bot(n, 2), again))
        for n, ran in zip(again, seconds, strict=True):
            ran.ok()
            self._kept(student_name(n), f"{student_name(n)}-v2")
        return firsts + seconds

    def intrude(self) -> tuple[Ran, Ran]:
        """Student 1 with the spare invite under student 2's name; student 3 with student 4's
        used invite under a new name. Both should be refused."""
        impersonation = self.student(
            "bot", "register", "s01-as-s02", "--invite", self.spare_invite,
            "--owner", student_name(2), "--token-file", str(self.folder / "intruder.token"),
        )  # fmt: skip
        reused = self.student(
            "bot", "register", "s03-again", "--invite", self.invites[3],
            "--owner", "s03-again", "--token-file", str(self.folder / "reused.token"),
        )  # fmt: skip
        return impersonation, reused

    def submit(self) -> list[Ran]:
        """The playing students submit their latest bots with its token, on the light install:
        odd-numbered ones a Python file with a Bot, even-numbered ones a folder whose command
        speaks the stdio protocol (no SDK); then wait until the arena validated every one."""

        def one(n: int) -> Ran:
            student = student_name(n)
            bot = self.latest[student]
            folder = self.folder / "submissions" / bot
            folder.mkdir(parents=True)
            extra: tuple[str, ...] = ()
            if n % 2:
                (folder / "mybot.py").write_text(PYTHON_BOT)
                where = folder / "mybot.py"
            else:
                (folder / "bot.py").write_text(STDIO_BOT)
                where, extra = folder, ("--command", "python3 bot.py")
            return self.student(
                "bot", "submit", bot, str(where), *extra, "--games", GAME,
                "--token-file", str(self.token_file(bot)),
            )  # fmt: skip

        numbers = range(1, self.playing + 1)
        with ThreadPoolExecutor(self.parallel) as pool:
            submitted = list(pool.map(one, numbers))
        for ran in submitted:
            ran.ok()
        bots = [self.latest[student_name(n)] for n in numbers]
        latest = polled(
            lambda: {bot: hosted.versions(self.storage.engine, bot)[0] for bot in bots},
            lambda found: all(v.status != "checking" for v in found.values()),
            lambda found: (
                f"still checking: {[b for b, v in found.items() if v.status == 'checking']}"
            ),
            wait=PLAY_WAIT,
        )
        for version in latest.values():
            assert version.status == "accepted", version
        return submitted

    def wait_hosted(self) -> None:
        """Wait until the runner has connected every playing student's latest bot."""
        wanted = {self.latest[student_name(n)] for n in range(1, self.playing + 1)}
        polled(
            lambda: wanted - set(self.referee.connected()),
            lambda missing: not missing,
            lambda missing: f"never hosted: {sorted(missing)}",
            wait=PLAY_WAIT,
        )

    def hosted_memory(self) -> tuple[int, int]:
        """The hosted bots' processes now: how many sandboxes (one per playing bot still
        running) and the resident memory of all their processes together, bytes."""
        total = resident(sandbox_processes(str(self.hosting_dir)))
        return self.playing, total

    def connect(self, bot: str) -> None:
        self.bots.append(
            self.referee.connect(bot, self.bot_tokens[bot], first_legal, games=(GAME,))
        )

    def play(self) -> Ran:
        """The playing students' latest bots connect (or are hosted); the graded tournament
        runs to its end."""
        if self.hosted:
            self.wait_hosted()
        else:
            for n in range(1, self.playing + 1):
                self.connect(self.latest[student_name(n)])
        created = self.organizer(
            "tournament", "create", GAME, "--baselines", "greedy,random",
            "--entrant-policy", "connected", "--precision", f"{PRECISION:g}",
            "--max-deals", "1", "--time-control", "30s+60s/1s", "--concurrency", "8",
            "--seed", "2027", "--name", "assignment 1", "--start",
        )  # fmt: skip
        self.tournament_id = created.out.split()[1]
        self.wait_finished(self.tournament_id)
        return created

    def export(self) -> dict[str, str]:
        """The grades of the tournament in each format: format -> the file's text."""
        files: dict[str, str] = {}
        for name, shape in (
            ("grades.csv", "csv"),
            ("grades.json", "json"),
            ("canvas.csv", "gradebook"),
        ):
            path = self.folder / name
            self.organizer(
                "grades", self.tournament_id, "--format", shape, "--scale", SCALE,
                "--rounds", "50", "-o", str(path),
            )  # fmt: skip
            files[shape] = path.read_text()
        return files

    def regrade(self) -> tuple[Ran, Ran, dict[str, Any]]:
        """Student 1 hands in a third version after the deadline; the regrade replaces their
        entry with it on fresh deals. Returns the new version's registration, the regrade's
        creation and the grades of the original and the regrade together (JSON)."""
        old = self.latest[student_name(1)]
        registered = self._next_bot(1, 3)
        self._kept(student_name(1), f"{student_name(1)}-v3")
        self.connect(self.latest[student_name(1)])
        created = self.organizer(
            "tournament", "regrade", self.tournament_id,
            "--replace", f"{old}={self.latest[student_name(1)]}", "--fresh-deals", "--start",
        )  # fmt: skip
        self.regrade_id = created.out.split()[1]
        self.wait_finished(self.regrade_id)
        graded = self.organizer(
            "grades", self.tournament_id, self.regrade_id, "--format", "json", "--rounds", "50"
        )
        return registered, created, json.loads(graded.out)

    # -- waiting --------------------------------------------------------------------------------

    def wait_finished(self, tournament_id: str) -> admin_pb.Tournament:
        """Look at the stored tournament every POLL s until it stops running (fail after
        PLAY_WAIT s), then ask the referee for it once. The stored row is what a poll reads:
        GetTournament computes the tournament's results, crosstable and fit from all its games,
        a teacher's occasional question, not one to ask twenty times a second."""
        deadline = time.monotonic() + PLAY_WAIT
        pause = threading.Event()  # never set: its timed wait is the pause between looks
        while True:
            stored = self.storage.tournament(tournament_id)
            assert stored is not None, tournament_id
            if stored.state not in (TournamentState.CREATED, TournamentState.RUNNING):
                break
            assert time.monotonic() < deadline, f"tournament {tournament_id} still {stored.state}"
            pause.wait(POLL)
        channel = grpc.intercept_channel(self.admin_channel, BearerToken(self.organizer_token))
        stub = admin_pb_grpc.AdminServiceStub(channel)
        request = admin_pb.GetTournamentRequest(tournament_id=tournament_id)
        t = stub.GetTournament(request, timeout=WAIT)
        assert t.state == admin_pb.TOURNAMENT_STATE_FINISHED, t
        return t


def csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def rows_by(rows: Sequence[dict[str, str]], column: str) -> dict[str, dict[str, str]]:
    return {row[column]: row for row in rows}
