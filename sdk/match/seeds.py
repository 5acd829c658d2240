"""The range of a match's seed, checked in one place.

A seed fixes every shuffle of a match, so it is stored with the match and carried in records and
admin requests; a signed 64-bit column on every database bounds it.
"""

from __future__ import annotations

import random
from typing import Final

MAX_SEED: Final = 2**63 - 1
"""The largest seed a match can have."""


def check_seed(seed: int, field: str = "seed") -> int:
    """Return ``seed`` if it is a valid match seed, else raise ``ValueError`` naming ``field``."""
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"{field}: must be from 0 to {MAX_SEED}, got {seed}")
    return seed


def random_seed() -> int:
    """Return a fresh seed from the operating system's randomness, for a match or a session
    given none (it is stored, so the games can still be replayed)."""
    return random.SystemRandom().randrange(MAX_SEED + 1)


def bot_seed(seed: int, seat: int) -> int:
    """Return the own random seed of the bot in ``seat`` of a match played from ``seed``.

    The referee and local play send it in the match's start (``MatchStartInfo.bot_seed``), and
    the referee seeds the house bots it hosts with it, so a bot that draws its randomness from
    it plays a match alike on every replay, whichever process plays it and in whatever order
    its matches come (docs/referee.md). ``random.Random`` hashes the text with SHA-512, so the
    32 bits tell a bot nothing of the deal's seed.
    """
    return random.Random(f"domino-arena/bot/{seed}/{seat}").getrandbits(32)
