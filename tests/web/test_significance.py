"""Crosstables shaded by significance (server/web/standings.py; docs/web.md: look and
accessibility): a head-to-head record's likelihood of superiority, the shade of a value, the
official fit's LOS matrix, and the tournament page writing each value beside its shade."""

from __future__ import annotations

import math

import pytest

from domino_arena.server.web import standings
from tests.fakes.web import TOURNAMENT_ID, Site


def test_a_record_s_los_comes_from_its_decisive_games() -> None:
    assert standings.record_los(0, 0, 0) == 0.5
    assert standings.record_los(0, 7, 0) == 0.5  # draws say nothing
    assert standings.record_los(5, 3, 5) == 0.5
    assert standings.record_los(10, 0, 0) == pytest.approx(0.5 * (1 + math.erf(math.sqrt(5))))
    assert standings.record_los(6, 2, 1) == pytest.approx(1 - standings.record_los(1, 2, 6))
    assert standings.record_los(3, 0, 1) < standings.record_los(6, 0, 2)  # more games, surer


@pytest.mark.parametrize(
    ("los", "shade"),
    [
        (1.0, "sig-strong-win"),
        (0.95, "sig-strong-win"),
        (0.949, "sig-win"),
        (0.8, "sig-win"),
        (0.799, ""),
        (0.5, ""),
        (0.201, ""),
        (0.2, "sig-loss"),
        (0.051, "sig-loss"),
        (0.05, "sig-strong-loss"),
        (0.0, "sig-strong-loss"),
    ],
)
def test_each_value_has_its_shade(los: float, shade: str) -> None:
    assert standings.shade(los) == shade


def test_a_cell_s_significance_names_its_value() -> None:
    assert standings.significance(None) is None
    cell = standings.significance({"wins": 9, "draws": 1, "losses": 0})
    assert cell is not None
    assert cell["shade"] == "sig-strong-win"
    assert cell["text"] == "LOS 100%"
    assert standings.significance({"wins": 1, "draws": 0, "losses": 1}) == {
        "los": 0.5,
        "shade": "",
        "text": "LOS 50%",
    }


def test_the_official_fit_s_los_matrix_is_square_and_complementary(site: Site) -> None:
    official = site.client.get("/api/games/moon/standings").json()["official"]
    matrix = official["los"]
    fitted = [row["bot"] for row in official["rows"] if row["rating"] is not None]
    assert [row["bot"] for row in matrix] == fitted
    for i, row in enumerate(matrix):
        assert len(row["against"]) == len(fitted)
        assert row["against"][i] is None
        for j, cell in enumerate(row["against"]):
            if cell is not None:
                assert cell["los"] + matrix[j]["against"][i]["los"] == pytest.approx(1.0)
                assert cell["shade"] == standings.shade(cell["los"])
    page = site.client.get("/games/moon/standings").text
    assert 'class="los"' in page
    assert "LOS ≥ 95%: the row's bot is stronger, significantly" in page


def test_the_tournament_s_crosstable_writes_each_value_beside_its_shade(site: Site) -> None:
    page = site.client.get(f"/tournaments/{TOURNAMENT_ID}").text
    crosstable = page[page.index('<table class="crosstable">') :]
    crosstable = crosstable[: crosstable.index("</table>")]
    assert '1\u20130\u20131<span class="los">LOS 50%</span>' in crosstable  # en dashes
    assert '<span class="visually-hidden">itself</span>' in crosstable
    assert "LOS ≤ 5%: weaker, significantly" in page  # the legend
