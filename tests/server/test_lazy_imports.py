"""What a referee imports: only what it runs (issue 14, memory per bot).

The packages below cost a referee memory it never uses while it serves: Alembic and Mako
(about 12 MiB) are for migrating a database, NumPy and SciPy (about 55 MiB) for the batch fit
of the official standings, the analysis engine for its worker processes, rich for the command
line's tables, Starlette and Jinja2 for the web face (its own process), cryptography for
signing records (only with ``--record-key``). So ``domino-arena serve`` on a database at the
newest revision must start, serve and stop without importing any of them; the test runs the
real command in a subprocess and reads its ``sys.modules`` after the shutdown. Nor does a
referee on SQLite load SQLAlchemy's PostgreSQL dialect or a PostgreSQL driver (issue 34: about
2.5 MiB).

The web face's child process (``domino-arena web``) serves pages, not bots: it starts without
the referee (gRPC's server, trio, the cluster's NATS client) and without NumPy and SciPy, which
its standings pages import when one is first asked for (issue 34: about 50 MiB).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Final

import sqlalchemy as sa
from alembic import command

from domino_arena.server.store import migrations
from domino_arena.server.store.storage import Storage

ROOT: Final = Path(__file__).resolve().parents[2]

NOT_FOR_SERVING: Final = (
    "alembic",
    "mako",
    "numpy",
    "scipy",
    "threadpoolctl",
    "rich",
    "pygments",
    "starlette",
    "jinja2",
    "uvicorn",
    "cryptography",  # only with --record-key (server/play/record_signing.py)
    "nats",  # a cluster's gateway or match host only (server/cli/serve.py, server/app.py)
    "domino_arena.server.analysis.evaluate",  # the analysis engine: in its worker processes
    "domino_arena.server.analysis.match",
)

POSTGRESQL: Final = ("sqlalchemy.dialects.postgresql", "psycopg", "psycopg2", "asyncpg")
"""A database's dialect and driver: none of them for a SQLite URL."""

NOT_FOR_THE_WEB_FACE: Final = (
    "numpy",
    "scipy",
    "threadpoolctl",
    "trio",
    "nats",
    "domino_arena.server.app",
    "domino_arena.server.net.grpc_server",
    "domino_arena.server.analysis.evaluate",
    *POSTGRESQL,
)
"""What the web face's child must not import to start: fits, the referee, the analysis
engine, PostgreSQL."""

# The referee stops itself (SIGTERM, as an operator would) once it says it serves; then the
# probe prints every top-level package it imported.
_PROBE: Final = """
import json, os, signal, sys
from domino_arena.server.cli.main import main

class Watch:
    def __init__(self, out):
        self.out = out
    def write(self, text):
        if "serving on" in text:
            os.kill(os.getpid(), signal.SIGTERM)
        return self.out.write(text)
    def __getattr__(self, name):
        return getattr(self.out, name)

real = sys.stdout
sys.stdout = Watch(real)
code = main(sys.argv[1:])
sys.stdout = real
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

# The web face's child as ``domino-arena web`` starts it, up to the point where uvicorn would
# serve: the database opened and the application built.
_WEB_PROBE: Final = """
import json, sys
from domino_arena.server.cli import web
from domino_arena.server.cli.storage_open import open_storage
from domino_arena.server.tournaments.lifecycle import games_of

storage = open_storage(sys.argv[1])
app = web.create_app(storage, tournament_total=lambda t: len(games_of(t, storage)))
storage.close()
print(json.dumps({"code": 0, "modules": sorted(sys.modules)}))
"""


def _modules_of(probe: str, argv: list[str]) -> tuple[int, set[str], str]:
    """Run ``probe`` in a fresh interpreter; its exit code, every module it imported (full
    dotted names and their top-level packages) and its output."""
    done = subprocess.run(
        [sys.executable, "-c", probe, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "{}"
    answer = json.loads(last) if last.startswith("{") else {}
    names = set(answer.get("modules", ()))
    return (
        answer.get("code", -1),
        names | {m.split(".")[0] for m in names},
        done.stdout + done.stderr,
    )


def _serve_modules(url: str) -> tuple[int, set[str], str]:
    argv = ["serve", "--port", "0", "--db", url, "--admin-token", "t", "--no-web"]
    return _modules_of(_PROBE, argv)


def test_a_referee_on_a_migrated_database_imports_nothing_it_does_not_serve_with(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'referee.db'}"
    storage = Storage(url)
    storage.open()  # created and migrated here, in this process
    storage.close()
    code, modules, output = _serve_modules(url)
    assert code == 0, output
    assert {"grpc", "sqlalchemy", "trio"} <= modules, output  # it did serve
    assert not modules & set(NOT_FOR_SERVING), sorted(modules & set(NOT_FOR_SERVING))
    assert "sqlalchemy.dialects.sqlite" in modules, output  # the names are full module names
    assert not modules & set(POSTGRESQL), sorted(modules & set(POSTGRESQL))


def test_the_web_face_starts_without_the_referee_the_fits_or_postgresql(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'web.db'}"
    storage = Storage(url)
    storage.open()
    storage.close()
    code, modules, output = _modules_of(_WEB_PROBE, [url])
    assert code == 0, output
    assert {"starlette", "jinja2", "domino_arena.server.web.standings"} <= modules, output
    assert not modules & set(NOT_FOR_THE_WEB_FACE), sorted(modules & set(NOT_FOR_THE_WEB_FACE))


def test_a_referee_on_an_old_database_migrates_it_with_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'referee.db'}"
    storage = Storage(url)
    storage.open()
    with storage.engine.connect() as connection:  # one revision behind: the newest must run
        command.downgrade(migrations.config(connection), "0007")
    storage.close()
    code, modules, output = _serve_modules(url)
    assert code == 0, output
    assert "alembic" in modules
    again = Storage(url)
    again.open()
    try:
        assert again.schema_version() == migrations.newest()
        assert sa.inspect(again.engine).has_table("invites")
    finally:
        again.close()


def test_the_newest_revision_by_file_name_is_alembics_head() -> None:
    assert migrations.newest() == migrations.head()
