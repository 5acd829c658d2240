"""The knockout bracket's drawing (server/web/bracket_svg.py): its layout and its markup."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

from domino_arena.server.tournaments.knockout import Bracket, KnockoutRules, bracket
from domino_arena.server.tournaments.rounds import TableResult
from domino_arena.server.web.bracket_svg import (
    GAP_X,
    MARGIN,
    Box,
    BracketView,
    bracket_svg,
    draw,
    layout,
    points_text,
    stage_name,
    view_of,
)

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert(1)</script>" onload="x'


def played_out(seeding: list[str], table_size: int = 2) -> Bracket:
    """The knockout of ``seeding`` played to its end, the better seed winning every tie."""
    rules = KnockoutRules(table_size)
    rounds: list[list[TableResult]] = []
    state = bracket(seeding, rules, rounds)
    while state.champion is None:
        rounds.append(
            [
                TableResult(
                    table,
                    tuple(float(len(table) - 1 - i) for i in range(len(table))),
                    tuple(100 - i for i in range(len(table))),
                    2,
                )
                for table in state.next_tables()
            ]
        )
        state = bracket(seeding, rules, rounds)
    return state


def field(n: int) -> list[str]:
    return [f"bot-{i:02d}" for i in range(1, n + 1)]


def overlap(a: Box, b: Box) -> bool:
    return (
        a.x < b.x + b.width
        and b.x < a.x + a.width
        and a.y < b.y + b.height
        and b.y < a.y + a.height
    )


def texts(markup: str, cls: str) -> list[str]:
    root = ET.fromstring(markup)
    return [
        "".join(t.itertext())
        for t in root.iter(f"{SVG}text")
        if cls in (t.get("class") or "").split()
    ]


def test_no_two_boxes_overlap_and_columns_go_left_to_right() -> None:
    for n, size in ((5, 2), (16, 2), (13, 4), (10, 3)):
        placed = layout(view_of(played_out(field(n), size)))
        boxes = [*placed.boxes, placed.champion]
        for a, b in itertools.combinations(boxes, 2):
            assert not overlap(a, b), (n, size, a, b)
        for box in boxes:
            assert box.x == MARGIN + box.stage * (box.width + GAP_X)
            assert box.x + box.width <= placed.width
            assert box.y + box.height <= placed.height


def test_every_entrant_appears_and_the_champion_is_at_the_right() -> None:
    seeding = field(11)
    markup = bracket_svg(played_out(seeding), label="cup")
    shown = texts(markup, "entrant")
    assert set(seeding) <= set(shown)
    placed = layout(view_of(played_out(seeding)))
    assert placed.champion.x > max(b.x for b in placed.boxes)
    assert placed.champion.tie.entrants[0].bot == "bot-01"
    assert texts(markup, "stage")[-1] == "champion"


def test_who_went_through_is_bold_and_who_went_out_struck_through() -> None:
    markup = bracket_svg(played_out(field(4)), label="cup")
    root = ET.fromstring(markup)
    entrants = [t for t in root.iter(f"{SVG}text") if "entrant" in (t.get("class") or "")]
    through = [t for t in entrants if "through" in (t.get("class") or "").split()]
    out = [t for t in entrants if "out" in (t.get("class") or "").split()]
    assert through and all(t.get("font-weight") == "bold" for t in through)
    assert out and all(t.get("text-decoration") == "line-through" for t in out)
    assert {t.text for t in out} == {"bot-02", "bot-03", "bot-04"}


def test_a_bye_is_a_box_of_one_with_its_note_and_a_line_onwards() -> None:
    state = bracket(field(3), KnockoutRules(2), [])  # seed 1 has a bye, 2 plays 3
    placed = layout(view_of(state))
    first = [b for b in placed.boxes if b.stage == 0]
    assert [len(b.tie.entrants) for b in first] == [1, 2]
    assert first[0].tie.note == "bye"
    assert "bye" in texts(bracket_svg(state, label="cup"), "note")
    # The final is a placeholder: seed 1 is known, the other is still to come.
    [final] = [b for b in placed.boxes if b.stage == 1]
    assert final.tie.placeholder
    assert [e.bot for e in final.tie.entrants] == ["bot-01", ""]
    assert len(placed.links) == 3  # two ties into the final, the final to the champion


def test_a_64_field_is_six_stages_whose_drawing_scrolls_not_shrinks() -> None:
    placed = layout(view_of(played_out(field(64))))
    assert [b.stage for b in placed.boxes].count(0) == 32
    assert len(placed.columns) == 7  # six stages and the champion
    assert [name for _, name in placed.columns][:3] == ["round of 64", "round of 32", "round of 16"]
    assert 1000 < placed.width < 1200  # each column at its natural width, side by side
    assert placed.height < 32 * 60
    markup = bracket_svg(played_out(field(64)), label="cup")
    root = ET.fromstring(markup)
    assert root.get("width") == re.sub(r"\.0$", "", f"{placed.width:.1f}")


def test_a_decision_other_than_points_is_noted_and_a_set_in_play_too() -> None:
    rules = KnockoutRules(2, sets=1, max_sets=1)
    level = TableResult(("bot-02", "bot-03"), (1.0, 1.0), (50, 50), 2)
    state = bracket(field(3), rules, [[level]])
    notes = texts(bracket_svg(state, label="cup"), "note")
    assert "on seed, level after 1 set" in notes
    playing = bracket(field(4), rules, [])
    markup = bracket_svg(playing, label="cup", playing={("bot-01", "bot-04"): (1, 2)})
    assert "playing: 1 of 2 games" in texts(markup, "note")


def test_every_text_is_escaped_and_a_long_name_is_cut_with_a_tooltip() -> None:
    long = "a-bot-whose-name-is-far-too-long-for-a-box"
    markup = bracket_svg(played_out([HOSTILE, long, "carol"]), label=HOSTILE)
    assert "<script>" not in markup
    assert 'onload="x' not in markup
    assert not re.search(r"\sstyle=", markup)
    root = ET.fromstring(markup)  # well-formed
    assert root.findtext(f"{SVG}title") == HOSTILE
    assert root.get("aria-label") == HOSTILE
    shown = texts(markup, "entrant")
    assert any(text.startswith(HOSTILE[:10]) for text in shown)
    tooltips = [t.text for t in root.iter(f"{SVG}title")]
    assert long in tooltips
    assert long not in [t.text for t in root.iter(f"{SVG}text")]


def test_the_view_survives_its_json_and_draws_the_same() -> None:
    state = played_out(field(6), 3)
    view = view_of(state)
    again = BracketView.from_json(view.as_json())
    assert again == view
    assert draw(again, label="x") == draw(view, label="x")


def test_stage_names() -> None:
    assert [stage_name(s, 4, 2) for s in range(4)] == [
        "round of 16",
        "quarter-finals",
        "semi-finals",
        "final",
    ]
    assert [stage_name(s, 3, 4) for s in range(3)] == ["stage 1", "stage 2", "final"]


def test_match_points_are_shown_with_two_decimals_at_most() -> None:
    """A 3- or 4-seat game gives thirds: a page shows 1.33, never 1.333333333."""
    assert [points_text(p) for p in (4 / 3, 28 / 3, 2.0, 0.75, 0.5, 0.0)] == [
        "1.33",
        "9.33",
        "2.0",
        "0.75",
        "0.5",
        "0.0",
    ]
