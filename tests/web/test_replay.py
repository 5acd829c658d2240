"""The replay viewer: at every step of a recorded match of each game, the page shows exactly the
tiles the engine holds after that many steps of the record, every hand face up."""

from __future__ import annotations

from collections import Counter

import pytest

from domino_arena.sdk.rules import (
    DoublesState,
    GameState,
    MoonState,
    PassingState,
    StraightState,
    Tile,
    make_game,
)
from domino_arena.sdk.rules.linegame import LineGameState
from tests.fakes.web import GAMES_PLAYED, PageTiles, Site, match_id_of


def table_tiles(state: GameState) -> list[str]:
    """Every tile on the table of ``state`` (not in a hand, not in the boneyard)."""
    if isinstance(state, StraightState):
        laid = list(state.layout.tiles())
    elif isinstance(state, DoublesState):
        laid = list(state.placed)
    elif isinstance(state, PassingState):
        laid = [Tile(a, b) for a, b in state.line]
    else:
        assert isinstance(state, MoonState)
        laid = [tile for _, tile in state.trick]
        laid += [tile for trick in state.tricks for _, tile in trick.plays]
        laid += [t for t in (state.widow, state.discard) if t is not None]
    return [str(t) for t in laid]


@pytest.mark.parametrize("game", GAMES_PLAYED)
def test_every_step_shows_the_tiles_of_the_record_at_that_step(site: Site, game: str) -> None:
    match_id = match_id_of(game, 0)
    record = site.played[match_id].record
    state: GameState = make_game(record.game, **record.options).new_game(
        record.seed, first_seat=record.first_seat
    )
    for step in range(len(record.steps) + 1):
        if step:
            state = state.apply(record.steps[step - 1].action)
        response = site.client.get(f"/matches/{match_id}", params={"step": step})
        assert response.status_code == 200, response.text
        shown = PageTiles(response.text)
        where = f"{game} step {step}"
        assert shown.hands == {
            seat: [str(t) for t in hand] for seat, hand in enumerate(state.hands)
        }, where
        assert Counter(shown.table) == Counter(table_tiles(state)), where
        if isinstance(state, LineGameState):
            assert shown.boneyard == [str(t) for t in state.boneyard], where
        else:
            assert shown.boneyard == [], where
        assert f"Replay: step {step} of {len(record.steps)}" in response.text


@pytest.mark.parametrize("game", GAMES_PLAYED)
def test_the_api_table_is_the_engine_s_at_the_step(site: Site, game: str) -> None:
    match_id = match_id_of(game, 1)
    record = site.played[match_id].record
    state: GameState = make_game(record.game, **record.options).new_game(
        record.seed, first_seat=record.first_seat
    )
    middle = len(record.steps) // 2
    for action in record.steps[:middle]:
        state = state.apply(action.action)
    replay = site.client.get(f"/api/matches/{match_id}?step={middle}").json()["replay"]
    table = replay["table"]
    assert table["hands"] == [[str(t) for t in hand] for hand in state.hands]
    assert table["scores"] == list(state.scores)
    assert table["deal"] == state.deal_number
    assert table["to_move"] == state.current_seat
    assert (replay["step"], replay["total"]) == (middle, len(record.steps))
    assert replay["last_step"]["action"] == str(record.steps[middle - 1].action)


def test_the_default_step_is_the_end_and_the_links_step_through(site: Site) -> None:
    match_id = match_id_of("straight", 0)
    total = len(site.played[match_id].record.steps)
    end = site.client.get(f"/api/matches/{match_id}").json()["replay"]
    assert (end["step"], end["next"], end["prev"], end["first"], end["last"]) == (
        total,
        total,
        total - 1,
        0,
        total,
    )
    assert end["table"]["to_move"] is None
    start = site.client.get(f"/matches/{match_id}?step=0").text
    assert 'id="prev" rel="prev" href="?step=0"' in start
    assert 'id="next" rel="next" href="?step=1"' in start
    assert 'id="last" href="?step=' + str(total) + '"' in start


def test_each_hand_has_a_jump_to_its_first_step(site: Site) -> None:
    match_id = match_id_of("passing", 0)
    record = site.played[match_id].record
    deals = [i + 1 for i, step in enumerate(record.steps) if step.seat == -1]
    replay = site.client.get(f"/api/matches/{match_id}?step=0").json()["replay"]
    assert [h["step"] for h in replay["hands"]] == [0, *deals]
    page = site.client.get(f"/matches/{match_id}?step={deals[0]}").text
    assert f'<a href="?step={deals[0]}" class="current">2</a>' in page
    for hand, start in enumerate(deals, start=2):
        at = site.client.get(f"/api/matches/{match_id}?step={start}").json()["replay"]
        assert at["hand"] == hand
        assert at["table"]["deal"] == hand


@pytest.mark.parametrize("step", ["-1", "99999", "two"])
def test_a_step_out_of_range_is_a_clear_400(site: Site, step: str) -> None:
    match_id = match_id_of("moon", 0)
    response = site.client.get(f"/api/matches/{match_id}", params={"step": step})
    assert response.status_code == 400
    assert response.json()["error"].startswith("step: expected ")


def test_a_match_without_a_readable_record_says_why(site: Site) -> None:
    page = site.client.get("/api/matches/forfeit").json()
    assert page["replay"] is not None  # the forfeit's record is whole: it replays to its end
    assert page["faults"][0]["forfeited"] is True
