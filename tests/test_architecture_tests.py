"""The tests' own layering: no test module imports another (issue 8, part 7).

A test module that imports another runs that module's import-time work, shares its fixtures by
accident and breaks when the other file is reorganised. Shared doubles live in ``tests/fakes/``
(and the brute-force rules in ``tests/rules/brute/``, the golden cases in
``tests/golden/cases.py``); a test module imports from there, never from a ``test_*.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
TESTS: Final = ROOT / "tests"


def module_name(path: Path) -> str:
    """The dotted name of a file under the project root: ``tests.sdk.test_local``."""
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def imported_modules(source: str, module: str) -> set[str]:
    """Every module name ``source`` (the text of ``module``) imports, relative ones resolved.

    ``from package import name`` counts ``package.name`` too, since ``name`` may be a module.
    """
    package = module.split(".")[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            imported = ".".join([*base, *([node.module] if node.module else [])])
            names.add(imported)
            names.update(f"{imported}.{alias.name}" for alias in node.names)
    return names


def is_test_module(name: str) -> bool:
    """True for a ``test_*`` module of this project's tests (where pytest finds tests)."""
    return name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")


def cross_imports(source: str, module: str) -> set[tuple[str, str]]:
    """The (importer, imported) pairs of test modules in ``source``, if it is a test module."""
    if not is_test_module(module):
        return set()
    return {
        (module, name)
        for name in imported_modules(source, module)
        if is_test_module(name) and name != module
    }


def tree_cross_imports() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path in sorted(TESTS.rglob("*.py")):
        found |= cross_imports(path.read_text(encoding="utf-8"), module_name(path))
    return found


def test_no_test_module_imports_another() -> None:
    found = tree_cross_imports()
    assert not found, "move what they share to tests/fakes/:\n" + "\n".join(
        f"{importer} imports {imported}" for importer, imported in sorted(found)
    )


def test_every_form_of_import_is_seen() -> None:
    source = "\n".join(
        [
            "import tests.sdk.test_local",
            "from tests.server.test_admin import AdminServer",
            "from .test_storage import a_match",
            "from ..sdk import test_wire_leaks",
            "from tests.fakes.bots import FirstLegal",
            "from ..fakes.seats import FakeSeat",
            "from .brute import moon",
            "from tests.golden.cases import CASES",
            "from . import conftest",
            "import pytest",
        ]
    )
    assert cross_imports(source, "tests.server.test_writer") == {
        ("tests.server.test_writer", "tests.sdk.test_local"),
        ("tests.server.test_writer", "tests.server.test_admin"),
        ("tests.server.test_writer", "tests.server.test_storage"),
        ("tests.server.test_writer", "tests.sdk.test_wire_leaks"),
    }
    assert cross_imports(source, "tests.fakes.bots") == set(), "only test modules count"
