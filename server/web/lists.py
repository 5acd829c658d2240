"""The paged lists of tournaments (``/tournaments``, a course's tournaments): a page reads each
of its tournaments' stored-game count, so a page is what a request pays for, however many
tournaments a course has run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from domino_arena.server.store.tables import DEFAULT_COURSE
from domino_arena.server.web.params import Paging
from domino_arena.server.web.views import (
    FIRST_PAGE,
    TournamentTotal,
    WebStorage,
    tournament_summary,
)

T = TypeVar("T")


def page_of(items: Sequence[T], paging: Paging) -> tuple[list[T], bool]:
    """The items of ``paging``'s page, and whether a next page has any."""
    end = paging.offset + paging.per_page
    return list(items[paging.offset : end]), len(items) > end


def paged(paging: Paging, has_next: bool, total: int) -> dict[str, Any]:
    """The paging keys of a paged list's JSON (docs/web.md)."""
    return {"page": paging.page, "per_page": paging.per_page, "has_next": has_next, "total": total}


def tournaments(
    storage: WebStorage,
    total_of: TournamentTotal | None,
    course: str = DEFAULT_COURSE,
    paging: Paging = FIRST_PAGE,
) -> dict[str, Any]:
    """One page of ``course``'s tournaments, oldest first, each with how many of its games are
    stored."""
    found = storage.tournaments(course=course)
    shown, has_next = page_of(found, paging)
    return {
        "tournaments": [tournament_summary(storage, t, total_of) for t in shown],
        **paged(paging, has_next, len(found)),
    }
