"""The referee's log (server/logs.py): one line per record whatever a client sent, bounded,
as text or JSON lines, and the ``serve`` options that choose them."""

from __future__ import annotations

import argparse
import io
import json
import logging
from collections.abc import Iterator

import pytest

from domino_arena.server import logs
from domino_arena.server.cli.serve import HANDLERS

FORGED = "evil\n2026-01-01T00:00:00.000Z INFO domino_arena.server: bot connected: name=admin"


@pytest.fixture
def logger() -> Iterator[logging.Logger]:
    logger = logging.getLogger("domino_arena.server.test_logs")
    yield logger
    logging.getLogger(logs.LOGGER).setLevel(logging.NOTSET)


def record(message: str, *args: object, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord("domino_arena.server", logging.INFO, "f.py", 1, message, args, None)
    for key, value in extra.items():
        setattr(made, key, value)
    return made


def test_text_keeps_a_newline_in_a_name_on_one_line() -> None:
    line = logs.TextFormatter().format(record("bot connected: name=%s", FORGED))
    assert "\n" not in line
    assert line.endswith(f"name={FORGED.replace(chr(10), chr(92) + 'n')}")
    assert " INFO domino_arena.server: bot connected: name=evil\\n2026" in line
    assert line[:4].isdigit() and line[23] == "Z"  # an ISO 8601 UTC timestamp first


@pytest.mark.parametrize("char", ["\r", "\x1b", "\u2028", "\x00", "\x85"])
def test_text_escapes_every_line_break_and_control_character(char: str) -> None:
    line = logs.TextFormatter().format(record("reason=%s", f"a{char}b"))
    assert char not in line
    assert len(line.splitlines()) == 1


def test_text_escapes_backslashes_so_an_escape_cannot_be_forged() -> None:
    line = logs.TextFormatter().format(record("name=%s", "a\\nb"))
    assert line.endswith("name=a\\\\nb")


def test_a_huge_message_is_bounded() -> None:
    line = logs.TextFormatter().format(record("name=%s", "x" * 3_000_000))
    assert len(line) < logs.MAX_MESSAGE + 200
    assert line.endswith(f"({3_000_005 - logs.MAX_MESSAGE} more characters)")


def test_json_has_fixed_keys_escapes_and_carries_extras() -> None:
    line = logs.JsonFormatter().format(record("bot connected: name=%s", FORGED, peer="p\n1"))
    assert "\n" not in line
    entry = json.loads(line)
    assert list(entry) == ["time", "level", "logger", "message", "peer"]
    assert entry["level"] == "INFO"
    assert entry["logger"] == "domino_arena.server"
    assert entry["message"] == f"bot connected: name={FORGED.replace(chr(10), chr(92) + 'n')}"
    assert entry["peer"] == "p\n1"


def test_text_quotes_extra_fields() -> None:
    line = logs.TextFormatter().format(record("hello", reason="x\ny"))
    assert line.endswith("hello reason='x\\ny'")


def test_a_traceback_follows_on_continuation_lines() -> None:
    try:
        raise ValueError("bad\nINFO forged")
    except ValueError:
        made = record("failed")
        made.exc_info = __import__("sys").exc_info()
    text = logs.TextFormatter().format(made)
    first, *rest = text.split("\n")
    assert first.endswith("failed")
    assert rest and all(row.startswith(logs.CONTINUATION) for row in rest)
    assert "exception" in json.loads(logs.JsonFormatter().format(made))


def test_quote_is_bounded_and_escaped() -> None:
    assert logs.quote("a\nb") == "'a\\nb'"
    assert logs.quote("x" * 100, 10) == "'xxxxxxxxxx'... (90 more characters)"


def test_configure_sets_the_level_and_the_format(logger: logging.Logger) -> None:
    stream = io.StringIO()
    handler = logs.configure("warning", "json", stream)
    try:
        logger.info("not shown")
        logger.warning("shown: %s", "a\nb")
    finally:
        logs.unconfigure(handler)
    lines = stream.getvalue().splitlines()
    assert [json.loads(line)["message"] for line in lines] == ["shown: a\\nb"]


@pytest.mark.parametrize(
    ("level", "log_format", "words"),
    [
        ("loud", "text", "log level: expected one of debug, info, warning, error, got 'loud'"),
        ("info", "xml", "log format: expected one of text, json, got 'xml'"),
    ],
)
def test_configure_refuses_an_unknown_level_or_format(
    level: str, log_format: str, words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        logs.configure(level, log_format, io.StringIO())


def serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(exit_on_error=False)
    HANDLERS["serve"].add_arguments(parser)
    return parser


def test_serve_takes_log_level_and_log_format() -> None:
    args = serve_parser().parse_args(["--log-level", "debug", "--log-format", "json"])
    assert (args.log_level, args.log_format) == ("debug", "json")
    args = serve_parser().parse_args([])
    assert (args.log_level, args.log_format) == ("info", "text")


@pytest.mark.parametrize("argv", [["--log-level", "trace"], ["--log-format", "xml"]])
def test_serve_refuses_an_unknown_log_level_or_format(argv: list[str]) -> None:
    with pytest.raises(argparse.ArgumentError, match="invalid choice"):
        serve_parser().parse_args(argv)
