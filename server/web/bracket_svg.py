"""A knockout's bracket drawn as inline SVG markup: pure (a bracket in, markup out).

The drawing reads a :class:`BracketView`, the bracket as the page's JSON holds it
(:func:`view_of` makes one from :class:`~domino_arena.server.tournaments.knockout.Bracket`),
and the page draws it from its data after the anonymous courses' names were replaced
(``scoped.PublicNames.scrub``): a name is aliased whole before it is shortened to fit a box,
so no part of a hidden name can reach the markup. Stages are columns left to right, each tie a
box of its entrants best seed first (who went through bold, who went out struck through and
dimmed, how the tie was decided in a small note when not on match points), lines join a tie to
the tie of the next stage its winner plays, and the champion sits at the right.

As the rating chart (:mod:`.charts`), every text goes through :func:`markupsafe.escape` and the
markup has no ``style`` attribute and no script (the Content-Security-Policy allows neither),
only presentation attributes and classes styled by ``static/style.css``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from markupsafe import Markup, escape

from domino_arena.server.tournaments.knockout import POINTS_DIGITS, Bracket, Tie, stages_needed

FONT: Final = 12
ROW_H: Final = 16
PAD: Final = 4
NOTE_H: Final = 14
GAP_Y: Final = 10
GAP_X: Final = 36
HEADER_H: Final = 22
"""Room above the boxes for the stages' names."""
MARGIN: Final = 8
CHAR_W: Final = 7
"""A character's width at :data:`FONT` (system sans-serif, generous)."""
SEED_W: Final = 24
RESULT_W: Final = 36
NAME_CHARS: Final = (10, 22)
"""The fewest and most characters of a name a box has room for (a longer one is cut, with
its whole name in a tooltip and in the page's list)."""

NOTES: Final = {"score": "on game score", "bye": "bye"}
"""How a tie was decided, as its box says it (nothing for match points: the usual way)."""


@dataclass(frozen=True, slots=True)
class EntryView:
    """One entrant of a tie: its seed (from 1), its match points and game score summed over
    the tie's sets (None before any set), and ``state`` "through", "out" or ""."""

    bot: str
    seed: int
    points: float | None
    score: int | None
    state: str


@dataclass(frozen=True, slots=True)
class TieView:
    """A tie as drawn; ``placeholder``: a tie of a stage not seated yet (its entrants are the
    winners known so far, "" for one still to come)."""

    entrants: tuple[EntryView, ...]
    decided_by: str
    sets: int
    playing: tuple[int, int] | None = None
    """The set being played now: (games stored, games of the set)."""
    placeholder: bool = False

    @property
    def note(self) -> str:
        """The small line under the entrants ("" for none)."""
        sets = f"{self.sets} set{'s' if self.sets != 1 else ''}"
        if self.playing is not None:
            return f"playing: {self.playing[0]} of {self.playing[1]} games"
        if self.decided_by == "seed":
            return f"on seed, level after {sets}"
        if not self.decided_by and self.sets:
            return f"level after {sets}"
        return NOTES.get(self.decided_by, "")


@dataclass(frozen=True, slots=True)
class StageView:
    name: str
    ties: tuple[TieView, ...]


@dataclass(frozen=True, slots=True)
class BracketView:
    """A knockout as its page shows it: every stage begun (then, in brackets of two, the later
    stages' placeholders), the champion (None while it plays) and the final's order."""

    table_size: int
    stages: tuple[StageView, ...]
    champion: str | None
    final_order: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "table_size": self.table_size,
            "champion": self.champion,
            "final_order": list(self.final_order),
            "stages": [
                {
                    "name": stage.name,
                    "ties": [
                        {
                            "entrants": [
                                {
                                    "bot": e.bot,
                                    "seed": e.seed,
                                    "points": e.points,
                                    "score": e.score,
                                    "state": e.state,
                                }
                                for e in tie.entrants
                            ],
                            "decided_by": tie.decided_by,
                            "sets": tie.sets,
                            "playing": None if tie.playing is None else list(tie.playing),
                            "placeholder": tie.placeholder,
                            "note": tie.note,
                        }
                        for tie in stage.ties
                    ],
                }
                for stage in self.stages
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BracketView:
        """The view :meth:`as_json` gave (the page's data, names already public)."""
        return cls(
            table_size=int(data["table_size"]),
            champion=data["champion"],
            final_order=tuple(data["final_order"]),
            stages=tuple(
                StageView(str(stage["name"]), tuple(_tie_of(tie) for tie in stage["ties"]))
                for stage in data["stages"]
            ),
        )


def _tie_of(tie: Mapping[str, Any]) -> TieView:
    """A tie of :meth:`BracketView.as_json` read back."""
    entrants = tuple(
        EntryView(str(e["bot"]), int(e["seed"]), e["points"], e["score"], str(e["state"]))
        for e in tie["entrants"]
    )
    playing = tie["playing"]
    return TieView(
        entrants,
        str(tie["decided_by"]),
        int(tie["sets"]),
        None if playing is None else (int(playing[0]), int(playing[1])),
        bool(tie["placeholder"]),
    )


def stage_name(stage: int, total: int, table_size: int) -> str:
    """What stage ``stage`` (from 0) of ``total`` is called: the final, the semi-finals and
    quarter-finals of a bracket of two, else "round of N" or "stage N"."""
    left = total - stage
    if left == 1:
        return "final"
    if table_size == 2:
        return {2: "semi-finals", 3: "quarter-finals"}.get(left, f"round of {1 << left}")
    return f"stage {stage + 1}"


def view_of(
    bracket: Bracket, playing: Mapping[tuple[str, ...], tuple[int, int]] | None = None
) -> BracketView:
    """``bracket`` as drawn; ``playing`` gives, by a tie's entrants, the games stored so far of
    the set it plays now (not yet in ``bracket``, which holds whole rounds only)."""
    size = bracket.rules.table_size
    seed = {entrant: number for number, entrant in enumerate(bracket.seeding, start=1)}
    total = stages_needed(len(bracket.seeding), size)
    now = playing or {}
    stages = [
        StageView(
            stage_name(number, total, size),
            tuple(_tie_view(tie, seed, now.get(tie.entrants)) for tie in ties),
        )
        for number, ties in enumerate(bracket.stages)
    ]
    if size == 2:  # the tree's later stages are known in shape: drawn as placeholders
        while len(stages) < total:
            before = stages[-1].ties
            stages.append(
                StageView(
                    stage_name(len(stages), total, size),
                    tuple(_placeholder(before[i : i + 2], seed) for i in range(0, len(before), 2)),
                )
            )
    return BracketView(size, tuple(stages), bracket.champion, bracket.final_order)


def _tie_view(tie: Tie, seed: Mapping[str, int], playing: tuple[int, int] | None) -> TieView:
    def summed(entrant: str) -> tuple[float | None, int | None]:
        if not tie.sets:
            return None, None
        points = round(sum(s.points_of(entrant) for s in tie.sets), POINTS_DIGITS)
        return points, sum(s.score_of(entrant) for s in tie.sets)

    through = set(tie.through)
    entries = tuple(
        EntryView(
            e,
            seed[e],
            *summed(e),
            "through" if e in through else "out" if e in tie.out else "",
        )
        for e in tie.entrants
    )
    return TieView(entries, tie.decided_by, len(tie.sets), None if tie.decided else playing)


def _placeholder(feeders: Sequence[TieView], seed: Mapping[str, int]) -> TieView:
    winners = [next((e.bot for e in tie.entrants if e.state == "through"), "") for tie in feeders]
    known = sorted((w for w in winners if w), key=seed.__getitem__)
    slots = [*known, *([""] * (len(winners) - len(known)))]
    entries = tuple(EntryView(w, seed.get(w, 0), None, None, "") for w in slots)
    return TieView(entries, "", 0, placeholder=True)


# -- the layout ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Box:
    """A tie's box: its stage (column) and place in it, and where it is drawn."""

    stage: int
    index: int
    x: float
    y: float
    width: float
    height: float
    tie: TieView

    @property
    def middle(self) -> float:
        return self.y + self.height / 2

    def row_middle(self, row: int) -> float:
        return self.y + PAD + ROW_H * row + ROW_H / 2


@dataclass(frozen=True, slots=True)
class Link:
    """A line from the right edge of a box (``x1, y1``) to the left edge of one in the next
    column (``x2, y2``), drawn as an elbow."""

    x1: float
    y1: float
    x2: float
    y2: float


@dataclass(frozen=True, slots=True)
class BracketLayout:
    """Where everything goes: the drawing's size, the columns' names and left edges, the boxes
    (stage by stage, top to bottom), the links, and the champion's box (None while undecided
    is drawn as an empty box all the same: ``champion`` is the box, its text may be "")."""

    width: float
    height: float
    columns: tuple[tuple[float, str], ...]
    boxes: tuple[Box, ...]
    links: tuple[Link, ...]
    champion: Box
    name_chars: int


def box_height(tie: TieView) -> float:
    return len(tie.entrants) * ROW_H + 2 * PAD + (NOTE_H if tie.note else 0)


def layout(view: BracketView) -> BracketLayout:
    """Place every box: the first stage stacked top to bottom; a later tie centred on the ties
    its entrants came from (in a bracket of two, ties ``2i`` and ``2i + 1``), pushed down so it
    never overlaps the one above it; each column :data:`GAP_X` right of the one before."""
    names = [e.bot for stage in view.stages for tie in stage.ties for e in tie.entrants]
    chars = min(max((len(n) for n in names), default=0), NAME_CHARS[1])
    chars = max(chars, NAME_CHARS[0])
    width = SEED_W + chars * CHAR_W + RESULT_W + 2 * PAD
    tree = view.table_size == 2
    top = HEADER_H + MARGIN
    boxes: list[list[Box]] = []
    for number, stage in enumerate(view.stages):
        x = MARGIN + number * (width + GAP_X)
        placed: list[Box] = []
        below = float(top)
        for index, tie in enumerate(stage.ties):
            height = box_height(tie)
            feeders = _feeders(boxes[-1], index, tie, tree) if boxes else []
            wanted = (
                sum(f.middle for f in feeders) / len(feeders) - height / 2 if feeders else below
            )
            y = max(wanted, below)
            placed.append(Box(number, index, x, y, width, height, tie))
            below = y + height + GAP_Y
        boxes.append(placed)
    links = [link for number in range(1, len(boxes)) for link in _links(boxes, number, tree)]
    final = boxes[-1][0] if boxes and boxes[-1] else None
    champion_tie = TieView(
        (EntryView(view.champion or "", 0, None, None, "through" if view.champion else ""),),
        "",
        0,
        placeholder=view.champion is None,
    )
    champion_x = MARGIN + len(boxes) * (width + GAP_X)
    champion_h = box_height(champion_tie)
    champion_y = final.middle - champion_h / 2 if final is not None else float(top)
    champion = Box(len(boxes), 0, champion_x, champion_y, width, champion_h, champion_tie)
    if final is not None:
        links.append(Link(final.x + final.width, final.middle, champion.x, champion.middle))
    every = [b for column in boxes for b in column] + [champion]
    columns = tuple(
        (MARGIN + n * (width + GAP_X), name)
        for n, name in enumerate([*(s.name for s in view.stages), "champion"])
    )
    return BracketLayout(
        width=champion_x + width + MARGIN,
        height=max(b.y + b.height for b in every) + MARGIN,
        columns=columns,
        boxes=tuple(b for column in boxes for b in column),
        links=tuple(links),
        champion=champion,
        name_chars=chars,
    )


def _feeders(before: Sequence[Box], index: int, tie: TieView, tree: bool) -> list[Box]:
    """The boxes of the stage before that this tie's entrants came from."""
    if tree:
        return list(before[2 * index : 2 * index + 2])
    bots = {e.bot for e in tie.entrants if e.bot}
    return [b for b in before if bots & {e.bot for e in b.tie.entrants}]


def _links(boxes: Sequence[Sequence[Box]], number: int, tree: bool) -> list[Link]:
    links: list[Link] = []
    for box in boxes[number]:
        for feeder in _feeders(boxes[number - 1], box.index, box.tie, tree):
            if tree:
                links.append(Link(feeder.x + feeder.width, feeder.middle, box.x, box.middle))
                continue
            for row, entry in enumerate(box.tie.entrants):  # each survivor's own line
                rows = [e.bot for e in feeder.tie.entrants]
                if entry.bot in rows:
                    y1 = feeder.row_middle(rows.index(entry.bot))
                    links.append(Link(feeder.x + feeder.width, y1, box.x, box.row_middle(row)))
    return links


# -- the markup ----------------------------------------------------------------------------


def points_text(points: float) -> str:
    """Match points as a page shows them: two decimals at most (a 3- or 4-seat game gives
    thirds: ``1.33``, not ``1.333333333``), written as the results table writes a float
    (``2.0``, ``0.5``, ``0.75``)."""
    text = f"{points:.2f}"
    return text[:-1] if text.endswith("0") else text


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _shown(name: str, chars: int) -> str:
    return name if len(name) <= chars else name[: chars - 1] + "…"


def _box_markup(box: Box, chars: int) -> list[str]:
    tie = box.tie
    kind = "placeholder" if tie.placeholder else "bye" if tie.decided_by == "bye" else "played"
    dashed = ' stroke-dasharray="4 3"' if tie.placeholder else ""
    parts = [
        f'<g class="tie {kind}">',
        f'<rect x="{_number(box.x)}" y="{_number(box.y)}" width="{_number(box.width)}" '
        f'height="{_number(box.height)}" rx="3" fill="#fff" stroke="#99a"{dashed}/>',
    ]
    for row, entry in enumerate(tie.entrants):
        y = box.row_middle(row) + FONT / 2 - 2
        weight = ' font-weight="bold"' if entry.state == "through" else ""
        struck = (
            ' text-decoration="line-through" fill-opacity="0.55"' if entry.state == "out" else ""
        )
        name = escape(_shown(entry.bot, chars)) if entry.bot else "—"
        tooltip = f"<title>{escape(entry.bot)}</title>" if len(entry.bot) > chars else ""
        if entry.seed:
            parts.append(
                f'<text class="seed" x="{_number(box.x + PAD)}" y="{_number(y)}" '
                f'font-size="{FONT - 2}" fill-opacity="0.7">{entry.seed}</text>'
            )
        parts.append(
            f'<text class="entrant {entry.state}" x="{_number(box.x + PAD + SEED_W)}" '
            f'y="{_number(y)}" font-size="{FONT}"{weight}{struck}>{tooltip}{name}</text>'
        )
        if entry.points is not None:
            parts.append(
                f'<text class="points" x="{_number(box.x + box.width - PAD)}" y="{_number(y)}" '
                f'font-size="{FONT}" text-anchor="end"{weight}>{points_text(entry.points)}</text>'
            )
    if tie.note:
        y = box.y + box.height - PAD - 2
        parts.append(
            f'<text class="note" x="{_number(box.x + PAD)}" y="{_number(y)}" '
            f'font-size="{FONT - 2}" font-style="italic" fill-opacity="0.75">'
            f"{escape(tie.note)}</text>"
        )
    parts.append("</g>")
    return parts


def draw(view: BracketView, *, label: str) -> Markup:
    """The SVG of ``view``, titled ``label`` (escaped; also its accessible name)."""
    placed = layout(view)
    title = escape(label)
    parts = [
        f'<svg class="bracket" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {_number(placed.width)} {_number(placed.height)}" '
        f'width="{_number(placed.width)}" height="{_number(placed.height)}" '
        f'role="img" aria-label="{title}"><title>{title}</title>',
    ]
    for x, name in placed.columns:
        parts.append(
            f'<text class="stage" x="{_number(x)}" y="{HEADER_H - 6}" font-size="{FONT}" '
            f'font-weight="bold">{escape(name)}</text>'
        )
    for link in placed.links:
        middle = (link.x1 + link.x2) / 2
        parts.append(
            f'<path class="link" d="M{_number(link.x1)} {_number(link.y1)} '
            f'H{_number(middle)} V{_number(link.y2)} H{_number(link.x2)}" '
            'fill="none" stroke="#99a"/>'
        )
    for box in (*placed.boxes, placed.champion):
        parts.extend(_box_markup(box, placed.name_chars))
    parts.append("</svg>")
    return Markup("".join(parts))


def bracket_svg(
    bracket: Bracket,
    *,
    label: str,
    playing: Mapping[tuple[str, ...], tuple[int, int]] | None = None,
) -> Markup:
    """The SVG of ``bracket`` (:func:`view_of`, then :func:`draw`)."""
    return draw(view_of(bracket, playing), label=label)
