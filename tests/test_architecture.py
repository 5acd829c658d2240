"""The layering DESIGN.md decisions 2 and 3 promise, pinned so a stray import fails CI.

The rules engine is what bot authors import into their own processes, and the referee trusts it
to be pure: it must pull in no network, concurrency or database module, and the SDK must never
depend on the server.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Final

from domino_arena.sdk import rules

ROOT: Final = Path(__file__).resolve().parent.parent
SDK: Final = ROOT / "sdk"
FORBIDDEN_IN_RULES: Final = ("grpc", "asyncio", "trio", "socket", "sqlite3", "sqlalchemy")

RULES_API: Final = (
    "CHANCE",
    "DEAL",
    "DOUBLE_SIX",
    "DRAW",
    "GAMES",
    "NO_TRUMP",
    "PASS",
    "TERMINAL",
    "TRUMP_DOUBLES",
    "Action",
    "Bid",
    "Deal",
    "Discard",
    "DoublesGame",
    "DoublesObservation",
    "DoublesState",
    "Draw",
    "Game",
    "GameOptionError",
    "GameOverError",
    "GameState",
    "HandEnd",
    "HandResult",
    "IllegalActionError",
    "InvalidActionError",
    "LineObservation",
    "LogEntry",
    "MoonGame",
    "MoonObservation",
    "MoonState",
    "Observation",
    "OpenEnd",
    "Outcome",
    "Pass",
    "PassingGame",
    "PassingObservation",
    "PassingState",
    "Phase",
    "Play",
    "PositionError",
    "RulesError",
    "StraightGame",
    "StraightLayout",
    "StraightObservation",
    "StraightState",
    "Tile",
    "Trick",
    "Trump",
    "configurations",
    "game_options",
    "make_game",
    "parse_action",
    "parse_tiles",
    "perft",
    "pip_total",
)
"""The public names of ``domino_arena.sdk.rules``; change this list only on purpose."""

_PROBE: Final = """
import json, sys
before = set(sys.modules)
import domino_arena.sdk.rules
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_rules_import_no_io_or_concurrency_module() -> None:
    """DESIGN.md decision 3: importing the engine loads none of the forbidden modules."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    loaded: list[str] = json.loads(out)
    assert any(name.startswith("domino_arena.sdk.rules") for name in loaded), loaded
    bad = sorted(
        name
        for name in loaded
        if name.split(".")[0] in FORBIDDEN_IN_RULES or name.split(".")[0] == "_asyncio"
    )
    assert not bad, f"importing domino_arena.sdk.rules loaded {bad}"


def test_rules_sources_import_only_the_standard_library() -> None:
    """Every import in sdk/rules is relative (the package itself) or from the standard library."""
    for path in sorted((SDK / "rules").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names, f"{path.name} imports {name}"
                assert top not in FORBIDDEN_IN_RULES, f"{path.name} imports {name}"


def _imported_modules(path: Path) -> list[str]:
    """The absolute names ``path`` imports, relative imports resolved against the sdk package."""
    package = ["domino_arena", *path.relative_to(ROOT).parent.parts]
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.append(module)
            names += [f"{module}.{alias.name}" for alias in node.names]
    return names


def test_sdk_never_imports_the_server() -> None:
    """DESIGN.md section 3: the SDK is what bot authors install; the server depends on it."""
    files = sorted(SDK.rglob("*.py"))
    assert files
    for path in files:
        for name in _imported_modules(path):
            assert not name.startswith(("domino_arena.server", "server")), (
                f"{path.relative_to(ROOT)} imports {name}"
            )


def test_sdk_import_does_not_load_the_server() -> None:
    probe = "import sys, domino_arena.sdk, domino_arena.sdk.bot, domino_arena.sdk.rules\n"
    probe += "print(sorted(m for m in sys.modules if m.startswith('domino_arena.server')))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out.strip() == "[]", out


def test_rules_public_api_is_pinned() -> None:
    """``__all__`` is exactly the pinned list and every name resolves."""
    assert sorted(rules.__all__) == sorted(RULES_API)
    for name in rules.__all__:
        assert getattr(rules, name, None) is not None, f"{name} is in __all__ but not defined"
