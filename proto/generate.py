"""Regenerate the Python code and typed stubs of the protocol from the .proto files.

    python proto/generate.py            # rewrite proto/domino_arena/v1/*_pb2*.py{,i}
    python proto/generate.py --out DIR  # write them under DIR instead (the staleness test)

The generated files are committed next to the .proto files they come from, and the package
``domino_arena.v1`` maps to that folder (pyproject.toml), so the import paths protoc writes,
``from domino_arena.v1 import games_pb2``, work as they are. Pinned grpcio-tools and
mypy-protobuf versions (the ``dev`` extra) make the output reproducible.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grpc_tools import protoc

HERE = Path(__file__).resolve().parent
SOURCES = sorted((HERE / "domino_arena" / "v1").glob("*.proto"))


def generate(out: Path) -> None:
    """Write the generated code for every .proto file into ``out`` (mirroring the tree)."""
    include = Path(protoc.__file__).parent / "_proto"
    scripts = Path(sys.executable).parent  # mypy-protobuf's plugins sit beside this Python
    args = [
        "grpc_tools.protoc",
        f"--plugin=protoc-gen-mypy={scripts / 'protoc-gen-mypy'}",
        f"--plugin=protoc-gen-mypy_grpc={scripts / 'protoc-gen-mypy_grpc'}",
        f"-I{HERE}",
        f"-I{include}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        f"--mypy_out={out}",
        f"--mypy_grpc_out={out}",
        *(str(p.relative_to(HERE)) for p in SOURCES),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="output root (default: proto/)")
    generate(parser.parse_args().out)


if __name__ == "__main__":
    sys.exit(main())
