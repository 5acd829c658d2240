"""Provable deals (server/play/provable.py): the scheme as docs/tournaments.md states it.

The known vectors are computed here with hashlib from the documented strings, independently of
the module, so a change to the scheme (which would change every deal of every tournament) fails.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re
from pathlib import Path
from typing import Any

import pytest

from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.match.seeds import MAX_SEED
from domino_arena.sdk.rules import make_game
from domino_arena.server.play import provable
from domino_arena.server.play.provable import CommitmentError
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.tournaments.lifecycle import (
    compare,
    deal_seed,
    match_spec,
    new_tournament,
    schedule_of,
)
from domino_arena.server.tournaments.lifecycle.compare import new_comparison


def documented_commitment(seed: int, salt: str) -> str:
    return hashlib.sha256(f"domino-arena/commit/v2/{seed}/{salt}".encode("ascii")).hexdigest()


def documented_deal_seed(seed: int, deal_id: int) -> int:
    digest = hashlib.sha256(f"domino-arena/deal/v2/{seed}/{deal_id}".encode("ascii")).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


@pytest.mark.parametrize(
    ("seed", "salt"), [(0, "00"), (5, "ab" * 16), (MAX_SEED, "0123456789abcdef" * 4)]
)
def test_the_commitment_is_the_documented_hash(seed: int, salt: str) -> None:
    assert provable.commitment_of(seed, salt) == documented_commitment(seed, salt)
    provable.check(
        scheme=2, seed=seed, salt=salt, commitment=documented_commitment(seed, salt).upper()
    )


def test_a_known_vector() -> None:
    """Written out once, so the documented strings themselves are pinned."""
    assert (
        provable.commitment_of(42, "00ff")
        == hashlib.sha256(b"domino-arena/commit/v2/42/00ff").hexdigest()
    )
    digest = hashlib.sha256(b"domino-arena/deal/v2/42/7").digest()
    assert provable.deal_seed(2, 42, 7) == int.from_bytes(digest[:8], "big") % 2**63


@pytest.mark.parametrize("seed", [0, 1, 123_456_789, MAX_SEED])
def test_scheme_2_deal_seeds_are_the_documented_hash_and_fit_a_match(seed: int) -> None:
    for deal_id in (0, 1, 2, 999, 100_000):
        got = provable.deal_seed(2, seed, deal_id)
        assert got == documented_deal_seed(seed, deal_id)
        assert 0 <= got <= MAX_SEED


def test_scheme_1_is_the_seeding_before_provable_deals() -> None:
    for seed, deal_id in [(0, 0), (7, 3), (MAX_SEED, 12)]:
        expected = random.Random(f"domino-arena/deal/{seed}/{deal_id}").getrandbits(63)
        assert provable.deal_seed(1, seed, deal_id) == expected


def test_new_commitments_have_a_fresh_salt_each() -> None:
    (salt_a, commitment_a), (salt_b, commitment_b) = (
        provable.new_commitment(9),
        provable.new_commitment(9),
    )
    assert re.fullmatch("[0-9a-f]{32}", salt_a) and salt_a != salt_b
    assert commitment_a == documented_commitment(9, salt_a) != commitment_b


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"seed": 6}, "seed 6 with salt 'aa' gives"),
        ({"salt": "ab"}, "seed 5 with salt 'ab' gives"),
        ({"commitment": "0" * 64}, "the published commitment is '000"),
    ],
)
def test_a_mismatch_names_the_commitment_and_both_hashes(
    change: dict[str, object], words: str
) -> None:
    fields: dict[str, object] = {
        "scheme": 2,
        "seed": 5,
        "salt": "aa",
        "commitment": documented_commitment(5, "aa"),
    }
    fields.update(change)
    with pytest.raises(CommitmentError, match=r"^seed_commitment: ") as caught:
        provable.check(**fields)  # type: ignore[arg-type]
    assert words in str(caught.value)


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: provable.deal_seed(3, 1, 0), "deal_scheme: expected one of [1, 2], got 3"),
        (lambda: provable.deal_seed(2, -1, 0), "seed: must be from 0 to"),
        (lambda: provable.deal_seed(2, 1, -1), "deal_id: must be 0 or more, got -1"),
        (lambda: provable.commitment_of(1, "AB"), "seed_salt: expected 1-64 lowercase hex"),
        (lambda: provable.commitment_of(1, ""), "seed_salt: expected 1-64 lowercase hex"),
        (lambda: provable.commitment_of(1, "a b"), "seed_salt: expected 1-64 lowercase hex"),
        (lambda: provable.commitment_of(1, "aa", 1), "deal_scheme: scheme 1 (before provable"),
    ],
)
def test_bad_fields_are_named(call: object, words: str) -> None:
    with pytest.raises(CommitmentError) as caught:
        call()  # type: ignore[operator]
    assert str(caught.value).startswith(words)


def test_a_new_tournament_commits_to_its_seed_and_deals_by_scheme_2() -> None:
    t = new_tournament(
        name="cup",
        game=make_game("passing"),
        entrants=["a", "b", "c"],
        known_bots=["a", "b", "c"],
        time_control=TimeControl(),
        fault_policy=FaultPolicy.SUBSTITUTE,
        seed=77,
    )
    assert t.deal_scheme == 2 and t.seed_commitment == documented_commitment(77, t.seed_salt)
    for g in schedule_of(t):
        assert (
            match_spec(t, g).seed == deal_seed(t, g.deal_id) == documented_deal_seed(77, g.deal_id)
        )


def test_a_tournament_stored_before_provable_deals_keeps_its_deals() -> None:
    t = new_tournament(
        name="old cup",
        game=make_game("passing"),
        entrants=["a", "b"],
        known_bots=["a", "b"],
        time_control=TimeControl(),
        fault_policy=FaultPolicy.SUBSTITUTE,
        seed=3,
    )
    old = dataclasses.replace(t, deal_scheme=1, seed_commitment="", seed_salt="")
    for g in schedule_of(old):
        expected = random.Random(f"domino-arena/deal/3/{g.deal_id}").getrandbits(63)
        assert match_spec(old, g).seed == expected


def test_a_new_comparison_commits_to_its_seed_too() -> None:
    t = new_comparison(
        game=make_game("passing"),
        candidate="a",
        baseline="b",
        known_bots=["a", "b"],
        max_sets=3,
        time_control=TimeControl(),
        fault_policy=FaultPolicy.SUBSTITUTE,
        seed=8,
    )
    assert t.deal_scheme == 2 and t.seed_commitment == documented_commitment(8, t.seed_salt)
    seeds = {
        g.deal_id: match_spec(t, g).seed for g in compare.compare_schedule(compare.plan_of(t), 2)
    }
    assert seeds == {d: documented_deal_seed(8, d) for d in range(3)}


def test_the_documented_python_recomputes_the_scheme() -> None:
    """docs/tournaments.md's few lines are the scheme: run them against the module."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "tournaments.md"
    section = docs.read_text(encoding="utf-8").split("## Provable deals", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None, "no python block in docs/tournaments.md: provable deals"
    scope: dict[str, Any] = {}
    exec(code.group(1), scope)  # the documentation's own code, nothing else
    salt, commitment = provable.new_commitment(123)
    assert scope["commitment"](123, salt) == commitment
    for deal_id in (0, 1, 57):
        assert scope["deal_seed"](123, deal_id) == provable.deal_seed(2, 123, deal_id)
