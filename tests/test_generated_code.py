"""The committed protocol code must be exactly what proto/generate.py makes from the .proto files.

docs/decisions.md, decision 6: generated code and typed stubs are committed, and CI fails if they
are stale. This regenerates everything into a temporary folder with the pinned grpcio-tools and
mypy-protobuf and compares file by file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
GENERATED: Final = ROOT / "proto" / "domino_arena" / "v1"
SUFFIXES: Final = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi")


def _generated_files(folder: Path) -> dict[str, str]:
    return {
        path.name: path.read_text(encoding="utf-8")
        for path in sorted(folder.iterdir())
        if path.name.endswith(SUFFIXES)
    }


def test_committed_protocol_code_is_up_to_date(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "proto" / "generate.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    fresh = _generated_files(tmp_path / "domino_arena" / "v1")
    committed = _generated_files(GENERATED)
    assert fresh, "proto/generate.py produced nothing"
    assert sorted(fresh) == sorted(committed), "generated files differ: run proto/generate.py"
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert not stale, f"stale generated code {stale}: run `python proto/generate.py` and commit"


def test_every_proto_file_has_its_generated_code() -> None:
    protos = sorted(p.stem for p in GENERATED.glob("*.proto"))
    assert protos == ["admin", "games", "referee"]
    for stem in protos:
        for suffix in SUFFIXES:
            assert (GENERATED / f"{stem}{suffix}").exists(), f"{stem}{suffix} is missing"
