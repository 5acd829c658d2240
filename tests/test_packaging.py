"""Every package folder is shipped: pyproject.toml lists packages
explicitly (docs/decisions.md: decision 2).

The editable install finds new folders by itself, so a folder missing from the list would work
here and vanish from a wheel; this test catches it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed_in_pyproject() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    found: set[str] = set()
    for package, folder in setuptools["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *relative)))
    assert found == listed, f"missing from pyproject: {found - listed}; stale: {listed - found}"
