"""How the replay and live pages name a seat and a step (issue 32).

A seat's name is a bot's, or, with a prefix, a house bot's (``house:NAME``, docs/courses.md's
frozen baselines) or a person's (``person:NAME``, human play): the pages say which in words
rather than showing the prefix. A step reads "NAME (seat N): ACTION", and a deal "the deal of
hand N" (it used to read "the deal: the deal"). Both the pages drawn on the server (Jinja2
globals) and the live events (:mod:`.live_pages`) use these, so the two never disagree.
"""

from __future__ import annotations

from typing import Final

PERSON: Final = "person:"
HOUSE: Final = "house:"


def seat_label(name: str, seat: int | None = None) -> str:
    """``name`` as a page shows it: ``NAME (person)``, ``NAME (house bot)`` or the bot's name;
    with ``seat``, the seat number in the brackets too (``alice (seat 1)``)."""
    kinds = []
    if name.startswith(PERSON):
        name, kinds = name.removeprefix(PERSON), ["person"]
    elif name.startswith(HOUSE):
        name, kinds = name.removeprefix(HOUSE), ["house bot"]
    if seat is not None:
        kinds.append(f"seat {seat}")
    return f"{name} ({', '.join(kinds)})" if kinds else name


def step_who(seat: int | None, players: list[str], hand: int) -> str:
    """Who made a step: a seat by its name (``seat`` None or negative: the deal of ``hand``,
    the hand it starts). A seat outside ``players`` is named by its number alone."""
    if seat is None or seat < 0:
        return f"the deal of hand {hand}"
    if seat >= len(players):
        return f"seat {seat}"
    return seat_label(players[seat], seat)
