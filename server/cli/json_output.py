"""``--json``: one JSON document on stdout for a script, the one way every command prints one.

Every document is an object whose ``format`` key says its shape's version (1 now; a change that
could break a script bumps it), beside what the command answers. Messages of the admin API are
converted with :func:`message_json`: their fields by their proto names (admin.proto is the
contract), enums by their full names, 64-bit integers as strings and timestamps as RFC 3339
text, as the proto3 JSON mapping says (docs/admin.md: JSON output). No table, markup or progress
bar is printed in JSON mode; errors still go to stderr with their exit status.

This module imports neither grpc nor rich, so any command may use it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any, Final

FORMAT: Final = 1
"""The version of the documents' shape: the ``format`` key of each."""


def json_argument(parser: argparse.ArgumentParser, what: str = "the answer") -> None:
    """Add ``--json``: read as ``args.json``."""
    parser.add_argument(
        "--json",
        action="store_true",
        help=f"print {what} as one JSON object, by its proto names (docs/admin.md: JSON output)",
    )


def message_json(message: Any) -> dict[str, Any]:
    """A protobuf message as a dict: every field by its proto name, unset ones with their
    defaults, enums by name."""
    from google.protobuf import json_format  # noqa: PLC0415

    answer: dict[str, Any] = json_format.MessageToDict(
        message,
        preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True,
        use_integers_for_enums=False,
    )
    return answer


def print_json(document: Mapping[str, Any]) -> None:
    """Print ``document`` with its ``format`` key as one indented JSON object, keys sorted."""
    print(json.dumps({"format": FORMAT, **document}, indent=2, sort_keys=True))
