"""The query parameters the pages take, checked: a bad one is a 400 that names it and the rule.

Every list is paged (``page`` from 1, ``per_page`` up to :data:`MAX_PER_PAGE`) so no request
reads an unbounded number of rows; sort keys and filters are checked against what exists.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Final

DEFAULT_PER_PAGE: Final = 25
MAX_PER_PAGE: Final = 100
MAX_PAGE: Final = 10_000
"""Past this a page is refused rather than asking the database to skip millions of rows."""
MAX_TEXT: Final = 200
"""The longest filter value taken (bot names, ids and game names are far shorter)."""


class WebError(Exception):
    """A request the web face answers with ``status`` and ``message`` (as HTML or JSON)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def bad_request(message: str) -> WebError:
    return WebError(400, message)


def not_found(message: str) -> WebError:
    return WebError(404, message)


def integer(query: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    """The integer parameter ``name`` (``default`` when absent), checked to be in low..high."""
    text = query.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise bad_request(f"{name}: expected a whole number, got {text[:MAX_TEXT]!r}") from None
    if not low <= value <= high:
        raise bad_request(f"{name}: expected {low} to {high}, got {value}")
    return value


def text(query: Mapping[str, str], name: str) -> str | None:
    """The text parameter ``name``, or None when absent or empty; refused when too long."""
    value = query.get(name)
    if not value:
        return None
    if len(value) > MAX_TEXT:
        raise bad_request(f"{name}: at most {MAX_TEXT} characters, got {len(value)}")
    return value


def choice(query: Mapping[str, str], name: str, default: str, allowed: Collection[str]) -> str:
    """The parameter ``name``, which must be one of ``allowed`` (``default`` when absent)."""
    value = text(query, name) or default
    if value not in allowed:
        raise bad_request(
            f"{name}: unknown value {value!r}; expected one of {', '.join(sorted(allowed))}"
        )
    return value


@dataclass(frozen=True, slots=True)
class Paging:
    """Which slice of a list a request asks for."""

    page: int
    per_page: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page


def paging(query: Mapping[str, str]) -> Paging:
    """``page`` (1 to :data:`MAX_PAGE`) and ``per_page`` (1 to :data:`MAX_PER_PAGE`)."""
    return Paging(
        page=integer(query, "page", 1, 1, MAX_PAGE),
        per_page=integer(query, "per_page", DEFAULT_PER_PAGE, 1, MAX_PER_PAGE),
    )
