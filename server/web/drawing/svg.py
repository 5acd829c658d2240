"""A tiny SVG writer: elements as escaped text, and the boxes drawings are laid out in.

Every attribute value and every text passes through :func:`markupsafe.escape` here, so a bot's
name can never become markup. Numbers are written
with at most one decimal, which keeps the pages small.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from markupsafe import Markup, escape

Attr = str | int | float | None


def num(value: float) -> str:
    """``value`` with at most one decimal and no trailing zeros (``12``, ``12.5``)."""
    text = f"{value:.1f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def attrs(values: Mapping[str, Attr]) -> str:
    """The attributes of ``values`` (None leaves one out), each value escaped."""
    parts = []
    for key, value in values.items():
        if value is None:
            continue
        name = key.rstrip("_").replace("_", "-")
        if isinstance(value, float):
            parts.append(f' {name}="{num(value)}"')
        elif isinstance(value, int):
            parts.append(f' {name}="{value}"')
        else:
            parts.append(f' {name}="{escape(value)}"')
    return "".join(parts)


def el(tag: str, values: Mapping[str, Attr] | None = None, *children: str) -> str:
    """One element: ``<tag a="v">children</tag>``, or ``<tag a="v"/>`` without children.

    Children are markup already (other elements, or :func:`text` output)."""
    opened = f"<{tag}{attrs(values or {})}"
    if not children:
        return opened + "/>"
    return f"{opened}>{''.join(children)}</{tag}>"


def text(value: object) -> str:
    """``value`` as escaped character data."""
    return str(escape(str(value)))


def markup(svg: str) -> Markup:
    """Text built by this module, marked safe for Jinja2 (every piece was escaped here)."""
    return Markup(svg)


@dataclass(frozen=True, slots=True)
class Box:
    """An axis-aligned box (the extent of a drawing), in user units."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    def union(self, other: Box) -> Box:
        return Box(
            min(self.x0, other.x0),
            min(self.y0, other.y0),
            max(self.x1, other.x1),
            max(self.y1, other.y1),
        )


def extent(boxes: Iterable[Box]) -> Box | None:
    """The smallest box holding every box of ``boxes``; None when there is none."""
    total: Box | None = None
    for box in boxes:
        total = box if total is None else total.union(box)
    return total


@dataclass(frozen=True, slots=True)
class Drawing:
    """Part of a picture: its SVG and its extent, in its own coordinates."""

    svg: str
    box: Box

    def placed(self, x: float, y: float, scale: float = 1.0) -> str:
        """The drawing moved so its box's top-left corner lies at (x, y), scaled by ``scale``."""
        dx = x - self.box.x0 * scale
        dy = y - self.box.y0 * scale
        how = f"translate({num(dx)} {num(dy)})"
        if scale != 1.0:
            how += f" scale({scale:.4f})"
        return el("g", {"transform": how}, self.svg) if self.svg else ""
