"""A class of forty, end to end (docs/courses.md), through the real referee and command line.

The scripted class of tests/fakes/class_term.py: the organizer opens a course with baselines;
forty students register with invites on the light install, ten of them a second version with
their owner token; one tries to register under another student's name and one reuses a used
invite; a graded tournament sized with ``--precision`` is played by the bots connected at its
start; the grades come out as CSV, JSON and a gradebook CSV, one row per student; a late version
is regraded on fresh deals. bench/class_bench.py times the same class with all forty playing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest

from tests.fakes.class_term import (
    COURSE,
    PRECISION,
    SCALE,
    ClassTerm,
    Ran,
    csv_rows,
    rows_by,
    student_name,
)

STUDENTS: Final = 40
SECOND_VERSIONS: Final = 10
PLAYING: Final = 6
"""Students whose bots are connected at the start: the rest have "no submission" rows. A
six-student tournament keeps the test to a few hundred one-deal games; the bench plays all."""


@dataclass
class Played:
    term: ClassTerm
    registered: list[Ran]
    impersonation: Ran
    reused: Ran
    created: Ran
    files: dict[str, str]
    regrade: tuple[Ran, Ran, dict[str, Any]]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    folder: Path = tmp_path_factory.mktemp("class")
    term = ClassTerm(folder, STUDENTS, SECOND_VERSIONS, PLAYING)
    try:
        term.open_course()
        registered = term.register()
        impersonation, reused = term.intrude()
        created = term.play()
        files = term.export()
        regrade = term.regrade()
        yield Played(term, registered, impersonation, reused, created, files, regrade)
    finally:
        term.close()


def test_forty_students_register_on_the_light_install_and_ten_hand_in_a_second_version(
    played: Played,
) -> None:
    assert len(played.registered) == STUDENTS + SECOND_VERSIONS
    owners = played.term.storage.owners(COURSE)
    assert [o.name for o in owners] == [student_name(n) for n in range(1, STUDENTS + 1)]
    for n, owner in enumerate(owners, start=1):
        assert owner.enabled and owner.token_issued is not None
        assert owner.invite_id is not None
        versions = 3 if n == 1 else 2 if n <= SECOND_VERSIONS else 1
        bots = {b.name for b in played.term.storage.bots(course=COURSE) if b.owner == owner.name}
        assert bots == {f"{owner.name}-v{v}" for v in range(1, versions + 1)}
    # Each invite made its owner: the organizer sees code -> owner -> bots.
    assert len({o.invite_id for o in owners}) == STUDENTS


def test_an_impersonation_and_a_reused_invite_are_refused_in_one_clear_line(
    played: Played,
) -> None:
    for ran in (played.impersonation, played.reused):
        assert ran.code != 0 and ran.out == ""
        assert len(ran.err.strip().splitlines()) == 1, ran.err
        assert "Traceback" not in ran.err
    assert "'s02' is already an owner of course" in played.impersonation.err
    assert "invite code not accepted" in played.reused.err
    names = {b.name for b in played.term.storage.bots(course=COURSE)}
    assert "s01-as-s02" not in names and "s03-again" not in names


def test_the_graded_tournament_states_its_precision_and_is_sized_to_reach_it(
    played: Played,
) -> None:
    out = played.created.out
    sized = re.search(rf"sized for \+-{PRECISION:g} Elo: (\d+) games per pairing", out)
    assert sized is not None, out
    assert int(sized.group(1)) == 2  # two duplicate sets: the fewest with an interval
    stated = re.search(r"(\+-\d+) Elo per baseline comparison \((\d+) duplicate sets\)", out)
    assert stated is not None, out
    assert int(stated.group(1)[2:]) <= PRECISION and stated.group(2) == "2"
    t = played.term.wait_finished(played.term.tournament_id)
    latest = {played.term.latest[student_name(n)] for n in range(1, PLAYING + 1)}
    assert latest <= set(t.entrants) | {played.term.latest[student_name(1)]}
    assert {"house:greedy", "house:random"} <= set(t.entrants)
    assert len(t.entrants) == PLAYING + 2
    assert t.progress.done == t.progress.total == 2 * 2 * (PLAYING + 2) * (PLAYING + 1) // 2


def test_the_grades_have_one_row_per_student_in_csv_json_and_the_gradebook(
    played: Played,
) -> None:
    students = {student_name(n) for n in range(1, STUDENTS + 1)}
    playing = {student_name(n) for n in range(1, PLAYING + 1)}
    table = csv_rows(played.files["csv"])
    document = json.loads(played.files["json"])
    gradebook = csv_rows(played.files["gradebook"])
    assert len(table) == len(document["grades"]) == len(gradebook) == STUDENTS
    by_owner = rows_by(table, "owner")
    in_json = {g["owner"]: g for g in document["grades"]}
    assert set(in_json) == students == set(rows_by(gradebook, "SIS Login ID"))
    for owner in students:
        row, graded = by_owner[owner], in_json[owner]
        if owner in playing:
            assert row["status"] == graded["status"] == "graded"
            assert int(row["games"]) == graded["games"] == 2 * 2 * (PLAYING + 1)
            assert row["grade"] == graded["grade"] and row["grade"] in ("A", "B", "F")
            greedy = {b["baseline"]: b for b in graded["baselines"]}["greedy"]
            assert int(row["vs_greedy_games"]) == greedy["games"] == 4
            assert int(row["vs_greedy_sets"]) == greedy["sets"] == 2
        else:
            assert row["status"] == graded["status"] == "no submission"
            assert row["grade"] == graded.get("grade", "") == ""
    # The CSV carries every field of a JSON row (the baselines' as vs_<baseline>_<field>).
    fields = {key for g in document["grades"] for key in g if key != "baselines"}
    assert fields <= set(table[0])
    scored = rows_by(gradebook, "SIS Login ID")
    assert all(scored[o]["Domino Arena"] in SCALE.replace(":", ",").split(",") for o in playing)
    assert all(scored[o]["Domino Arena"] == "" for o in students - playing)


def test_a_regrade_says_what_it_replaced_and_carried_and_counts_each_game_once(
    played: Played,
) -> None:
    registered, created, together = played.regrade
    assert registered.code == 0, registered.err
    old, new = "s01-v2", "s01-v3"
    assert f"{old}" in created.out and new in created.out
    t = played.term.wait_finished(played.term.regrade_id)
    assert t.regrade_of == played.term.tournament_id and t.fresh_deals
    others = PLAYING + 1  # the other entrants s01's version meets
    played_again = 2 * 2 * others
    assert len(t.carried) == t.progress.total - played_again
    (note,) = together["regrades"]
    assert note["carried"] == len(t.carried) == note["counted_once"]
    assert note["replaced"] == [{"bot": old, "by": new}]
    rows = {(g["owner"], g.get("bot", "")): g for g in together["grades"]}
    assert rows[("s01", old)]["games"] == rows[("s01", new)]["games"] == played_again
    # Every other playing student played 2*2*(PLAYING+1) games in the original; the regrade's
    # carried copies are not counted again, and their games against s01's new version are new.
    for n in range(2, PLAYING + 1):
        assert rows[(student_name(n), played.term.latest[student_name(n)])]["games"] == (
            played_again + 2 * 2
        )
