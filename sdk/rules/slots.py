"""Building frozen slots dataclasses and copying slots states without their slow paths.

``apply`` copies a state and makes a log entry on every move, and ``observe`` makes an
observation. A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``;
the slot descriptors' own setters do the same at a fraction of the cost, so the engine makes
its per-move objects with ``object.__new__`` and the setters :func:`slot_setter` returns, in
plain functions written out per class (no generated code).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

new_object: Final = object.__new__
"""``new_object(cls)``: an instance with no slot set yet, filled by the setters below."""


def slot_setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """Return the setter of the slot ``name`` of ``cls``: ``set(instance, value)``.

    It writes a frozen dataclass's field, which only its construction may do.
    """
    setter: Callable[[Any, Any], None] = getattr(cls, name).__set__
    return setter


def all_slots(cls: type) -> tuple[str, ...]:
    """Every slot of ``cls`` and its bases (tests check a copy carries each)."""
    names: list[str] = []
    for klass in cls.__mro__:
        for name in klass.__dict__.get("__slots__", ()):
            if name not in names:
                names.append(name)
    return tuple(names)
