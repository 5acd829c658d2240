"""Provable deals: a published commitment to a tournament's master seed, and its deal seeds.

Why: a referee that picks the seeds could pick deals that favour a bot, and a bot that learnt a
seed before its game ends could compute every hidden tile. So, from deal scheme 2 on, the
referee draws a fresh random salt when a tournament is created and publishes at once

    commitment = SHA-256("domino-arena/commit/v2/{seed}/{salt}")  (hex; ASCII bytes, seed in
                                                                   decimal, salt in hex)

It derives every deal's seed from the master seed alone, by a scheme anyone can recompute:

    deal seed = SHA-256("domino-arena/deal/v2/{seed}/{deal_id}")[:8] read big-endian,
                with the top bit cleared (so it fits a match seed, 0 to ``MAX_SEED``)

A game's seed is revealed in its record once it ends; the master seed and the salt once the
tournament ends (``StoredTournament.seed_revealed``, the one reveal rule). Then anyone can
check the commitment (so the master seed was fixed before the first game) and recompute every
deal (``domino-arena verify``). The salt keeps the commitment from being inverted by trying
seeds: a master seed has only 63 bits.

Scheme 1 is the seeding of tournaments created before provable deals (no commitment, a
``random.Random`` keyed by a string); it is kept so their games still replay and resume on the
same deals.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import re
import secrets
from typing import Final

from domino_arena.sdk.match.seeds import MAX_SEED, check_seed

SCHEMES: Final = (1, 2)
"""The deal schemes a tournament row may name."""
CURRENT_SCHEME: Final = 2
"""The scheme of every new tournament."""
SALT_BYTES: Final = 16
"""Random bytes of a salt (shown as 32 hex digits)."""
_SALT: Final = re.compile(r"[0-9a-f]{1,64}")


class CommitmentError(ValueError):
    """A revealed seed and salt that do not give the published commitment, or a bad field."""


def new_commitment(seed: int) -> tuple[str, str]:
    """Return a fresh salt and the commitment of scheme :data:`CURRENT_SCHEME` to ``seed``."""
    salt = secrets.token_hex(SALT_BYTES)
    return salt, commitment_of(seed, salt)


def commitment_of(seed: int, salt: str, scheme: int = CURRENT_SCHEME) -> str:
    """Return the SHA-256 hex commitment to master seed ``seed`` with ``salt`` (scheme 2 on).

    Raises:
        CommitmentError: scheme 1 has no commitment, or the seed or salt is malformed.
    """
    _check_scheme(scheme)
    if scheme == 1:
        raise CommitmentError("deal_scheme: scheme 1 (before provable deals) has no commitment")
    _check_seed(seed)
    _check_salt(salt)
    text = f"domino-arena/commit/v{scheme}/{seed}/{salt}"
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def deal_seed(scheme: int, seed: int, deal_id: int) -> int:
    """Return the seed of deal ``deal_id`` of a tournament with master seed ``seed``.

    Raises:
        CommitmentError: an unknown scheme, a seed out of range or a negative deal id.
    """
    _check_scheme(scheme)
    _check_seed(seed)
    if deal_id < 0:
        raise CommitmentError(f"deal_id: must be 0 or more, got {deal_id}")
    if scheme == 1:
        return random.Random(f"domino-arena/deal/{seed}/{deal_id}").getrandbits(63)
    digest = hashlib.sha256(f"domino-arena/deal/v{scheme}/{seed}/{deal_id}".encode("ascii"))
    return int.from_bytes(digest.digest()[:8], "big") & MAX_SEED


def check(*, scheme: int, seed: int, salt: str, commitment: str) -> None:
    """Check that the revealed ``seed`` and ``salt`` give the published ``commitment``.

    Raises:
        CommitmentError: they do not (the message shows both hashes), or a field is malformed.
    """
    expected = commitment_of(seed, salt, scheme)
    if not hmac.compare_digest(expected, commitment.lower()):
        raise CommitmentError(
            f"seed_commitment: the published commitment is {commitment!r}, but seed {seed} "
            f"with salt {salt!r} gives {expected!r}"
        )


def _check_scheme(scheme: int) -> None:
    if scheme not in SCHEMES:
        raise CommitmentError(f"deal_scheme: expected one of {list(SCHEMES)}, got {scheme}")


def _check_seed(seed: int) -> None:
    try:
        check_seed(seed)
    except ValueError as exc:
        raise CommitmentError(str(exc)) from None


def _check_salt(salt: str) -> None:
    if _SALT.fullmatch(salt) is None:
        raise CommitmentError(f"seed_salt: expected 1-64 lowercase hex digits, got {salt!r}")
