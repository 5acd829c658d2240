"""A tournament's page shows its seed commitment always, its seed and salt only once it is over
(provable deals, docs/tournaments.md): the page and its JSON, while running and after."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play.provable import new_commitment
from domino_arena.server.store.tournaments import TournamentState
from tests.fakes.web import TOURNAMENT_ID, a_tournament, web_app

SEED = 987_654_321_012


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[RatedStorage]:
    storage = RatedStorage(f"sqlite:///{tmp_path / 'arena.db'}")
    storage.open()
    yield storage
    storage.close()


def shown(
    storage: RatedStorage, state: TournamentState, salt: str, commitment: str
) -> tuple[dict[str, Any], str]:
    t = dataclasses.replace(
        a_tournament("cup"),
        seed=SEED,
        seed_salt=salt,
        seed_commitment=commitment,
        deal_scheme=2,
        state=state,
    )
    storage.add_tournament(t)
    with TestClient(web_app(storage)) as client:
        data = client.get(f"/api/tournaments/{TOURNAMENT_ID}").json()
        page = client.get(f"/tournaments/{TOURNAMENT_ID}").text
    return data, page


@pytest.mark.parametrize(
    "state", [TournamentState.CREATED, TournamentState.RUNNING, TournamentState.PAUSED]
)
def test_before_the_end_only_the_commitment_is_shown(
    storage: RatedStorage, state: TournamentState
) -> None:
    salt, commitment = new_commitment(SEED)
    data, page = shown(storage, state, salt, commitment)
    assert data["seed_commitment"] == commitment and data["deal_scheme"] == 2
    assert data["seed"] is None and data["seed_salt"] is None
    assert commitment in page and "the seed is shown when the tournament ends" in page
    for secret in (str(SEED), f"{SEED:x}", salt):
        assert secret not in page and secret not in str(data)


@pytest.mark.parametrize("state", [TournamentState.FINISHED, TournamentState.CANCELLED])
def test_once_over_the_seed_and_salt_are_shown_with_how_to_verify(
    storage: RatedStorage, state: TournamentState
) -> None:
    salt, commitment = new_commitment(SEED)
    data, page = shown(storage, state, salt, commitment)
    assert (data["seed"], data["seed_salt"], data["seed_commitment"]) == (SEED, salt, commitment)
    assert f'<code class="seed">{SEED}</code>' in page
    assert f'<code class="salt">{salt}</code>' in page
    assert f"domino-arena verify {TOURNAMENT_ID}" in page
