"""``domino-arena keys new --out PREFIX``: the Ed25519 key pair a referee signs its records with.

``serve --record-key PREFIX.key`` signs every record the admin API hands out; another arena
trusts them with ``import --trust-key PREFIX.pub`` (docs/admin.md, "Signed records"). The
signing code is ``server/play/record_signing.py``; it imports ``cryptography``, so this module
imports it only when a key is made or loaded.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Final

from domino_arena.server.cli.arguments import CliError, Handler, Handlers, server_extra


def record_signer(path: str | None) -> Callable[[str], str] | None:
    """The signer of ``serve --record-key PATH``; None without one.

    Raises:
        CliError: the file is no unencrypted PEM Ed25519 private key.
    """
    if path is None:
        return None
    from domino_arena.server.play.record_signing import KeyFileError, RecordSigner  # noqa: PLC0415

    try:
        return RecordSigner.load(path)
    except KeyFileError as exc:
        raise CliError(str(exc)) from None


def _arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="keys_action", metavar="ACTION", required=True)
    new = actions.add_parser(
        "new",
        help="make a key pair: PREFIX.key (private, mode 0600) and PREFIX.pub",
        description="make a key pair: PREFIX.key (private, mode 0600: give it to `serve "
        "--record-key`) and PREFIX.pub (public: give it to the arenas that import the "
        "records, `import --trust-key`); existing files are never overwritten",
    )
    new.add_argument("--out", required=True, metavar="PREFIX", help="write PREFIX.key and .pub")


def _run(args: argparse.Namespace) -> int:
    with server_extra("keys new"):  # cryptography: the light install has none
        from domino_arena.server.play.record_signing import (  # noqa: PLC0415
            KeyFileError,
            new_key_pair,
        )
    try:
        private, public, key = new_key_pair(args.out)
    except KeyFileError as exc:
        raise CliError(str(exc)) from None
    print(f"key {key}: private {private} (keep it secret: serve --record-key {private})")
    print(f"public {public} (for the importing arenas: import --trust-key {public})")
    return 0


HANDLERS: Final[Handlers] = {"keys": Handler(_arguments, _run)}
