"""Compiled copy and construct functions for slots classes: the engine's per-move allocations.

``apply`` copies a state and makes a log entry on every move, and ``observe`` makes an
observation. One straight-line function per class (as ``dataclasses`` generates its methods)
does each several times faster than a loop over the slots or a frozen dataclass's ``__init__``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any, TypeVar

_T = TypeVar("_T")


def fast_constructor(cls: type[_T]) -> Callable[..., _T]:
    """Compile a constructor of the frozen slots dataclass ``cls``: every field positionally.

    A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``; the slot
    descriptors set the same values at a third of the cost. ``cls`` must have no
    ``__post_init__`` (or the caller computes what it would, as ``StraightLayout``'s does).
    """
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    sets = "".join(f"    set_{name}(made, {name})\n" for name in names)
    source = f"def make({', '.join(names)}):\n    made = new(cls)\n{sets}    return made\n"
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    namespace.update({f"set_{name}": getattr(cls, name).__set__ for name in names})
    exec(source, namespace)
    make: Callable[..., _T] = namespace["make"]
    return make


def make_cloner(cls: type) -> Callable[[Any], Any]:
    """Compile a shallow copy function for ``cls`` that assigns every slot by name."""
    names = _all_slots(cls)
    body = "\n".join(f"    copy.{name} = self.{name}" for name in names)
    source = f"def clone(self):\n    copy = new(cls)\n{body}\n    return copy\n"
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    exec(source, namespace)
    cloner: Callable[[Any], Any] = namespace["clone"]
    return cloner


def _all_slots(cls: type) -> tuple[str, ...]:
    names: list[str] = []
    for klass in cls.__mro__:
        for name in klass.__dict__.get("__slots__", ()):
            if name not in names:
                names.append(name)
    return tuple(names)
