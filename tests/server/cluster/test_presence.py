"""The presence board and messages of a cluster (server/net/cluster/presence.py, subjects.py):
pure bookkeeping, checked without a broker."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domino_arena.server.net.cluster.presence import (
    GATEWAY_TIMEOUT,
    Board,
    PresenceError,
    Stream,
    decode_change,
    decode_heartbeat,
    encode_change,
    encode_heartbeat,
)
from domino_arena.server.net.cluster.subjects import MESSAGE, Subjects, parts, token, untoken


def stream(name: str, gateway: str, n: int, since: float) -> Stream:
    return Stream(name, ("moon",), gateway, f"{gateway}/{n}", since)


def test_a_newer_stream_of_a_bot_replaces_the_older_and_an_old_down_changes_nothing() -> None:
    board = Board()
    old = stream("alice", "gw-a", 1, 10.0)
    new = stream("alice", "gw-b", 1, 11.0)
    assert board.up(old, 0.0) == ([old], [])
    assert board.up(new, 0.0) == ([new], [old])
    assert board.up(old, 0.0) == ([], [])  # late news of the older stream: ignored
    assert board.down(old, 0.0) == ([], [])
    assert board.streams == {"alice": new}
    assert board.down(new, 0.0) == ([], [new])
    assert board.streams == {}


def test_a_heartbeat_adds_what_was_missed_and_drops_what_its_gateway_lost() -> None:
    board = Board()
    a1, b1 = stream("a", "gw-a", 1, 1.0), stream("b", "gw-a", 2, 2.0)
    other = stream("c", "gw-b", 1, 1.0)
    board.up(a1, 0.0)
    board.up(other, 0.0)
    appeared, gone = board.heartbeat("gw-a", [b1], 1.0)
    assert appeared == [b1] and gone == [a1]
    assert board.streams == {"b": b1, "c": other}


def test_a_silent_gateway_expires_with_its_bots_and_a_refresh_spares_it() -> None:
    board = Board()
    a, c = stream("a", "gw-a", 1, 1.0), stream("c", "gw-b", 1, 1.0)
    board.up(a, 0.0)
    board.up(c, 0.0)
    board.heartbeat("gw-b", [c], GATEWAY_TIMEOUT)
    assert board.expire(GATEWAY_TIMEOUT) == []
    board.refresh(GATEWAY_TIMEOUT + 0.5)  # this host's broker was away: nobody is dead
    assert board.expire(2 * GATEWAY_TIMEOUT) == []
    assert board.expire(2 * GATEWAY_TIMEOUT + 1.0) == [a, c]
    assert board.streams == {} and board.heard == {}


def test_messages_round_trip_and_malformed_ones_name_what_is_wrong() -> None:
    s = stream("bot.1", "gw-a", 3, 5.5)
    assert decode_change(encode_change("up", s)) == ("up", s)
    assert decode_heartbeat(encode_heartbeat("gw-a", [s])) == ("gw-a", [s], False)
    assert decode_heartbeat(encode_heartbeat("gw-a", [], back=True)) == ("gw-a", [], True)
    bad = {"kind": "up", "stream": {**s.to_json(), "since": "later"}}
    with pytest.raises(PresenceError, match=r"stream\.since must be a number"):
        decode_change(json.dumps(bad).encode())
    with pytest.raises(PresenceError, match="kind must be 'up' or 'down'"):
        decode_change(json.dumps({"kind": "sideways", "stream": s.to_json()}).encode())
    with pytest.raises(PresenceError, match="not JSON"):
        decode_heartbeat(b"\xff")
    with pytest.raises(PresenceError, match="back must be true or false"):
        decode_heartbeat(json.dumps({"gateway": "g", "streams": [], "back": "yes"}).encode())
    with pytest.raises(PresenceError, match=r"stream\.name must be a string"):
        decode_change(json.dumps({"kind": "up", "stream": {**s.to_json(), "name": ""}}).encode())


@given(st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=20))
def test_subject_tokens_are_one_to_one_and_never_split_a_subject(a: str, b: str) -> None:
    assert (token(a) == token(b)) == (a == b)
    for name in (a, b):
        assert "." not in token(name) and "*" not in token(name) and ">" not in token(name)
        assert not any(char.isspace() for char in token(name))
        assert untoken(token(name)) == name


def test_the_clusters_subjects_never_meet() -> None:
    one, two = Subjects("arena-1"), Subjects("arena-2")
    assert one.bot("alice") != two.bot("alice")
    assert one.presence != two.presence
    assert one.reply(token("host.a"), "gw/r/1") == "arena-1.match.host~2ea.gw~2fr~2f1"
    assert one.host_matches("host.a") == "arena-1.match.host~2ea.*"
    # What a host writes to a stream: the bot, the stream and the host are tokens of their own.
    subject = one.to_stream("bob.2", "gw/r/1", "host.a")
    assert subject == "arena-1.bot.bob~2e2.gw~2fr~2f1.host~2ea.m"
    assert parts(subject)[2:] == [token("bob.2"), token("gw/r/1"), token("host.a"), MESSAGE]
    assert one.bot("bob.2") == "arena-1.bot.bob~2e2.>"
