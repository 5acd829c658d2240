"""axe-core (Deque's accessibility engine, from npm: tests/browser/package.json) run inside a
page that Playwright drives: the violations it finds, and a report of them.

The pages' Content-Security-Policy allows no inline script, so axe is not added as a
``<script>`` tag: its source is evaluated through the DevTools protocol
(:meth:`Page.evaluate`), which a page's CSP does not govern, the way a browser extension's
checker runs. ``.ci/run`` installs it with ``npm ci --prefix tests/browser``.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
from playwright.sync_api import Page

from tests.browser.harness import REQUIRED_ENV

AXE: Final = Path(__file__).resolve().parent / "node_modules/axe-core/axe.min.js"
"""axe-core's browser build, as ``npm ci --prefix tests/browser`` installs it."""
BLOCKING: Final = frozenset({"serious", "critical"})
"""The impacts a page may not have (axe's others: ``minor``, ``moderate``)."""
_RUN: Final = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => ({target: n.target.join(" "), summary: n.failureSummary || ""})),
  }));
}"""


@dataclass(frozen=True)
class Violation:
    """One rule axe found broken: its id, impact, one-line help, and each element that breaks
    it (a CSS selector and axe's summary of what is wrong there)."""

    rule: str
    impact: str
    help: str
    nodes: tuple[tuple[str, str], ...]

    def text(self) -> str:
        lines = [f"{self.rule} ({self.impact}): {self.help}"]
        lines += [f"  {target}: {' '.join(summary.split())}" for target, summary in self.nodes]
        return "\n".join(lines)


@functools.cache
def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def axe_source(path: Path = AXE) -> str:
    """axe-core's source; skip the test when it is not installed, or fail when browser tests
    are required (``DOMINO_ARENA_BROWSER_TESTS=required``, as CI sets it)."""
    if path.exists():
        return _source(path)
    why = f"{path} is missing (npm ci --prefix tests/browser)"
    if os.environ.get(REQUIRED_ENV) == "required":
        pytest.fail(f"{REQUIRED_ENV}=required but {why}", pytrace=False)
    pytest.skip(why)


def violations(page: Page) -> list[Violation]:
    """Run axe over the page as it is now; return every violation it reports."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source())
    found: list[dict[str, Any]] = page.evaluate(_RUN)
    return [
        Violation(
            rule=v["id"],
            impact=v["impact"] or "unknown",
            help=v["help"],
            nodes=tuple((n["target"], n["summary"]) for n in v["nodes"]),
        )
        for v in found
    ]


def blocking(found: list[Violation]) -> list[Violation]:
    """The violations of a :data:`BLOCKING` impact."""
    return [v for v in found if v.impact in BLOCKING]


def report(found: list[Violation]) -> str:
    """Every violation, one rule a paragraph (for an assertion's message)."""
    return "\n".join(v.text() for v in found)
