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
