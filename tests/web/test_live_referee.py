"""The leak walk of the live pages: a real referee plays whole matches of every game with raw
bots while the web face (served by uvicorn) follows each one, and every response is checked
against the true position, rebuilt from the match's record once it is over.

By construction: each ``step`` event's table equals ``draw_public(state.observe(SPECTATOR))`` of
the engine's state after that many steps, holds no key for a hand, the boneyard or the widow,
and no tile that the state hides from a spectator appears anywhere in the event's bytes (its
HTML included), nor in ``/live``, ``/api/live``, ``/live/{id}`` or ``/api/live/{id}``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import pytest

from domino_arena.sdk.match.records import MatchRecord, parse_record
from domino_arena.sdk.rules import SPECTATOR, GameState, Tile, make_game
from domino_arena.sdk.wire import game_to_proto
from domino_arena.server.web.table import draw_public, replay_states
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import referee_pb2 as pb
from tests.browser import live_harness
from tests.browser.live_harness import BOTS, DIRECT, Arena, Gate, get, parse_sse
from tests.fakes.leaks import hidden_from
from tests.fakes.referee_server import WAIT

GAMES: Final = ("moon", "passing", "straight", "doubles")
TILE: Final = re.compile(r"\b([0-6])-([0-6])\b")
HIDDEN_KEYS: Final = ("hands", "boneyard")

arena = live_harness.arena
"""The module's referee and web face (a fixture)."""


def tiles_in(text: str) -> set[Tile]:
    return {Tile(int(a), int(b)) for a, b in TILE.findall(text)}


def leaks(text: str, state: GameState) -> list[str]:
    hidden = hidden_from(state, SPECTATOR)
    return [f"{tile} from {hidden[tile]}" for tile in tiles_in(text) if tile in hidden]


def check_table(table: dict[str, Any], state: GameState) -> None:
    assert table == draw_public(state.observe(SPECTATOR)), "the table is the spectator's view"
    assert not set(HIDDEN_KEYS) & set(table)
    assert table.get("widow") is None and table.get("discard") is None


def states_of(record: MatchRecord) -> list[GameState]:
    """The engine's state after each number of steps of ``record`` (0 to all of them)."""
    states = [replay_states(record, 0)]
    for step in record.steps:
        states.append(states[-1].apply(step.action))
    return states


def check_event_stream(body: str, record: MatchRecord) -> int:
    """Walk every event; return how many tiles the walk saw (it must see some)."""
    stream = parse_sse(body)
    names = [e.name for e in stream.events]
    assert names[0] == "start" and names[-1] == "end", names
    steps = [e for e in stream.events if e.name == "step"]
    assert [e.data["step"] for e in steps] == list(range(1, len(record.steps) + 1))
    assert all(e.data["table"] is not None for e in steps[1:]), "live steps carry their table"
    assert "html" in steps[-1].data
    states = states_of(record)
    state = states[0]
    seen = 0
    for event in stream.events:
        if event.name == "step":
            state = states[event.data["step"]]
            if event.data["table"] is not None:
                check_table(event.data["table"], state)
                html = event.data["html"]
                hidden_in_hands = html.count('data-hidden="hand"')  # one tile back per tile
                assert hidden_in_hands == sum(state.observe(SPECTATOR).hand_sizes)
        found = leaks(event.raw, state)
        assert not found, f"{event.name} {event.data.get('step')}: {found} in {event.raw}"
        seen += len(tiles_in(event.raw))
    assert stream.events[-1].data["replay"] == f"/matches/{record_id(stream)}"
    return seen


def record_id(stream: Any) -> str:
    match_id: str = stream.events[0].data["match_id"]
    return match_id


@pytest.mark.parametrize("game_name", GAMES)
def test_a_whole_live_match_shows_no_hidden_tile_anywhere(arena: Arena, game_name: str) -> None:
    game = make_game(game_name)
    gate = Gate()
    arena.hold(gate)
    request = admin_pb.RunMatchRequest(
        game=game_to_proto(game),
        bots=BOTS[: game.num_players],
        has_seed=True,
        seed=21,
        max_deals=20,  # random Moon bidders seldom reach 21: adjudicated after 20 deals
    )
    running = arena.referee.admin.RunMatch.future(request, timeout=WAIT * 6)
    match_id = gate.held()
    base = arena.url
    # While the match is held after its deal: every page about it.
    status, lobby_text, _ = get(f"{base}/api/live")
    assert status == 200
    lobby = json.loads(lobby_text)
    (listed,) = [m for m in lobby["matches"] if m["id"] == match_id]
    assert listed["players"] == list(BOTS[: game.num_players])
    assert {b["name"] for b in lobby["connected"]} == set(BOTS)
    pages = {path: get(base + path) for path in ("/live", f"/live/{match_id}", "/")}
    status, held_text, _ = get(f"{base}/api/live/{match_id}")
    held = json.loads(held_text)
    assert status == 200 and held["state"] == "live" and held["step"] >= 1
    status, bot_text, _ = get(f"{base}/api/bots/alice")
    assert json.loads(bot_text)["connection"]["connected"] is True
    with DIRECT.open(f"{base}/api/live/{match_id}/events", timeout=WAIT) as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        gate.open()
        body = response.read().decode()
    result = running.result()
    assert result.match_id == match_id
    assert result.result.termination in (pb.TERMINATION_NORMAL, pb.TERMINATION_ADJUDICATED)
    record = parse_record(result.record)
    # The pages held at the deal, against the position there.
    at_hold = replay_states(record, held["step"])
    check_table(held["table"], at_hold)
    for path, (status, text, _) in pages.items():
        assert status == 200, path
        assert not leaks(text, at_hold), path
    for path in ("/live", "/"):
        assert f'href="/live/{match_id}"' in pages[path][1], f"{path} links the live match"
    assert pages["/live"][1].count('href="/bots/') >= 2 * game.num_players  # seats, connected
    held_page = pages[f"/live/{match_id}"][1]
    assert '<section class="table"' in held_page, "the page draws the table without JavaScript"
    assert held_page.count('data-hidden="hand"') == sum(at_hold.observe(SPECTATOR).hand_sizes)
    assert not leaks(lobby_text, at_hold) and not leaks(held_text, at_hold)
    assert check_event_stream(body, record) > 0, "the walk saw no tile: it checks nothing"
    # Once over: the live page says so and links the replay.
    status, over_text, _ = get(f"{base}/live/{match_id}")
    assert status == 200 and f'href="/matches/{match_id}"' in over_text
    assert arena.live.streams == 0


def test_the_bot_page_shows_that_a_connected_bot_is_connected(arena: Arena) -> None:
    status, text, _ = get(f"{arena.url}/api/bots/alice")
    assert status == 200 and json.loads(text)["connection"]["connected"] is True
    status, page, _ = get(f"{arena.url}/bots/alice")
    assert "Connected now, playing doubles, moon, passing, straight; in 0 matches now" in page
