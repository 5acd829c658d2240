"""A person is labelled as a person wherever a seat's name is shown by the pages' one macro
(docs/people.md): never a link to a bot page it does not have, and its name escaped."""

from __future__ import annotations

from domino_arena.server.web.app import _templates

LINK = '{% import "macros.html" as m %}{{ m.bot_link(name) }}'


def render(name: str) -> str:
    return _templates().env.from_string(LINK).render(name=name)


def test_a_person_is_named_and_labelled_without_a_bot_page() -> None:
    html = render("person:ada")
    assert html == 'ada <span class="seat-label person">person</span>'
    assert "/bots/" not in html


def test_a_person_s_name_is_escaped() -> None:
    html = render("person:<b>x</b>")
    assert "<b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_a_bot_still_links_its_page_and_an_alias_does_not() -> None:
    assert render("alice") == '<a href="/bots/alice">alice</a>'
    assert render("Bot 3") == "Bot 3"
