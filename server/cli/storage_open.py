"""Open a command's database: the one helper every command that reads or writes it calls.

Its own module, not ``serve``'s: ``domino-arena web`` (the web face's child process) opens the
database too, and importing ``serve`` would load the whole referee (gRPC, trio, the cluster's
NATS client) into a process that serves pages.
"""

from __future__ import annotations

from domino_arena.server.cli.arguments import CliError
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.engine import StorageError


def open_storage(url: str) -> RatedStorage:
    """Open the database at ``url``; a failure to is reported with exit status 1."""
    storage = RatedStorage(url)
    try:
        storage.open()
    except StorageError as exc:
        raise CliError(str(exc), code=1) from None
    return storage
