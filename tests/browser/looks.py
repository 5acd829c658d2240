"""A page as people see it: at 1366 px and at 360 px, light and dark, photographed each way,
with axe-core's serious and critical violations and any sideways scroll of the page reported
(the every-page test and the play page's test share it)."""

from __future__ import annotations

from typing import Final

from playwright.sync_api import Page

from tests.browser import axe
from tests.browser.harness import artifacts_dir

WIDE: Final = 1366
NARROW: Final = 360
HEIGHT: Final = 800


def scroll_overflow(page: Page) -> int:
    """How many pixels the page is wider than its window (0: it fits)."""
    width: int = page.evaluate(
        "Math.max(0, document.scrollingElement.scrollWidth - window.innerWidth)"
    )
    return width


def overflowing(page: Page) -> list[str]:
    """The outermost elements whose right edge lies beyond the window, leaving out those inside
    a box that scrolls on its own (to say what widened a page)."""
    found: list[str] = page.evaluate(
        """() => {
          const scrolls = (e) =>
            ["auto", "scroll", "hidden"].includes(getComputedStyle(e).overflowX);
          const inside = (e) => {
            for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
              if (scrolls(p)) return true;
            }
            return false;
          };
          const wide = [...document.body.querySelectorAll("*")].filter(
            (e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !inside(e));
          return wide.filter((e) => !wide.includes(e.parentElement)).slice(0, 8).map((e) =>
            e.tagName.toLowerCase() + (typeof e.className === "string" && e.className
              ? "." + e.className.trim().split(/\\s+/).join(".") : "") +
            ": " + Math.round(e.getBoundingClientRect().right) + " px");
        }"""
    )
    return found


def look_at(page: Page, name: str) -> list[str]:
    """Check the page as loaded at both widths and in both palettes; photograph it each way.
    Returns what is wrong (empty: nothing)."""
    wrong: list[str] = []
    folder = artifacts_dir()
    page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": WIDE, "height": HEIGHT})
    page.screenshot(path=folder / f"{name}-{WIDE}.png", full_page=True)
    found = axe.blocking(axe.violations(page))
    if found:
        wrong.append(f"axe at {WIDE} px, light:\n{axe.report(found)}")
    page.set_viewport_size({"width": NARROW, "height": HEIGHT})
    overflow = scroll_overflow(page)
    if overflow:
        wrong.append(
            f"{overflow} px wider than a {NARROW} px window: " + "; ".join(overflowing(page))
        )
    page.screenshot(path=folder / f"{name}-{NARROW}.png", full_page=True)
    page.emulate_media(color_scheme="dark")
    found = axe.blocking(axe.violations(page))
    if found:
        wrong.append(f"axe at {NARROW} px, dark:\n{axe.report(found)}")
    page.screenshot(path=folder / f"{name}-{NARROW}-dark.png", full_page=True)
    page.emulate_media(color_scheme="light")
    return wrong
