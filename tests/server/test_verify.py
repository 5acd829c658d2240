"""``domino-arena verify`` (server/cli/verify.py): a finished tournament verifies; a changed
seed, salt, deal or move fails, naming the match and the field.

The tournament is real: the row of ``new_tournament`` (deal scheme 2, a fresh salt) and its
schedule, every game played in-process from the seed the runner gives it, its record written as
the arena writes it. The command runs against the admin API over real gRPC (a fake arena over a
SQLite file, tests/fakes/admin_server.py).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.records import parse_record, record_lines
from domino_arena.sdk.match.results import FaultPolicy
from domino_arena.sdk.rules import make_game
from domino_arena.server.cli.verify import Revealed, StoredGame, verify
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play.match_spec import FinishedMatch
from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tournaments import StoredTournament, TournamentState
from domino_arena.server.tournaments.lifecycle import match_spec, new_tournament, schedule_of
from domino_arena.server.tournaments.lifecycle.regrade import regrade_of
from tests.cli.harness import run
from tests.fakes.admin_server import TOKEN, AdminServer, FakeArena
from tests.fakes.games import random_bots

BOTS = ("alice", "bob", "carol")


def finished_tournament() -> tuple[StoredTournament, list[StoredMatch]]:
    """A passing round robin of three bots (duplicate deals), every game played and recorded."""
    game = make_game("passing")
    t = new_tournament(
        name="verified cup",
        game=game,
        entrants=BOTS,
        known_bots=BOTS,
        time_control=TimeControl(),
        fault_policy=FaultPolicy.FORFEIT,
        seed=None,
        tournament_id="cup",
    )
    return dataclasses.replace(t, state=TournamentState.FINISHED), played_games(t)


def played_games(
    t: StoredTournament, carried: dict[int, StoredMatch] | None = None
) -> list[StoredMatch]:
    """Every game of ``t`` played and recorded, but those ``carried`` (game index -> the
    original's row), copied as a regrade's runner copies them."""
    game = make_game("passing")
    rows = []
    for g in schedule_of(t):
        spec = match_spec(t, g, game=game)
        old = (carried or {}).get(g.index)
        if old is not None:
            rows.append(
                dataclasses.replace(old, id=spec.match_id, tournament_id=t.id, carried_from=old.id)
            )
            continue
        played = play_game(
            game,
            random_bots(game, g.index),
            spec.seed,
            names=g.seats,
            timer=None,
            match_id=spec.match_id,
        )
        record = "".join(line + "\n" for line in record_lines(played.record))
        rows.append(FinishedMatch(spec, played.result, record, (0, 0)).to_row())
    return rows


@pytest.fixture(scope="module")
def cup() -> tuple[StoredTournament, list[StoredMatch]]:
    return finished_tournament()


def revealed_of(t: StoredTournament) -> Revealed:
    return Revealed(t.id, t.deal_scheme, t.seed, t.seed_salt, t.seed_commitment)


def game_of(row: StoredMatch) -> StoredGame:
    assert row.deal_id is not None and row.record is not None
    return StoredGame(row.id, row.deal_id, row.seed, row.seats, row.record)


def failures(t: StoredTournament, rows: list[StoredMatch]) -> list[str]:
    return [str(f) for f in verify(revealed_of(t), [game_of(r) for r in rows]).failures]


def replace_line(record: str, index: int, old: str, new: str) -> str:
    lines = record.splitlines(keepends=True)
    assert old in lines[index], lines[index]
    lines[index] = lines[index].replace(old, new, 1)
    return "".join(lines)


# -- the checks, on the report --------------------------------------------------------------------


def test_a_finished_tournament_verifies(cup: tuple[StoredTournament, list[StoredMatch]]) -> None:
    t, rows = cup
    report = verify(revealed_of(t), [game_of(r) for r in rows])
    assert report.ok and report.commitment_ok, report.failures
    assert report.games == report.replayed == len(schedule_of(t)) == 6


def test_a_changed_salt_or_seed_breaks_the_commitment(
    cup: tuple[StoredTournament, list[StoredMatch]],
) -> None:
    t, rows = cup
    salted = dataclasses.replace(t, seed_salt="0" * 32)
    [message] = failures(salted, rows)
    assert message.startswith("tournament: seed_commitment: the published commitment is")
    assert "with salt '00000000000000000000000000000000' gives" in message
    reseeded = dataclasses.replace(t, seed=t.seed ^ 1)
    found = failures(reseeded, rows)
    assert found[0].startswith("tournament: seed_commitment: ")
    assert len(found) > len(rows)  # and every game's seed is then another one


def test_a_changed_stored_seed_names_the_match_and_field(
    cup: tuple[StoredTournament, list[StoredMatch]],
) -> None:
    t, rows = cup
    changed = [*rows]
    changed[3] = dataclasses.replace(rows[3], seed=rows[3].seed + 1)
    [message] = failures(t, changed)
    assert message.startswith(f"match {rows[3].id}: seed: the stored game has seed ")
    assert f"but deal {rows[3].deal_id} of master seed {t.seed} (scheme 2) is {rows[3].seed}" in (
        message
    )


def test_a_record_of_another_deal_fails_on_its_seed_and_its_replay(
    cup: tuple[StoredTournament, list[StoredMatch]],
) -> None:
    """The record's header names the seed its deals come from: another seed is another deal,
    and the moves recorded do not fit the deal the committed seed makes."""
    t, rows = cup
    other = next(r for r in rows if r.deal_id != rows[0].deal_id)
    assert rows[0].record is not None and other.record is not None
    forged = replace_line(rows[0].record, 0, f'"seed": {rows[0].seed}', f'"seed": {other.seed}')
    found = failures(t, [dataclasses.replace(rows[0], record=forged), *rows[1:]])
    assert found[0] == (
        f"match {rows[0].id}: record seed: the record's header has seed {other.seed}, but deal "
        f"{rows[0].deal_id} is {rows[0].seed}"
    )
    assert len(found) == 1  # its moves are still those of the right deal


def test_a_changed_move_fails_its_replay_at_its_step(
    cup: tuple[StoredTournament, list[StoredMatch]],
) -> None:
    """A move the seat could not make on the committed deal (a tile it does not hold)."""
    t, rows = cup
    row = rows[1]
    assert row.record is not None
    record = parse_record(row.record)
    state = make_game(record.game, **record.options).new_game(
        record.seed, first_seat=record.first_seat
    )
    index = 0
    while not str(record.steps[index].action).startswith("play "):
        state = state.apply(record.steps[index].action)
        index += 1
    legal = {str(a) for a in state.legal_actions()}
    played = str(record.steps[index].action)
    forged_action = next(
        f"play {a}-{b}" for a in range(7) for b in range(a + 1) if f"play {a}-{b}" not in legal
    )
    line = index + 1  # the header is line 0 of the split text
    forged = replace_line(row.record, line, f'"action": "{played}"', f'"action": "{forged_action}"')
    [message] = failures(t, [rows[0], dataclasses.replace(row, record=forged), *rows[2:]])
    assert message.startswith(f"match {row.id}: record: does not replay from seed {row.seed}: ")
    assert f"step {index} (line {index + 2})" in message


def test_a_tournament_from_before_provable_deals_has_no_commitment_to_check(
    cup: tuple[StoredTournament, list[StoredMatch]],
) -> None:
    t, _ = cup
    old = dataclasses.replace(t, deal_scheme=1, seed_commitment="", seed_salt="")
    report = verify(revealed_of(old), [])
    [failure] = report.failures
    assert (failure.match_id, failure.field) == ("", "seed_commitment")
    assert "none published (deal scheme 1, before provable deals)" in failure.message


# -- the command, through the admin API ------------------------------------------------------------


@pytest.fixture
def referee(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdminServer]:
    monkeypatch.delenv("DOMINO_ARENA_SERVER", raising=False)
    monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", TOKEN)
    storage = RatedStorage(f"sqlite:///{tmp_path / 'verify.db'}")
    storage.open()
    for name in BOTS:
        storage.add_bot(name)
    server = AdminServer(FakeArena(storage))
    yield server
    server.close()
    storage.close()


def stored(server: AdminServer, t: StoredTournament, rows: list[StoredMatch]) -> None:
    storage = server.arena.storage
    storage.add_tournament(t)
    for row in rows:
        storage.save_match(row)


def test_verify_passes_on_a_finished_tournament(
    capsys: pytest.CaptureFixture[str],
    referee: AdminServer,
    cup: tuple[StoredTournament, list[StoredMatch]],
) -> None:
    t, rows = cup
    stored(referee, t, rows)
    code, out, err = run(capsys, "verify", t.id, "--server", referee.address)
    assert (code, err) == (0, ""), out
    assert out.splitlines() == [
        f"tournament {t.id}: deal scheme 2",
        f"  commitment {t.seed_commitment}: matches seed {t.seed} with salt {t.seed_salt}",
        "  6 games checked, 6 records replayed",
        "OK: every deal is the one the committed seed gives",
    ]
    code, out, _ = run(capsys, "verify", t.id, "--json", "--server", referee.address)
    report = json.loads(out)
    assert code == 0 and report["ok"] and report["games"] == 6 and report["failures"] == []


def test_verify_fails_on_an_altered_record_and_names_it(
    capsys: pytest.CaptureFixture[str],
    referee: AdminServer,
    cup: tuple[StoredTournament, list[StoredMatch]],
) -> None:
    t, rows = cup
    assert rows[2].record is not None
    other_seed = rows[2].seed + 1
    forged = replace_line(rows[2].record, 0, f'"seed": {rows[2].seed}', f'"seed": {other_seed}')
    stored(referee, t, [*rows[:2], dataclasses.replace(rows[2], record=forged), *rows[3:]])
    code, out, err = run(capsys, "verify", t.id, "--server", referee.address)
    assert (code, err) == (1, "")
    assert (
        f"  FAILED match {rows[2].id}: record seed: the record's header has seed {other_seed}"
        in (out)
    )
    assert out.splitlines()[-1] == "FAILED: 1 problem"
    code, out, _ = run(capsys, "verify", t.id, "--json", "--server", referee.address)
    [failure] = json.loads(out)["failures"]
    assert code == 1 and (failure["match_id"], failure["field"]) == (rows[2].id, "record seed")


@pytest.mark.parametrize("state", [TournamentState.CREATED, TournamentState.RUNNING])
def test_verify_refuses_a_tournament_that_is_not_over(
    capsys: pytest.CaptureFixture[str],
    referee: AdminServer,
    cup: tuple[StoredTournament, list[StoredMatch]],
    state: TournamentState,
) -> None:
    t, rows = cup
    stored(referee, dataclasses.replace(t, state=state), rows[:2])
    code, out, err = run(capsys, "verify", t.id, "--server", referee.address)
    assert (code, out) == (2, "")
    assert err == (
        f"domino-arena: error: tournament {t.id} is {state.value}: its seed is revealed only "
        f"once it is finished or cancelled, so there is nothing to verify yet (its commitment "
        f"is {t.seed_commitment})\n"
    )


# -- the command, from the database ----------------------------------------------------------------


def database_with(tmp_path: Path, t: StoredTournament, rows: list[StoredMatch]) -> str:
    url = f"sqlite:///{tmp_path / 'referee.db'}"
    storage = RatedStorage(url)
    storage.open()
    try:
        storage.add_tournament(t)
        for row in rows:
            storage.save_match(row)
    finally:
        storage.close()
    return url


def test_verify_reads_a_database_and_checks_the_schedule_too(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    cup: tuple[StoredTournament, list[StoredMatch]],
) -> None:
    t, rows = cup
    url = database_with(tmp_path, t, rows)
    code, out, err = run(capsys, "verify", t.id, "--db", url, "--json")
    report = json.loads(out)
    assert (code, err, report["ok"], report["games"], report["replayed"]) == (0, "", True, 6, 6)


def test_verify_from_the_database_finds_a_game_moved_to_another_deal(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    cup: tuple[StoredTournament, list[StoredMatch]],
) -> None:
    """A row claiming another deal, with that deal's seed: only the schedule shows it."""
    t, rows = cup
    other = next(r for r in rows if r.deal_id != rows[0].deal_id)
    moved = dataclasses.replace(rows[0], deal_id=other.deal_id, seed=other.seed)
    url = database_with(tmp_path, t, [moved, *rows[1:]])
    code, out, _ = run(capsys, "verify", t.id, "--db", url)
    assert code == 1
    assert (
        f"  FAILED match {rows[0].id}: deal_id: the stored game says deal {other.deal_id}, the "
        f"tournament's schedule deal {rows[0].deal_id}"
    ) in out
    assert f"  FAILED match {rows[0].id}: seed: the stored game has seed {other.seed}" in out


def test_verify_from_the_database_refuses_an_unknown_or_unfinished_tournament(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    cup: tuple[StoredTournament, list[StoredMatch]],
) -> None:
    t, _ = cup
    url = database_with(tmp_path, dataclasses.replace(t, state=TournamentState.PAUSED), [])
    code, _, err = run(capsys, "verify", t.id, "--db", url)
    assert code == 2 and f"tournament {t.id} is paused: its seed is revealed only" in err
    code, _, err = run(capsys, "verify", "nope", "--db", url)
    assert (code, err) == (
        2,
        "domino-arena: error: no tournament has id 'nope' in the database " + url + "\n",
    )


def test_a_regrade_on_fresh_deals_verifies_its_carried_games_by_the_original_s_seed(
    capsys: pytest.CaptureFixture[str],
    referee: AdminServer,
    tmp_path: Path,
    cup: tuple[StoredTournament, list[StoredMatch]],
) -> None:
    t, rows = cup
    referee.arena.storage.add_bot("dave")
    regrade = regrade_of(
        t, {"carol": "dave"}, course_bots={**dict.fromkeys(BOTS, ""), "dave": ""}, fresh_deals=True
    )
    regrade = dataclasses.replace(regrade, id="cup2", state=TournamentState.FINISHED)
    kept = {r.game_index: r for r in rows if "carol" not in r.seats and r.game_index is not None}
    again = played_games(regrade, kept)
    assert len(kept) == 2 and {r.seed for r in again} - {r.seed for r in rows}
    stored(referee, t, rows)
    stored(referee, regrade, again)
    code, out, err = run(capsys, "verify", "cup2", "--json", "--server", referee.address)
    report = json.loads(out)
    assert (code, err, report["ok"], report["games"]) == (0, "", True, 6), report["failures"]
    url = database_with(tmp_path, t, rows)
    extra = RatedStorage(url)
    extra.open()
    extra.add_tournament(regrade)
    for row in again:
        extra.save_match(row)
    extra.close()
    code, out, _ = run(capsys, "verify", "cup2", "--db", url, "--json")
    assert code == 0 and json.loads(out)["ok"], out
    report = verify(revealed_of(regrade), [game_of(r) for r in again])  # by its own seed alone
    assert [f.field for f in report.failures].count("seed") == 2
