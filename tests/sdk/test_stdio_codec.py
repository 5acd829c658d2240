"""The stdio protocol's lines (sdk/stdio/codec.py): the arena's messages as one JSON line each,
a bot's lines decoded strictly, and a line splitter that never holds more than the bound."""

from __future__ import annotations

import json

import pytest

from domino_arena.sdk.stdio.codec import (
    MAX_LINE_BYTES,
    LineSplitter,
    StdioProtocolError,
    decode_bot_line,
    encode_referee_message,
    unroll,
)
from domino_arena.v1 import referee_pb2 as pb


def test_a_referee_message_is_one_json_line_with_its_zero_fields() -> None:
    welcome = pb.RefereeMessage(welcome=pb.Welcome(name="x", protocol_version=2, games=["moon"]))
    line = encode_referee_message(welcome)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {"welcome": {"name": "x", "protocolVersion": 2, "games": ["moon"]}}
    start = pb.RefereeMessage(match_start=pb.MatchStart(match_id="m", seat=0, bot_seed=2**63))
    decoded = json.loads(encode_referee_message(start))["matchStart"]
    assert decoded["seat"] == 0 and decoded["botSeed"] == str(2**63)
    assert decoded["faultPolicy"] == "FAULT_POLICY_UNSPECIFIED"


def test_batches_are_unrolled_and_never_written_whole() -> None:
    one = pb.RefereeMessage(request=pb.ActionRequest(match_id="a", turn=1))
    two = pb.RefereeMessage(fault=pb.Fault(match_id="b", turn=2))
    batch = pb.RefereeMessage(batch=pb.RefereeBatch(messages=[one, two]))
    assert unroll(batch) == [one, two] and unroll(one) == [one]
    with pytest.raises(ValueError, match="not batch"):
        encode_referee_message(batch)


def test_a_reply_line_decodes_and_a_blank_line_is_empty() -> None:
    line = b'{"reply": {"matchId": "m", "turn": 3, "action": {"pass": {}}}, "extra": 1}'
    message = decode_bot_line(line, 1)
    assert message.reply.match_id == "m" and message.reply.turn == 3
    assert message.reply.action.HasField("pass")
    batch = decode_bot_line(b'{"replies": {"replies": [{"matchId": "a", "turn": 1}]}}\r', 2)
    assert [r.match_id for r in batch.replies.replies] == ["a"]
    assert decode_bot_line(b"  \r", 3).WhichOneof("message") is None


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        (b"hello", "stdout line 7: not JSON: Expecting value at column 1"),
        (b"[1, 2]", "stdout line 7: not a BotMessage: a JSON list, expected an object"),
        (b"{}", 'stdout line 7: not a BotMessage: expected one of "reply", "replies"'),
        (b'{"reply": {"turn": "many"}}', "stdout line 7: not a BotMessage: "),
        (b"\xff\xfe", "stdout line 7: not UTF-8: byte 0"),
        (b"[" * 100_000, "stdout line 7: not "),
        (b"x" * (MAX_LINE_BYTES + 1), "stdout line 7: line longer than 1048576 bytes"),
    ],
)
def test_a_bad_line_names_its_number_and_the_rule(line: bytes, rule: str) -> None:
    with pytest.raises(StdioProtocolError) as caught:
        decode_bot_line(line, 7)
    assert str(caught.value).startswith(rule)
    assert caught.value.number == 7


def test_the_splitter_numbers_lines_across_chunks() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b'{"a"') == []
    assert splitter.feed(b": 1}\n\n{") == [(1, b'{"a": 1}'), (2, b"")]
    assert splitter.feed(b"}\n") == [(3, b"{}")]
    assert splitter.pending == 0


def test_the_splitter_refuses_a_long_line_without_holding_it() -> None:
    splitter = LineSplitter()
    splitter.feed(b"ok\n")
    chunk = b"x" * (1 << 16)
    with pytest.raises(StdioProtocolError, match="stdout line 2: line longer than 1048576 bytes"):
        for _ in range(100 * 16):  # 100 MiB, were it all held
            splitter.feed(chunk)
            assert splitter.pending <= MAX_LINE_BYTES
    assert splitter.pending == 0
