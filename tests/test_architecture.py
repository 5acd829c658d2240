"""The layering docs/architecture.md promises (docs/decisions.md: decisions 2 and 3),
pinned so a stray import fails CI.

The rules engine is what bot authors import into their own processes, and the referee trusts it
to be pure: it must pull in no network, concurrency or database module, and the SDK must never
depend on the server.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final, get_args, get_origin, get_type_hints

import sqlalchemy as sa

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
    "SPECTATOR",
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
    """docs/decisions.md, decision 3: importing the engine loads none of the forbidden modules."""
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
    """docs/architecture.md: the SDK is what bot authors install; the server depends on it."""
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


# -- the server's layers (issue 8): what each folder may import ------------------------------------

SOURCE_ROOTS: Final = {"sdk": ROOT / "sdk", "server": ROOT / "server", "bots": ROOT / "bots"}

HOSTING_ABOVE_THE_STORE: Final = tuple(
    f"domino_arena.server.hosting.{name}"
    for name in ("runner", "validator", "sandbox", "bundles", "match_logs")
)
"""The modules of server/hosting that use the store; its spec/ is beneath the store."""

MAY_NOT_IMPORT: Final = {
    "domino_arena.sdk": ("domino_arena.server", "domino_arena.bots"),
    "domino_arena.bots": ("domino_arena.server",),
    "domino_arena.server.store": (
        "domino_arena.server.tournaments.lifecycle",
        *HOSTING_ABOVE_THE_STORE,
        "domino_arena.server.analysis.service",
        "domino_arena.server.ladder",
        "domino_arena.server.stats",
        "domino_arena.server.play",
        "domino_arena.server.net",
        "domino_arena.server.web",
        "domino_arena.server.cli",
        "domino_arena.server.app",
    ),
    "domino_arena.server.hosting.spec": (
        "domino_arena.server.store",
        "domino_arena.server.ladder",
        "domino_arena.server.stats",
        "domino_arena.server.play",
        "domino_arena.server.net",
        "domino_arena.server.web",
        "domino_arena.server.cli",
        "domino_arena.server.app",
        *HOSTING_ABOVE_THE_STORE,
    ),
    "domino_arena.server.tournaments": (
        "domino_arena.server.tournaments.lifecycle",
        "domino_arena.server.store",
        "domino_arena.server.ladder",
        "domino_arena.server.play",
        "domino_arena.server.net",
        "domino_arena.server.web",
        "domino_arena.server.cli",
        "domino_arena.server.app",
        *HOSTING_ABOVE_THE_STORE,
    ),
    "domino_arena.server.tournaments.lifecycle": (
        "domino_arena.server.net",
        "domino_arena.server.web",
        "domino_arena.server.cli",
        "domino_arena.server.app",
    ),
    "domino_arena.server.hosting": (
        "domino_arena.server.tournaments.lifecycle",
        "domino_arena.server.ladder",
        "domino_arena.server.stats",
        "domino_arena.server.play",
        "domino_arena.server.net",
        "domino_arena.server.web",
        "domino_arena.server.cli",
        "domino_arena.server.app",
    ),
    "domino_arena.server.ladder": (
        "domino_arena.server.tournaments.lifecycle",
        "domino_arena.server.stats",
        "domino_arena.server.net",
        "domino_arena.server.web",
        "domino_arena.server.cli",
        "domino_arena.server.app",
    ),
    "domino_arena.server.stats": (
        "domino_arena.server.tournaments.lifecycle",
        "domino_arena.server.play",
        "domino_arena.server.net",
        "domino_arena.server.web",
        "domino_arena.server.cli",
        "domino_arena.server.app",
    ),
    "domino_arena.server.play": (
        "domino_arena.server.tournaments.lifecycle",
        "domino_arena.server.stats",
        "domino_arena.server.net",
        "domino_arena.server.web",
        "domino_arena.server.cli",
        "domino_arena.server.app",
    ),
    "domino_arena.server.net": (
        "domino_arena.server.web",
        "domino_arena.server.cli",
        "domino_arena.server.app",
    ),
    "domino_arena.server.analysis": (
        "domino_arena.server.store",
        "domino_arena.server.ladder",
        "domino_arena.server.stats",
        "domino_arena.server.tournaments",
        "domino_arena.server.hosting",
        "domino_arena.server.play",
        "domino_arena.server.net",
        "domino_arena.server.web",
        "domino_arena.server.cli",
        "domino_arena.server.app",
    ),
    "domino_arena.server.analysis.service": (
        "domino_arena.server.tournaments.lifecycle",
        "domino_arena.server.play",
        "domino_arena.server.net",
        "domino_arena.server.web",
        "domino_arena.server.cli",
        "domino_arena.server.app",
    ),
    "domino_arena.server.web": (
        "domino_arena.server.tournaments.lifecycle",
        "domino_arena.server.play",
        "domino_arena.server.net",
        "domino_arena.server.cli",
        "domino_arena.server.app",
        "domino_arena.bots",
    ),
}
"""For each package, the packages it must not import: the layers point one way only, from the
command line down through the composition root, the network edge, a tournament's lifecycle,
play, the ladder and storage, to the SDK. The statistics (pure numbers over stored results) sit
beside the ladder: the lifecycle's comparisons stop on their SPRT. The web face sits beside
the lifecycle, play and net: it reads storage, the ladder, the statistics and the pure formats
only. A rule binds every module of its package, less those of a subpackage in
:data:`ABOVE_THEIR_PARENT`."""

ABOVE_THEIR_PARENT: Final = (
    "domino_arena.server.tournaments.lifecycle",
    "domino_arena.server.analysis.service",
)
"""Subpackages that are a layer above the package holding them, so only their own rule binds
them: a tournament's lifecycle runs the pure formats of server/tournaments with play, the
ladder and the store, which the pure package may not import; the analysis' service runs the
pure analysis in worker processes and keeps its results in the store (docs/architecture.md)."""


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _rules_of(module: str) -> list[tuple[str, ...]]:
    """The forbidden prefixes that bind ``module``: its packages' rules (module doc)."""
    return [
        forbidden
        for package, forbidden in MAY_NOT_IMPORT.items()
        if _within(module, package)
        and not any(
            _within(module, sub) and sub != package and _within(sub, package)
            for sub in ABOVE_THEIR_PARENT
        )
    ]


HOUSE_BOT_IMPORTERS: Final = (
    "domino_arena.bots",
    "domino_arena.server.cli",
    "domino_arena.server.analysis",
)
"""Only the command line (and the main job in it) seats house bots; the referee never does.
The analysis uses the search bot's parts, not its seat: its deal sampler and its playouts
(the same honest view of a decision the search bot has, docs/analysis.md)."""

GRPC_IMPORTERS: Final = (
    "domino_arena.server.net",
    "domino_arena.server.cli",
    "domino_arena.sdk.client",
    "domino_arena.sdk.stdio.relay",
)
"""The modules that may speak gRPC: the network edge, the command line's admin client, the
SDK's client and the stdio relay (a referee's stream to a child over stdio)."""

MAX_MODULE_LINES: Final = 550
"""About 500 lines: a module longer than this has more than one job."""


def _modules() -> dict[str, Path]:
    """Every first-party source module by its import name (generated protocol code excluded)."""
    found: dict[str, Path] = {}
    for top, folder in SOURCE_ROOTS.items():
        for path in folder.rglob("*.py"):
            parts = [top, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(["domino_arena", *parts])] = path
    return found


def _package(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _first_party_imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The first-party modules ``path`` imports (``from pkg import name`` counts as ``pkg``
    unless ``name`` is itself a module)."""
    found: set[str] = set()
    for imported in _imported_modules(path):
        name = imported
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name:
            found.add(name)
    return found


def _import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {module: _first_party_imports(path, modules) for module, path in modules.items()}


def test_layers_import_only_downwards() -> None:
    graph = _import_graph()
    bad = [
        f"{module} imports {target}"
        for module, targets in graph.items()
        for target in targets
        for forbidden in _rules_of(module)
        if target.startswith(forbidden)
    ]
    assert not bad, "\n".join(bad)


def test_only_the_command_line_imports_house_bots() -> None:
    graph = _import_graph()
    bad = [
        f"{module} imports {target}"
        for module, targets in graph.items()
        for target in targets
        if target.startswith("domino_arena.bots") and not module.startswith(HOUSE_BOT_IMPORTERS)
    ]
    assert not bad, "\n".join(bad)


def test_only_the_network_edge_imports_grpc() -> None:
    bad = []
    for module, path in _modules().items():
        if module.startswith(GRPC_IMPORTERS):
            continue
        for name in _imported_modules(path):
            if name.split(".")[0].startswith("grpc") or name.endswith("_pb2_grpc"):
                bad.append(f"{module} imports {name}")
    assert not bad, "\n".join(bad)


NATS_IMPORTERS: Final = ("domino_arena.server.net.cluster",)
"""The broker is the cluster transport's business alone: the roles' composition roots get it
through server/net/cluster, and nothing else knows a cluster exists."""


def test_only_the_cluster_transport_imports_nats() -> None:
    bad = [
        f"{module} imports {name}"
        for module, path in _modules().items()
        if not module.startswith(NATS_IMPORTERS)
        for name in _imported_modules(path)
        if name.split(".")[0] == "nats"
    ]
    assert not bad, "\n".join(bad)


def test_no_import_cycles_between_packages() -> None:
    """Tarjan's strongly connected components over the package graph: every one is a single
    package, so each folder can be read (and tested) knowing only those below it."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, targets in _import_graph().items():
        source = _package(module, modules[module])
        edges = graph.setdefault(source, set())
        for target in targets:
            package = _package(target, modules[target])
            if package != source and not source.startswith(package + "."):
                edges.add(package)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert not cycles, f"packages that import each other: {cycles}"


def test_no_module_is_over_about_500_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in _modules().values()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by job): {long}"


# -- the store only writes: it runs no step of the layers above it (issue 31) ------------------

STORE: Final = "domino_arena.server.store"
STORE_SKIPPED: Final = (f"{STORE}.migrations",)
"""Alembic's environment and revisions run inside Alembic, not as the store's API."""


def _takes_a_connection(hint: object) -> bool:
    """Whether ``hint`` is (or holds, in a union or an alias) a callable given a connection."""
    if get_origin(hint) is Callable:
        arguments = get_args(hint)
        if arguments and isinstance(arguments[0], list):
            return any(_takes_a_connection_type(argument) for argument in arguments[0])
    return any(_takes_a_connection(argument) for argument in get_args(hint))


def _takes_a_connection_type(argument: object) -> bool:
    return isinstance(argument, type) and issubclass(argument, sa.Connection)


def _store_callables() -> list[tuple[str, Callable[..., object]]]:
    """Every public function and public method defined in server/store, by qualified name."""
    found: list[tuple[str, Callable[..., object]]] = []
    for name in sorted(_modules()):
        if not name.startswith(STORE) or name.startswith(STORE_SKIPPED):
            continue
        module = importlib.import_module(name)
        for attribute, value in vars(module).items():
            if attribute.startswith("_") or getattr(value, "__module__", None) != name:
                continue
            if inspect.isfunction(value):
                found.append((f"{name}.{attribute}", value))
            elif inspect.isclass(value):
                found += [
                    (f"{name}.{attribute}.{method}", function)
                    for method, function in vars(value).items()
                    if inspect.isfunction(function)
                    and (not method.startswith("_") or method == "__init__")
                ]
    return found


def test_the_store_runs_no_step_of_its_callers_in_its_transactions() -> None:
    """Saving a finished match goes downward: the ladder holds the transaction, has the store
    insert the rows (``matches.insert_batch``) and rates them itself. No function of the store
    takes a callable that it would hand a connection (a step of a caller run inside the
    store's transaction, as ``save_many(engine, batch, rate)`` once did)."""
    callables = _store_callables()
    assert any(name.endswith("matches.insert_batch") for name, _ in callables)
    bad = [
        f"{name}({parameter})"
        for name, function in callables
        for parameter, hint in get_type_hints(function).items()
        if parameter != "return" and _takes_a_connection(hint)
    ]
    assert not bad, f"store functions that call back into a caller's step: {bad}"


# -- the project's own record (docs/decisions.md: decision 23) -------------------------------------

OUTSIDE_DOCUMENTS: Final = re.compile(
    r"DESIGN\.md|\.\./shared/|(?<![\w./-])research[/]|(?<![\w./-])RULES\.md"
)
"""Citations of documents that live outside the repository: the design notes, the shared folder
beside the checkout, the research notes, the rule book by its outside name (the repository's
copy is docs/rules.md). What the code relies on is in docs/ instead."""

CITED_DOC: Final = re.compile(r"(?<![\w./-])docs/([\w-]+)\.md")
"""A citation of one of the repository's own documents, ``docs/<name>.md``."""

NOT_CITING: Final = ("proto/released/", "_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi")
"""Tracked files that are not prose: released protocol images and generated protocol code."""

IMAGES: Final = (".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp")


def _tracked_text_files() -> list[Path]:
    """Every regular text file git tracks, less images, generated code and released protocols."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], capture_output=True, check=True, cwd=ROOT
    ).stdout.decode()
    files = []
    for name in sorted(filter(None, listed.split("\0"))):
        path = ROOT / name
        if name.endswith(NOT_CITING) or name.startswith(NOT_CITING) or name.endswith(IMAGES):
            continue
        if path.is_symlink() or not path.is_file():
            continue
        files.append(path)
    return files


def _lines(path: Path) -> list[str]:
    data = path.read_bytes()
    if b"\0" in data:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def test_no_file_cites_a_document_outside_the_repository() -> None:
    """Code, tests and docs cite docs/ (decisions.md, rules.md...), never a file beside the
    checkout that a reader of the repository cannot open."""
    files = _tracked_text_files()
    assert any(path.name == "decisions.md" for path in files), "docs/decisions.md is not tracked"
    bad = [
        f"{path.relative_to(ROOT)}:{number}: cites {found.group()!r}, which is outside the "
        f"repository; cite the docs/ file that holds the point (docs/decisions.md for a decision)"
        for path in files
        for number, line in enumerate(_lines(path), start=1)
        for found in OUTSIDE_DOCUMENTS.finditer(line)
    ]
    assert not bad, "\n".join(bad)


def test_every_cited_docs_file_exists() -> None:
    docs = {path.stem for path in (ROOT / "docs").glob("*.md")}
    bad = [
        f"{path.relative_to(ROOT)}:{number}: cites docs/{found.group(1)}.md, which does not "
        f"exist; docs/ holds {', '.join(sorted(docs))}"
        for path in _tracked_text_files()
        for number, line in enumerate(_lines(path), start=1)
        for found in CITED_DOC.finditer(line)
        if found.group(1) not in docs
    ]
    assert not bad, "\n".join(bad)
