"""The light install (``pip install domino-arena``, no extra) for a subprocess of a test.

The test venv holds every extra, so a command that needs the server's packages would work here
and fail on a student's machine. :func:`light_env` makes every package outside the light
install unimportable in a child process: it writes a ``sitecustomize.py`` that puts an import
hook first on ``sys.meta_path``, and returns the environment that loads it (``PYTHONPATH``).

What the light install holds is read from pyproject.toml (``[project].dependencies``) and
followed through the installed packages' own requirements, so a dependency added to or moved out
of the server extra changes what is blocked without touching this file. Everything else
installed (the server extra, the dev tools and their dependencies, e.g. trio's ``outcome``) is
blocked: an ``import`` of it raises :class:`ModuleNotFoundError` as on a machine without it.
Used by tests/cli/test_light_install.py; a test of students on the light install uses it too:

    env = light_env(tmp_path)
    Process(command("bot", "run", ...), cwd=tmp_path, env=env)
"""

from __future__ import annotations

import functools
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Final

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT: Final = Path(__file__).resolve().parents[2]

_HOOK: Final = '''"""Written by tests/fakes/light_install.py: the light install's packages only."""

import sys

BLOCKED = frozenset({blocked!r})


class LightInstall:
    """Refuse every top-level package outside the light install, as if it were not there."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        top = name.partition(".")[0]
        if top in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{top!r}}", name=top)
        return None


for _loaded in [name for name in sys.modules if name.partition(".")[0] in BLOCKED]:
    del sys.modules[_loaded]  # imported by a .pth file before this hook was installed
sys.meta_path.insert(0, LightInstall)
'''


def _requirements(distribution: str) -> list[str]:
    """The names of ``distribution``'s unconditional requirements (no extra), installed or not."""
    try:
        required = metadata.requires(distribution) or []
    except metadata.PackageNotFoundError:
        return []
    names: list[str] = []
    for text in required:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            names.append(canonicalize_name(requirement.name))
    return names


@functools.cache
def light_distributions() -> frozenset[str]:
    """The distributions of the light install: domino-arena, the dependencies pyproject.toml
    lists outside any extra, and theirs (canonical names)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    todo: list[str] = [canonicalize_name(Requirement(t).name) for t in project["dependencies"]]
    found: set[str] = {canonicalize_name(project["name"])}
    while todo:
        name = todo.pop()
        if name not in found:
            found.add(name)
            todo.extend(_requirements(name))
    return frozenset(found)


@functools.cache
def blocked_modules() -> frozenset[str]:
    """The top-level import names that only installed distributions outside the light install
    provide (never a standard library module, never one a light distribution shares)."""
    light = light_distributions()
    return frozenset(
        module
        for module, distributions in metadata.packages_distributions().items()
        if module not in sys.stdlib_module_names
        and module.isidentifier()
        and not any(canonicalize_name(d) in light for d in distributions)
    )


def light_env(folder: Path) -> dict[str, str]:
    """Write the import hook into ``folder`` and return the environment variables with which a
    child Python process (``domino-arena``, ``python -m ...``) sees only the light install."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(_HOOK.format(blocked=sorted(blocked_modules())))
    return {"PYTHONPATH": str(folder)}
