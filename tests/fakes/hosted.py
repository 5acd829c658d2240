"""A referee that runs hosted bots, for tests: the whole App with its own runner, on port 0.

:class:`HostedArena` serves a real referee (tests/fakes/referee_server.py) whose runner hosts
the bots stored with versions (server/hosting/runner.py), in real bubblewrap sandboxes. A test
writes a bot's files, :meth:`HostedArena.host` stores them as an accepted version (or leaves it
to the validator) and waits until the runner has connected it; matches run through the admin
API as any match does. The runner's work directory is made world-readable under the system's
temporary folder, as ``serve`` makes its own: the sandbox's user (nobody) must read the
unpacked versions, and pytest's folders are private to their owner.
"""

from __future__ import annotations

import shutil
import tempfile
import textwrap
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final, Protocol, TypeVar

from sqlalchemy.engine import Engine

from domino_arena.sdk.rules import make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.hosting.runner import Hosting
from domino_arena.server.hosting.spec.submissions import pack
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store import hosted
from domino_arena.server.store.bots import create_bot
from domino_arena.server.store.tables import now
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc as admin_pb_grpc
from domino_arena.v1 import referee_pb2 as pb

from .referee_server import WAIT, Policy, RawBot, Referee

T = TypeVar("T")

POLL: Final = 0.05
"""Seconds between two looks at a condition no event announces (the runner's connections)."""
SANDBOX_USER: Final = 65534
"""The user the sandboxes run as (server/hosting/sandbox.py, when the runner is root)."""


def python_bot(body: str, *, header: str = "") -> dict[str, str]:
    """The files of a Python submission ``bot.py`` whose ``choose`` is ``body`` (indented by
    the caller's own layout; ``observation`` is the argument) and whose module starts with
    ``header``."""
    source = (
        "import os, sys, socket, signal\n"
        "from domino_arena.sdk import Bot\n"
        + textwrap.dedent(header)
        + "\n\nclass Hostile(Bot):\n    def choose(self, observation):\n"
        + textwrap.indent(textwrap.dedent(body), "        ")
        + "\n"
    )
    return {"bot.py": source}


def polled(
    look: Callable[[], T],
    done: Callable[[T], bool],
    failure: Callable[[T], str],
    *,
    wait: float = WAIT,
) -> T:
    """What ``look()`` gives once ``done`` of it holds, looked at every :data:`POLL` s (the
    conditions here have no event to wait on); the test fails with ``failure`` of the last look
    after ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        value = look()
        if done(value):
            return value
        assert time.monotonic() < deadline, failure(value)
        time.sleep(POLL)


def sandbox_processes(marker: str) -> list[int]:
    """The pids of the processes running as the sandboxes' user whose command line, or an
    ancestor's, names ``marker`` (a runner's work directory: its bubblewrap names its bundles),
    so other sandboxes on the machine are not counted."""
    users: dict[int, tuple[int, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != SANDBOX_USER:
                continue
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except (FileNotFoundError, ProcessLookupError):
            continue
        parent = int(status.split("PPid:")[1].split()[0])
        users[int(entry.name)] = (parent, cmdline)

    def marked(pid: int) -> bool:
        seen: set[int] = set()
        while pid in users and pid not in seen:
            seen.add(pid)
            parent, cmdline = users[pid]
            if marker in cmdline:
                return True
            pid = parent
        return False

    return sorted(pid for pid in users if marked(pid))


PYTHON_BOT: Final = """\
from domino_arena.sdk import Bot


class FirstLegal(Bot):
    def choose(self, observation):
        return observation.legal_actions[0]
"""
"""A Python submission: a Bot, run by the SDK's stdio host in the sandbox."""
STDIO_BOT: Final = """\
import json
import sys

for line in sys.stdin:
    request = json.loads(line).get("request")
    if request:
        action = request["observation"]["legalActions"][0]
        reply = {"matchId": request["matchId"], "turn": request["turn"], "action": action}
        print(json.dumps({"reply": reply}), flush=True)
"""
"""A stdio program (docs/writing-a-bot.md): no SDK, the JSON lines only; run as
``python3 bot.py``."""


def store_version(
    engine: Engine,
    folder: Path,
    name: str,
    files: Mapping[str, str],
    *,
    command: str | None = None,
    games: tuple[str, ...] = ("straight",),
    accepted: bool | None = True,
) -> int:
    """Write ``files`` under ``folder``, pack them as ``bot submit`` does and store them as a
    new version of the existing bot ``name``; return its number. ``accepted`` None leaves it
    ``checking`` for the validator, else its verdict is set so."""
    source = Path(tempfile.mkdtemp(dir=folder))
    for relative, text in files.items():
        path = source / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    target = source / "bot.py" if command is None else source
    submission = pack(target, command=command)
    version = hosted.add_version(engine, name, submission, submitter="test", games=games, now=now())
    if accepted is not None:
        hosted.set_verdict(engine, name, version.number, accepted=accepted, report="test")
    return version.number


class ServingReferee(Protocol):
    """What the tests ask of a referee that hosts bots: a single referee
    (:class:`~.referee_server.Referee`) or a cluster's gateway and host
    (``tests/fakes/hosted_cluster.py``)."""

    port: int
    """Where bots dial it."""

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``."""
        ...

    admin: admin_pb_grpc.AdminServiceStub

    def connect(
        self,
        name: str,
        token: str,
        policy: Policy | None = ...,
        games: tuple[str, ...] = ...,
    ) -> RawBot: ...

    def connected(self) -> dict[str, tuple[tuple[str, ...], int]]: ...

    def close(self) -> None: ...


class HostedArena:
    """A referee with its runner, its database in ``folder``."""

    def __init__(self, folder: Path, *, idle_stop_seconds: float = 1.0) -> None:
        self.folder = folder
        self.database = folder / "arena.db"
        self.storage = RatedStorage(f"sqlite:///{self.database}")
        self.storage.open()
        self.workdir = Path(tempfile.mkdtemp(prefix="arena-hosted-test-"))
        self.workdir.chmod(0o755)
        self.referee: ServingReferee = Referee(
            self.storage,
            hosting=Hosting(self.workdir, idle_stop_seconds=idle_stop_seconds, poll_seconds=0.1),
        )
        self.tokens: dict[str, str] = {}

    def close(self) -> None:
        self.referee.close()
        self.storage.close()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def submit(
        self,
        name: str,
        files: Mapping[str, str],
        *,
        command: str | None = None,
        games: tuple[str, ...] = ("straight",),
        accepted: bool | None = True,
    ) -> int:
        """Store ``files`` as a new version of bot ``name`` (created if new) and return its
        number; ``accepted`` None leaves it ``checking`` for the validator."""
        engine = self.storage.engine
        if name not in self.tokens:
            self.tokens[name] = create_bot(engine, name).token
        return store_version(
            engine, self.folder, name, files, command=command, games=games, accepted=accepted
        )

    def host(self, name: str, files: Mapping[str, str], **options: object) -> int:
        """:meth:`submit` an accepted version and wait until the runner connected the bot."""
        number = self.submit(name, files, **options)  # type: ignore[arg-type]
        self.wait_connected(name)
        return number

    def wait_connected(self, name: str, connected: bool = True) -> None:
        state = "never" if connected else "still"
        polled(
            lambda: name in self.referee.connected(),
            lambda seen: seen == connected,
            lambda _: f"{name} {state} connected",
        )

    def wait_status(self, name: str, number: int, status: str) -> hosted.BotVersion:
        return polled(
            lambda: {v.number: v for v in hosted.versions(self.storage.engine, name)}[number],
            lambda found: found.status == status,
            lambda found: f"{name} v{number} is {found.status}: {found}",
        )

    def wait_no_sandbox(self) -> None:
        """Wait until no process of the sandboxes' user is left (each idle bot stopped)."""
        polled(
            lambda: sandbox_processes(str(self.workdir)),
            lambda left: not left,
            lambda left: f"sandboxed processes left: {left}",
        )

    def match(
        self,
        *bots: str,
        game: str = "straight",
        move_ms: int = 2_000,
        policy: pb.FaultPolicy.ValueType = pb.FAULT_POLICY_FORFEIT,
        seed: int = 3,
    ) -> admin_pb.RunMatchResponse:
        """Play one deal of ``game`` between ``bots`` (seat 0 first) and return the answer."""
        request = admin_pb.RunMatchRequest(
            game=game_to_proto(make_game(game)),
            bots=bots,
            has_seed=True,
            seed=seed,
            time_control=pb.TimeControl(move_ms=move_ms, bank_ms=0, grace_ms=200),
            fault_policy=policy,
            max_deals=1,
        )
        response: admin_pb.RunMatchResponse = self.referee.admin.RunMatch(request, timeout=WAIT * 3)
        return response

    def log(self, match_id: str, bot: str) -> hosted.MatchLog:
        """The kept log of ``bot`` in ``match_id`` (the runner stores it just after the end)."""
        logs = polled(
            lambda: {log.bot: log for log in hosted.match_logs(self.storage.engine, match_id)},
            lambda logs: bot in logs,
            lambda logs: f"no log of {bot} in {match_id}: {sorted(logs)}",
        )
        return logs[bot]
