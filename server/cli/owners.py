"""``owner``: the owners of a course (docs/courses.md: owners).

The organizer (or the admin) lists every owner with the invite that made it and its bots
(code -> owner -> bots), disables or enables one (a disabled owner's bots are refused at once),
and issues an owner token to an owner who has none (one made before owners had tokens) or lost
theirs. ``owner rotate-token`` is the owner's own: no admin token, authorised by the current
owner token read from ``--owner-token-file``, which is rewritten with the new one.

A command that makes a secret prints only the secret on stdout (or writes it to a file), what
it did on stderr, as ``course`` and ``invite`` do. This module imports grpc and the protos at
the top: ``main`` imports it only when one of its commands runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import Any, Final

from domino_arena.server.cli.admin_client import admin_call, console, token_file
from domino_arena.server.cli.arguments import (
    PROG,
    Handler,
    Handlers,
    course_argument,
    server_arguments,
)
from domino_arena.server.cli.courses import hand_over, registration_call, write_token
from domino_arena.server.cli.json_output import json_argument, message_json, print_json
from domino_arena.server.cli.tables import table
from domino_arena.v1 import admin_pb2


def _when(stamp: Any, present: bool) -> str:
    if not present:
        return "-"
    moment: dt.datetime = stamp.ToDatetime(tzinfo=dt.UTC)
    return f"{moment:%Y-%m-%d %H:%M} UTC"


def _arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="owner_action", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list",
        help="every owner of a course: its state, token, invite and bots",
        description="Every owner of the course, by name: enabled or disabled, when its owner "
        "token was issued ('none': it has none yet), the invite whose use made it, its bots.",
    )
    course_argument(listing)
    json_argument(listing)
    server_arguments(listing)
    listing.set_defaults(action_run=_list)
    for name, run, text in (
        ("disable", _disable, "disable an owner: its bots are refused at once, until enabled"),
        ("enable", _enable, "enable a disabled owner: its bots may connect again"),
        (
            "issue-token",
            _issue,
            "issue an owner a new owner token (shown once); its old one stops working",
        ),
    ):
        sub = actions.add_parser(name, help=text, description=text)
        sub.add_argument("name", metavar="OWNER", help="the owner's name")
        course_argument(sub)
        if name == "issue-token":
            sub.add_argument("--owner-token-file", metavar="FILE", help="write it to FILE")
        server_arguments(sub)
        sub.set_defaults(action_run=run)
    rotate = actions.add_parser(
        "rotate-token",
        help="give yourself a new owner token with your current one (rewrites the file)",
        description="Ask the referee for a new owner token, authorised by the current one "
        "read from --owner-token-file; the file is rewritten with the new one and the old one "
        "stops working (your bots' own tokens are kept).",
    )
    rotate.add_argument(
        "--owner-token-file", required=True, metavar="FILE", help="your owner token (first line)"
    )
    server_arguments(rotate, token=False)
    rotate.set_defaults(action_run=_rotate)


def _list(args: argparse.Namespace) -> int:
    answer = admin_call(args, "ListOwners", admin_pb2.ListOwnersRequest(course=args.course))
    if args.json:
        print_json(message_json(answer))
        return 0
    if not answer.owners:
        print("no owners")
        return 0
    rows = [
        (
            o.name,
            "enabled" if o.enabled else "disabled",
            _when(o.token_issued, True) if o.HasField("token_issued") else "none",
            o.invite_id or "-",
            ", ".join(o.bots) or "-",
        )
        for o in answer.owners
    ]
    columns = ["owner", "state", "token issued", "invite", "bots"]
    console().print(table(None, columns, rows))
    return 0


def _request(args: argparse.Namespace) -> admin_pb2.OwnerRequest:
    return admin_pb2.OwnerRequest(course=args.course, name=args.name)


def _disable(args: argparse.Namespace) -> int:
    owner = admin_call(args, "DisableOwner", _request(args))
    print(
        f"owner '{owner.name}' of course '{owner.course}' is disabled: its bots "
        f"({', '.join(owner.bots) or 'none'}) are refused until it is enabled"
    )
    return 0


def _enable(args: argparse.Namespace) -> int:
    owner = admin_call(args, "EnableOwner", _request(args))
    print(f"owner '{owner.name}' of course '{owner.course}' is enabled")
    return 0


def _issue(args: argparse.Namespace) -> int:
    answer = admin_call(args, "IssueOwnerToken", _request(args))
    who = f"owner '{answer.owner.name}' of course '{answer.owner.course}'"
    hand_over(
        answer.owner_token,
        args.owner_token_file,
        "--owner-token-file",
        saved=f"a new owner token for {who} is in {args.owner_token_file}; give it to them "
        "(the old one stopped working)",
        shown=f"a new owner token for {who}, shown only this once (the old one stopped working):",
    )
    return 0


def _rotate(args: argparse.Namespace) -> int:
    token = token_file(args.owner_token_file, "--owner-token-file")
    answer = registration_call(args, "RotateOwnerToken", admin_pb2.RotateOwnerTokenRequest(), token)
    write_token(args.owner_token_file, answer.owner_token, "--owner-token-file")
    print(
        f"{PROG}: owner '{answer.owner.name}' of course '{answer.owner.course}' has a new owner "
        f"token, written to {args.owner_token_file}; the old one stopped working",
        file=sys.stderr,
    )
    return 0


def _run(args: argparse.Namespace) -> int:
    run: Any = args.action_run
    result: int = run(args)
    return result


HANDLERS: Final[Handlers] = {"owner": Handler(_arguments, _run)}
