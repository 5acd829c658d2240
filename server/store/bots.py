"""The bots the referee knows: their names and their tokens.

A bot's token is shown once, when the bot is created, and stored only as a salted SHA-256 hash
(the text names the scheme, so it can change later without breaking old bots).
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import re
import secrets
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from domino_arena.server.store.tables import BOTS, now

NAME_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A bot name: 1-64 letters, digits, ``_``, ``.`` or ``-``, starting with a letter or digit."""

# Tokens are 256 random bits, not passwords: no brute force can guess one, so a slow key
# stretch (scrypt) protects nothing and cost 50 ms of CPU and 16 MiB per login (1,000 bots
# logging in at once held 287 MiB). A salted SHA-256, as API-token stores use, suffices.
_HASH_PATTERN: Final = re.compile(r"^sha256\$([0-9a-f]{32})\$([0-9a-f]{64})$")


class DuplicateBotError(ValueError):
    """A bot with that name exists already."""


class BadBotNameError(ValueError):
    """A bot name outside :data:`NAME_PATTERN`."""


class BotCheck(enum.Enum):
    """The answer to "is this the bot it claims to be?"."""

    OK = "ok"
    UNKNOWN = "unknown bot"
    WRONG_TOKEN = "wrong token"


def check_name(name: str) -> None:
    """Raise :class:`BadBotNameError` unless ``name`` may name a bot."""
    if not NAME_PATTERN.match(name):
        raise BadBotNameError(
            f"bad bot name '{name}': use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )


def new_token() -> str:
    """Return a new secret token: 256 random bits as 64 hex digits.

    Hex, not URL-safe base64: a token that begins with ``-`` reads as an option on a command
    line (``--token -x...``), and one in 64 base64 tokens would.
    """
    return secrets.token_hex(32)


def hash_token(token: str) -> str:
    """Return the salted SHA-256 hash of ``token`` as text that names its scheme."""
    salt = secrets.token_bytes(16)
    return f"sha256${salt.hex()}${hashlib.sha256(salt + token.encode()).hexdigest()}"


def token_matches(token: str, stored: str) -> bool:
    """Say whether ``token`` hashes to ``stored`` (compared in constant time)."""
    match = _HASH_PATTERN.match(stored)
    if match is None:
        return False
    salt, expected = bytes.fromhex(match.group(1)), bytes.fromhex(match.group(2))
    return hmac.compare_digest(hashlib.sha256(salt + token.encode()).digest(), expected)


def add_bot(engine: Engine, name: str) -> str:
    """Create the bot ``name`` and return its new token; only its hash is kept.

    Raises:
        BadBotNameError: ``name`` does not fit :data:`NAME_PATTERN`.
        DuplicateBotError: a bot of that name exists.
    """
    check_name(name)
    token = new_token()
    row = {"name": name, "token_hash": hash_token(token), "created": now()}
    try:
        with engine.begin() as connection:
            connection.execute(BOTS.insert().values(row))
    except IntegrityError:
        raise DuplicateBotError(f"a bot named '{name}' exists already") from None
    return token


def check_bot(engine: Engine, name: str, token: str) -> BotCheck:
    """Say whether ``token`` is the token of the bot ``name``."""
    with engine.connect() as connection:
        stored = connection.execute(
            sa.select(BOTS.c.token_hash).where(BOTS.c.name == name)
        ).scalar_one_or_none()
    if stored is None:
        return BotCheck.UNKNOWN
    return BotCheck.OK if token_matches(token, stored) else BotCheck.WRONG_TOKEN


def bot_names(engine: Engine) -> list[str]:
    """Return the names of every bot, sorted."""
    with engine.connect() as connection:
        return list(connection.execute(sa.select(BOTS.c.name).order_by(BOTS.c.name)).scalars())
