"""What a referee imports: only what it runs (issue 14, memory per bot).

The packages below cost a referee memory it never uses while it serves: Alembic and Mako
(about 12 MiB) are for migrating a database, NumPy and SciPy (about 55 MiB) for the batch fit
of the official standings, rich for the command line's tables, Starlette and Jinja2 for the
web face (its own process), cryptography for signing records (only with ``--record-key``).
So ``domino-arena serve`` on a database at the newest revision must start, serve and stop
without importing any of them; the test runs the real command in a
subprocess and reads its ``sys.modules`` after the shutdown.
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
)

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
print(json.dumps({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def _serve_modules(url: str) -> tuple[int, set[str], str]:
    argv = ["serve", "--port", "0", "--db", url, "--admin-token", "t", "--no-web"]
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "{}"
    answer = json.loads(last) if last.startswith("{") else {}
    return answer.get("code", -1), set(answer.get("modules", ())), done.stdout + done.stderr


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
