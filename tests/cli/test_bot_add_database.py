"""``bot add`` names the database it wrote to, on stderr (stdout holds only the token)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from domino_arena.server.cli.main import main


def test_bot_add_names_the_database_it_wrote_to_on_stderr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DOMINO_ARENA_DB", raising=False)
    assert main(["bot", "add", "dora"]) == 0
    out, err = capsys.readouterr()
    assert len(out.strip()) >= 40 and "\n" not in out.strip()
    where = os.path.realpath(tmp_path / "domino-arena.db")
    assert err == (
        f"domino-arena: created bot 'dora' in the database sqlite:///domino-arena.db "
        f"(the file {where}); its token, shown only this once:\n"
    )
