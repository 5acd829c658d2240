"""The light install (``pip install domino-arena``) does every client job (docs/admin.md).

Every command runs in a subprocess that sees only the light install's packages
(tests/fakes/light_install.py: the server extra, the dev tools and their dependencies are
unimportable there). The referee is ``serve`` with the whole install, as an organizer runs it;
a student's commands (``bot register``, ``bot run``, ``check``, ``practice``, ``match run``) and
the admin client's go to it from the light side. A command that reads a database or serves
refuses in one line that names the extra, never a package it happens to import first.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

from domino_arena.server.cli.main import COMMANDS, SERVER_COMMANDS
from tests.fakes.light_install import blocked_modules, light_env
from tests.fakes.processes import Process, command, served_port

ADMIN_TOKEN: Final = "light-admin-token"
REFUSAL: Final = (
    "reads a database or serves, so it needs the server extra: pip install 'domino-arena[server]'"
)

_EVERY_HELP: Final = """
import contextlib, io, json, sys
from domino_arena.server.cli.main import main
answers = {}
for line in sys.argv[1:]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(line.split())
    answers[line] = [code, err.getvalue()]
print(json.dumps(answers))
"""


def test_the_hook_blocks_the_server_extra_and_keeps_the_light_packages() -> None:
    blocked = blocked_modules()
    for server_only in ("sqlalchemy", "trio", "outcome", "alembic", "starlette", "uvicorn"):
        assert server_only in blocked
    for light in ("grpc", "google", "rich", "domino_arena"):
        assert light not in blocked


def test_every_client_command_starts_and_every_server_one_names_the_extra(
    tmp_path: Path,
) -> None:
    lines = [f"{c.name} --help" for c in COMMANDS]
    lines += ["bot run --help", "bot register --help", "match run --help"]
    database = {
        "bot add x": "bot add",
        "verify t1 --db sqlite:///x.db": "verify --db",
        "analyse m1 --db sqlite:///x.db": "analyse",
    }
    lines += list(database)
    code, output = Process(
        [sys.executable, "-c", _EVERY_HELP, *lines], tmp_path, light_env(tmp_path / "hook")
    ).finish()
    assert code == 0, output
    answers: dict[str, list[object]] = json.loads(output.splitlines()[-1])
    for line, (status, err) in answers.items():
        name = line.split()[0]
        if name in SERVER_COMMANDS or line in database:
            what = database.get(line, name)
            assert status == 2, (line, err)
            assert err == f"domino-arena: error: '{what}' {REFUSAL}\n"
        else:
            assert (status, err) == (0, ""), (line, err)


@dataclass
class Served:
    folder: Path
    port: int
    server: Process
    env: dict[str, str]

    def light(self, *args: str, admin: bool = True) -> tuple[int, str]:
        """Run a command on the light install against the referee; its status and output."""
        full = [*args, "--server", f"127.0.0.1:{self.port}"]
        if admin:
            full += ["--admin-token", ADMIN_TOKEN]
        return Process(command(*full), self.folder, self.env, wait=120).finish()

    def token(self, *args: str, admin: bool = True) -> str:
        """Run a command that prints a secret on its last line; return the secret."""
        code, output = self.light(*args, admin=admin)
        assert code == 0, output
        return output.splitlines()[-1]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("light")
    db = f"sqlite:///{folder / 'arena.db'}"
    server = Process(
        command("serve", "--port", "0", "--db", db, "--admin-token", ADMIN_TOKEN, "--no-web"),
        folder,
    )
    try:
        yield Served(folder, served_port(server), server, light_env(folder / "hook"))
    finally:
        server.stop()


def test_a_students_client_jobs_run_on_the_light_install(served: Served) -> None:
    code, output = served.light("course", "create", "cs101")
    assert code == 0, output
    invite = served.token("invite", "create", "--course", "cs101", "--count", "1")
    token = served.token("bot", "register", "mine", "--invite", invite, admin=False)
    rival = served.token("bot", "create", "rival", "--course", "cs101")
    players = [
        Process(
            command("bot", "run", name, "--server", f"127.0.0.1:{served.port}", "--token", secret),
            served.folder,
            served.env,
        )
        for name, secret in (("mine", token), ("rival", rival))
    ]
    try:
        for player in players:
            player.wait_line("welcomed by", context=[served.server])
        code, output = served.light("check", "mine", "--games", "straight", "--positions", "2")
        assert code == 0 and "connected bot 'mine': PASSED" in output, output
        code, output = served.light("practice", "mine", "straight", "--against", "random")
        assert code == 0 and "(unrated)" in output, output
        code, output = served.light(
            "match", "run", "straight", "--bots", "mine,rival", "--course", "cs101"
        )
        assert code == 0 and "seat 1 rival" in output, output
        code, output = served.light("matches", "--bot", "rival")
        assert code == 0 and "mine, rival" in output, output
        code, output = served.light("bot", "list")
        assert code == 0 and "cs101" in output, output
        code, output = served.light("matches", "--bot", "rival", "--json")
        assert code == 0, output
        match_id = json.loads(output)["matches"][0]["match_id"]
        code, output = served.light("analyse", match_id, "--seat", "0", "--precision", "5")
        assert code == 0 and f"match {match_id}: queued for the referee's" in output, output
    finally:
        for player in players:
            player.stop()
