"""``bot add``: create a bot by writing a database directly, with no referee.

The one ``bot`` action that reads a database, so the one that needs the server extra:
:mod:`.bots` imports this module only when it runs (docs/admin.md: the light install).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from domino_arena.server.cli.arguments import PROG, CliError
from domino_arena.server.cli.storage_open import open_storage
from domino_arena.server.store.bots import BadBotNameError, DuplicateBotError, check_name
from domino_arena.server.store.engine import display_url


def run(args: argparse.Namespace) -> int:
    try:
        check_name(args.name)
    except BadBotNameError as exc:
        raise CliError(str(exc)) from None
    storage = open_storage(args.db)
    try:
        token = storage.add_bot(args.name)
    except DuplicateBotError as exc:
        raise CliError(f"{exc}; pick another name") from None
    finally:
        storage.close()
    print(
        f"{PROG}: created bot '{args.name}' in the database {database_shown(args.db)}; "
        "its token, shown only this once:",
        file=sys.stderr,
    )
    print(token)
    return 0


def database_shown(url: str) -> str:
    """``url`` with its password hidden; a SQLite file also by its absolute path, since a
    relative one (the default ``sqlite:///domino-arena.db``) is in the current directory."""
    shown = display_url(url)
    try:
        parsed = make_url(url)
    except ArgumentError:
        return shown
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        path = Path(parsed.database or "")
        if not path.is_absolute():
            shown += f" (the file {path.resolve()})"
    return shown
