"""``course`` and ``invite`` (the admin API's courses and invite codes) and the bot owner's own
``bot register`` and ``bot rotate-own`` (``RegistrationService``: no admin token).

A course's organizer uses its organizer token where the admin token goes (``--admin-token-file``
or ``$DOMINO_ARENA_ADMIN_TOKEN``): the referee then answers for that course alone. A command
that makes a secret (``course create``, ``course rotate-token``, ``invite create``, ``bot
register`` without ``--token-file``) prints only the secrets on stdout, one a line, so
``TOKEN=$(domino-arena course create cs101)`` works; what it did goes to stderr. They are shown
this once: the referee keeps only their hashes.

This module imports grpc and the protos at the top: ``main`` imports it only when one of its
commands runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import grpc

from domino_arena.server.cli.admin_client import (
    admin_call,
    channel_tls,
    console,
    open_channel,
    rpc_error,
    token_file,
)
from domino_arena.server.cli.arguments import (
    PROG,
    CliError,
    Handler,
    Handlers,
    course_argument,
    server_arguments,
)
from domino_arena.server.cli.course_settings import (
    MAX_HUMAN_MOVE_SECONDS,
    baselines_of,
    limits_arguments,
    limits_of,
    limits_text,
    live_view_of,
    live_view_text,
    merged_limits,
    settings_arguments,
)
from domino_arena.server.cli.json_output import json_argument, message_json, print_json
from domino_arena.server.cli.moments import duration, moment
from domino_arena.server.cli.tables import table
from domino_arena.v1 import admin_pb2, admin_pb2_grpc

Run = Callable[[argparse.Namespace], int]


def _when(stamp: Any, present: bool) -> str:
    if not present:
        return "-"
    moment: dt.datetime = stamp.ToDatetime(tzinfo=dt.UTC)
    return f"{moment:%Y-%m-%d %H:%M} UTC"


# -- course -------------------------------------------------------------------------------------


def _course_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="course_action", metavar="ACTION", required=True)
    create = _action(
        actions,
        "create",
        "create a course (admin token) and print its organizer token (shown only once)",
        _course_create,
    )
    create.add_argument("name", metavar="NAME", help="the course's name (letters, digits, _ . -)")
    settings_arguments(create, update=False)
    listing = _action(actions, "list", "the courses (an organizer sees its own)", _course_list)
    json_argument(listing, "the courses")
    show = _action(actions, "show", "one course's settings and counts", _course_show)
    show.add_argument(
        "name", metavar="NAME", nargs="?", default="", help="default: the organizer's own"
    )
    json_argument(show, "the course")
    update = _action(actions, "update", "change a course's settings", _course_update)
    update.add_argument("name", metavar="NAME", help="the course")
    settings_arguments(update, update=True)
    limits_arguments(update, "unchanged; 0: back to the default")
    rotate = _action(
        actions,
        "rotate-token",
        "give a course a new organizer token (admin token; printed once, the old one stops)",
        _course_rotate,
    )
    rotate.add_argument("name", metavar="NAME", help="the course")


def _action(actions: Any, name: str, help_text: str, run: Run) -> argparse.ArgumentParser:
    sub: argparse.ArgumentParser = actions.add_parser(name, help=help_text, description=help_text)
    server_arguments(sub)
    sub.set_defaults(action_run=run)
    return sub


def _course_create(args: argparse.Namespace) -> int:
    request = admin_pb2.CreateCourseRequest(
        name=args.name,
        title=args.title or "",
        anonymous=args.anonymous,
        allow_same_owner_tables=args.allow_same_owner_tables,
        allow_same_owner_partners=args.allow_same_owner_partners,
        baselines=baselines_of(args),
        live_view=live_view_of(args),
    )
    answer = admin_call(args, "CreateCourse", request)
    if args.json:
        print_json(message_json(answer))
        return 0
    print(
        f"{PROG}: created course '{answer.course.name}' on the referee at {args.server}; its "
        "organizer token, shown only this once (give it to the course's organizer):",
        file=sys.stderr,
    )
    print(answer.organizer_token)
    return 0


def _course_rotate(args: argparse.Namespace) -> int:
    request = admin_pb2.RotateOrganizerTokenRequest(course=args.name)
    answer = admin_call(args, "RotateOrganizerToken", request)
    print(
        f"{PROG}: course '{answer.course.name}' has a new organizer token; the old one stopped "
        "working. The new token, shown only this once:",
        file=sys.stderr,
    )
    print(answer.organizer_token)
    return 0


def _course_rows(courses: Sequence[admin_pb2.Course]) -> list[tuple[str, ...]]:
    return [
        (
            c.name,
            c.title,
            str(c.bots),
            str(c.owners),
            ", ".join(f"{b.bot}={b.rating:g}" for b in c.baselines) or "-",
            "yes" if c.anonymous else "no",
            live_view_text(c.live_view, "public"),
            _when(c.created, c.HasField("created")),
        )
        for c in courses
    ]


_COURSE_COLUMNS: Final = [
    "course",
    "title",
    "bots",
    "owners",
    "baselines",
    "anonymous",
    "live view",
    "created",
]


def _course_list(args: argparse.Namespace) -> int:
    answer = admin_call(args, "ListCourses", admin_pb2.ListCoursesRequest())
    if args.json:
        print_json(message_json(answer))
        return 0
    if not answer.courses:
        print("no courses")
        return 0
    console().print(table(None, _COURSE_COLUMNS, _course_rows(answer.courses)))
    return 0


def _print_course(args: argparse.Namespace, course: admin_pb2.Course) -> int:
    if args.json:
        print_json(message_json(course))
        return 0
    console().print(table(None, _COURSE_COLUMNS, _course_rows([course])))
    rules = [
        f"same-owner tables {'allowed' if course.allow_same_owner_tables else 'never'}",
        f"same-owner partners {'allowed' if course.allow_same_owner_partners else 'never'}",
        "organizer token issued "
        + _when(course.organizer_token_issued, course.HasField("organizer_token_issued")),
        "hosted bots' limits: " + limits_text(course.hosting_limits, "the defaults"),
        f"a person's move {(course.human_move_ms or 60_000) / 1000:g} s"
        + ("" if course.human_move_ms else " (the default)"),
        f"tournaments analysed as they end: {'on' if course.analyse_tournaments else 'off'}",
    ]
    print("; ".join(rules))
    return 0


def _course_show(args: argparse.Namespace) -> int:
    answer = admin_call(args, "GetCourse", admin_pb2.GetCourseRequest(course=args.name))
    return _print_course(args, answer)


def _course_update(args: argparse.Namespace) -> int:
    if args.no_baselines and args.baseline:
        raise CliError("give --baseline or --no-baselines, not both")
    request = admin_pb2.UpdateCourseRequest(course=args.name)
    if args.title is not None:
        request.title = args.title
    for field in ("anonymous", "allow_same_owner_tables", "allow_same_owner_partners"):
        value = getattr(args, field)
        if value is not None:
            setattr(request, field, value)
    if args.baseline or args.no_baselines:
        request.set_baselines = True
        request.baselines.extend(baselines_of(args))
    request.live_view = live_view_of(args)  # unspecified: unchanged
    if args.human_move_seconds is not None:
        seconds = args.human_move_seconds
        if not 0 <= seconds <= MAX_HUMAN_MOVE_SECONDS:  # the referee refuses it too
            raise CliError(
                f"--human-move-seconds: expected 0-{MAX_HUMAN_MOVE_SECONDS} seconds, got "
                f"{seconds:g}"
            )
        request.human_move_ms = round(seconds * 1000)
    if args.analyse_tournaments is not None:
        request.analyse_tournaments = args.analyse_tournaments == "on"
    limits = limits_of(args)
    if limits:  # the others kept: read them first
        current = admin_call(args, "GetCourse", admin_pb2.GetCourseRequest(course=args.name))
        request.hosting_limits.CopyFrom(merged_limits(current.hosting_limits, limits))
    return _print_course(args, admin_call(args, "UpdateCourse", request))


# -- invite -------------------------------------------------------------------------------------


def _invite_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="invite_action", metavar="ACTION", required=True)
    create = _action(
        actions, "create", "make invite codes and print them (shown only once)", _invite_create
    )
    course_argument(create)
    create.add_argument("--count", type=int, required=True, metavar="N", help="codes to make")
    create.add_argument(
        "--uses",
        type=int,
        default=1,
        metavar="K",
        help="owners each code registers, each with a first bot (default 1)",
    )
    expiry = create.add_mutually_exclusive_group()
    expiry.add_argument("--expires", metavar="ISO", help="when they expire, e.g. 2026-12-31T23:59Z")
    expiry.add_argument(
        "--valid-for", metavar="DURATION", help="how long they last: 30m, 12h, 14d or 2w"
    )
    json_argument(create, "the codes")
    listing = _action(actions, "list", "a course's invites, newest first", _invite_list)
    course_argument(listing)
    json_argument(listing, "the invites")
    revoke = _action(actions, "revoke", "make an invite unusable (its bots stay)", _invite_revoke)
    revoke.add_argument("id", metavar="ID", help="the invite's id (as 'invite list' shows)")


def expiry_of(expires: str | None, valid_for: str | None, now: dt.datetime) -> dt.datetime | None:
    """The expiry ``--expires`` or ``--valid-for`` asks for (None: never).

    Raises:
        CliError: not a time with a zone, or not a length of time such as ``14d``.
    """
    if valid_for is not None:
        return now + duration("--valid-for", valid_for)
    if expires is None:
        return None
    return moment("--expires", expires, now=now)


def _invite_create(args: argparse.Namespace) -> int:
    request = admin_pb2.CreateInvitesRequest(course=args.course, count=args.count, uses=args.uses)
    expires = expiry_of(args.expires, args.valid_for, dt.datetime.now(dt.UTC))
    if expires is not None:
        request.expires.FromDatetime(expires.astimezone(dt.UTC))
    answer = admin_call(args, "CreateInvites", request)
    if args.json:
        print_json(message_json(answer))
        return 0
    first = answer.invites[0].invite if answer.invites else None
    course = first.course if first is not None else args.course
    until = _when(first.expires, first.HasField("expires")) if first is not None else "-"
    print(
        f"{PROG}: {len(answer.invites)} invite code(s) for course '{course}', each registering "
        f"{args.uses} owner(s), expiring {until if until != '-' else 'never'}; shown only this "
        f"once (a student runs '{PROG} bot register NAME --invite CODE --server {args.server}'):",
        file=sys.stderr,
    )
    for invite in answer.invites:
        print(invite.code)
    return 0


def _invite_list(args: argparse.Namespace) -> int:
    answer = admin_call(args, "ListInvites", admin_pb2.ListInvitesRequest(course=args.course))
    if args.json:
        print_json(message_json(answer))
        return 0
    if not answer.invites:
        print("no invites")
        return 0
    rows = [
        (
            i.id,
            i.course,
            f"{i.used}/{i.uses}",
            _when(i.expires, i.HasField("expires")),
            "revoked" if i.revoked else ("used up" if i.used >= i.uses else "open"),
            _when(i.created, i.HasField("created")),
        )
        for i in answer.invites
    ]
    columns = ["id", "course", "used", "expires", "state", "created"]
    console().print(table(None, columns, rows))
    return 0


def _invite_revoke(args: argparse.Namespace) -> int:
    answer = admin_call(args, "RevokeInvite", admin_pb2.RevokeInviteRequest(id=args.id))
    print(f"invite {answer.id} of course '{answer.course}' is revoked (its bots stay)")
    return 0


# -- bot register / bot rotate-own (RegistrationService) ----------------------------------------


def own_bot_actions(actions: Any) -> None:
    """Add ``register`` and ``rotate-own`` to ``bot``'s actions (server/cli/bots.py)."""
    register = actions.add_parser(
        "register",
        help="register a bot with an invite code (your first) or your owner token (the next)",
        description="Register the bot NAME. Your first bot: with the invite code the organizer "
        "gave you and --owner (who you are); the referee makes you an owner of its course and "
        "answers with your owner token and the bot's token, each shown only this once (the "
        "owner token written to --owner-token-file, else printed). Every later bot or version: "
        "with --owner-token-file alone. Tokens go to stdout, one a line, or to the files "
        "(created readable by you alone).",
    )
    register.add_argument("name", metavar="NAME", help="the bot's name (letters, digits, _ . -)")
    register.add_argument(
        "--invite", metavar="CODE", help="the invite code (your first registration)"
    )
    register.add_argument(
        "--owner",
        default="",
        metavar="O",
        help="with --invite: who you are (e.g. a login; default: the bot's name); later bots "
        "take your owner token instead",
    )
    register.add_argument(
        "--owner-token-file",
        metavar="FILE",
        help="with --invite: write your new owner token to FILE; without: read it from FILE",
    )
    register.add_argument("--token-file", metavar="FILE", help="write the token to FILE")
    server_arguments(register, token=False)
    register.set_defaults(bot_run=_bot_register)
    rotate = actions.add_parser(
        "rotate-own",
        help="give your bot a new token with its current one (rewrites --token-file)",
        description="Ask the referee for a new token for the bot NAME, authorised by its "
        "current token read from --token-file; the file is rewritten with the new one, the "
        "old one stops working and the bot's open stream is closed.",
    )
    rotate.add_argument("name", metavar="NAME", help="your bot's name")
    rotate.add_argument(
        "--token-file", required=True, metavar="FILE", help="its token (first line)"
    )
    server_arguments(rotate, token=False)
    rotate.set_defaults(bot_run=_bot_rotate_own)


def registration_call(
    args: argparse.Namespace, method: str, request: Any, token: str | None = None
) -> Any:
    """Call ``method`` of ``RegistrationService`` at ``args.server`` (with the bot's token)."""
    tls = channel_tls(args)
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    with open_channel(args.server, tls) as channel:
        stub = admin_pb2_grpc.RegistrationServiceStub(channel)
        try:
            return getattr(stub, method)(request, metadata=metadata)
        except grpc.RpcError as exc:
            raise rpc_error(args.server, exc, tls) from None


def write_token(path: str, token: str, option: str = "--token-file") -> None:
    """Write ``token`` to ``path`` readable by its owner alone, replacing it in one step (a
    crash leaves the old file or the new one, never half of one); ``option`` names the path in
    the error."""
    target = Path(path)
    try:
        handle, temporary = tempfile.mkstemp(dir=target.parent or Path.cwd(), prefix=".token-")
        with os.fdopen(handle, "w") as file:
            file.write(token + "\n")
        os.chmod(temporary, 0o600)
        os.replace(temporary, target)
    except OSError as exc:
        raise CliError(f"{option}: cannot write {path}: {exc.strerror or exc}") from None


def hand_over(secret: str, path: str | None, option: str, *, saved: str, shown: str) -> None:
    """Give a secret the referee answers only once: written to ``path`` (``option``'s file,
    readable by its owner alone) and ``saved`` said on stderr, or, without a file, ``shown``
    said on stderr and the secret alone on stdout (so ``$(...)`` captures just it)."""
    if path:
        write_token(path, secret, option)
        print(f"{PROG}: {saved}", file=sys.stderr)
        return
    print(f"{PROG}: {shown}", file=sys.stderr)
    print(secret)


def _register_request(args: argparse.Namespace) -> Any:
    """The RegisterBot request of ``args``: with an invite, or with the owner token file."""
    if args.invite:
        return admin_pb2.RegisterBotRequest(
            invite_code=args.invite, name=args.name, owner=args.owner
        )
    if not args.owner_token_file:
        raise CliError(
            "bot register: give --invite CODE (your first bot) or --owner-token-file FILE (the "
            "owner token your first registration gave you)"
        )
    if args.owner:
        raise CliError(
            "--owner: your owner token names you; register a later bot with "
            "--owner-token-file alone (an invite names a new owner)"
        )
    owner_token = token_file(args.owner_token_file, "--owner-token-file")
    return admin_pb2.RegisterBotRequest(name=args.name, owner_token=owner_token)


def _bot_register(args: argparse.Namespace) -> int:
    answer = registration_call(args, "RegisterBot", _register_request(args))
    where = f"course '{answer.bot.course}' on the referee at {args.server}"
    if answer.owner_token:
        who = f"you are owner '{answer.bot.owner}' of course '{answer.bot.course}'"
        hand_over(
            answer.owner_token,
            args.owner_token_file,
            "--owner-token-file",
            saved=f"{who}; your owner token is in {args.owner_token_file}: register every "
            f"later bot with 'bot register NAME --owner-token-file {args.owner_token_file}'",
            shown=f"{who}; your owner token, shown only this once (register every later "
            "bot with it: save it to a file, 'bot register NAME --owner-token-file FILE'):",
        )
    registered = f"registered bot '{answer.bot.name}' in {where}"
    hand_over(
        answer.token,
        args.token_file,
        "--token-file",
        saved=f"{registered}; its token is in {args.token_file} (run it with --token-file "
        f"{args.token_file})",
        shown=f"{registered}; its token, shown only this once:",
    )
    return 0


def _bot_rotate_own(args: argparse.Namespace) -> int:
    token = token_file(args.token_file, "--token-file")
    request = admin_pb2.RotateOwnTokenRequest(name=args.name)
    answer = registration_call(args, "RotateOwnToken", request, token)
    write_token(args.token_file, answer.token)
    print(
        f"{PROG}: bot '{answer.bot.name}' has a new token, written to {args.token_file}; the "
        "old one stopped working and its open stream was closed",
        file=sys.stderr,
    )
    return 0


def _run(args: argparse.Namespace) -> int:
    run: Run = args.action_run
    return run(args)


HANDLERS: Final[Handlers] = {
    "course": Handler(_course_arguments, _run),
    "invite": Handler(_invite_arguments, _run),
}
