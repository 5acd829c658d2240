"""Who is calling the admin API: the admin (every course) or one course's organizer.

:func:`caller_of` reads the call's token once, in ``AdminServicer._serve``, which keeps the
answer in :data:`CALLER` for the rest of the call (each gRPC call runs in its own asyncio task,
so the value is the call's own). Every handler asks :func:`caller` what it may see and do:

* a listing is narrowed to :meth:`Caller.listing` (the organizer's own course);
* an object found by name or id is shown only if :meth:`Caller.sees` its course, else it is
  NOT_FOUND as if it did not exist (:meth:`Caller.check_sees`), so an organizer cannot learn
  another course's tournament ids;
* a request that names another course in a field is PERMISSION_DENIED (:meth:`Caller.course_of`);
* the admin-only calls are PERMISSION_DENIED for an organizer (:meth:`Caller.require_admin`).
"""

from __future__ import annotations

import contextvars
import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

import grpc

from domino_arena.server.net.admin_requests import (
    RequestError,
    bearer_token,
    check_token,
    not_found,
)
from domino_arena.server.store.tables import DEFAULT_COURSE


@dataclass(frozen=True, slots=True)
class Caller:
    """The admin (``course`` None) or the organizer of ``course``."""

    course: str | None = None

    @property
    def is_admin(self) -> bool:
        return self.course is None

    def sees(self, course: str) -> bool:
        """Whether the caller may see (and manage) what belongs to ``course``."""
        return self.course is None or self.course == course

    def check_sees(self, course: str, what: str) -> None:
        """NOT_FOUND unless :meth:`sees` ``course``; ``what`` is the message ("no tournament
        has id 'x'"), the same as for one that does not exist."""
        if not self.sees(course):
            raise not_found(what)

    def course_of(self, requested: str, field: str = "course") -> str:
        """The course a new object goes in: ``requested``, else the organizer's own (the
        admin: the default course); PERMISSION_DENIED for an organizer naming another."""
        if self.course is None:
            return requested or DEFAULT_COURSE
        if requested and requested != self.course:
            raise denied(
                f"{field}: the organizer token of course '{self.course}' cannot act in "
                f"course '{requested[:80]}'"
            )
        return self.course

    def listing(self, requested: str, field: str = "course") -> str | None:
        """Which course a listing shows: ``requested`` (the admin: None, every course, when
        empty); an organizer always its own (PERMISSION_DENIED for another)."""
        if self.course is None:
            return requested or None
        return self.course_of(requested, field)

    def require_admin(self, call: str) -> None:
        """PERMISSION_DENIED for an organizer: ``call`` needs the admin token."""
        if self.course is not None:
            raise denied(f"{call} needs the admin token; an organizer token cannot make this call")


def denied(message: str) -> RequestError:
    return RequestError(grpc.StatusCode.PERMISSION_DENIED, message)


CALLER: Final[contextvars.ContextVar[Caller]] = contextvars.ContextVar("admin_caller")


def caller() -> Caller:
    """The caller of the admin call being served (set by ``AdminServicer._serve``)."""
    try:
        return CALLER.get()
    except LookupError:  # pragma: no cover - a handler reached without _serve
        raise RuntimeError("caller() outside an admin call") from None


def caller_of(
    metadata: Iterable[tuple[str, str | bytes]] | None,
    admin_token: str,
    organizer_course: Callable[[str], str | None],
) -> Caller:
    """Read the call's token: the admin's, or a course's organizer token (``COURSE:SECRET``,
    checked by ``organizer_course``, a blocking storage call: run this in a worker thread).

    Raises:
        RequestError: UNAUTHENTICATED: no token, or one that is neither.
    """
    token = bearer_token(metadata)
    if admin_token and hmac.compare_digest(token.encode(), admin_token.encode()):
        return Caller()  # first: an admin token may hold a ':' too
    if ":" in token:
        course = organizer_course(token)
        if course is None:
            raise RequestError(
                grpc.StatusCode.UNAUTHENTICATED,
                "wrong organizer token: no course has this organizer token (it may have been "
                "rotated)",
            )
        return Caller(course)
    check_token(metadata, admin_token)
    return Caller()
