"""The README's example bot, as documented: the one copy its tests read.

The example is the fenced ``python`` block right after the ``<!-- readme-example: FILE -->``
marker, read from README.md when the README holds it, else from docs/writing-a-bot.md (the
section the README is made from). The SDK tests check it locally; the end-to-end tests run it
against a real referee.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
MARKER: Final = re.compile(
    r"<!-- readme-example: (?P<file>[\w.-]+) -->\n```python\n(?P<code>.*?)```", re.DOTALL
)


def example() -> tuple[Path, str, str]:
    """Return the document holding the example, the example's file name and its code."""
    for path in (ROOT / "README.md", ROOT / "docs" / "writing-a-bot.md"):
        found = MARKER.search(path.read_text(encoding="utf-8")) if path.exists() else None
        if found:
            return path, found["file"], found["code"]
    raise AssertionError("no '<!-- readme-example: FILE -->' python block in README.md or docs")
