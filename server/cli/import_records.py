"""``domino-arena import RECORDS...``: store matches played elsewhere, from their record files.

Each file is one match record (JSON Lines, as ``domino-arena record`` saves and ``replay``
checks). A record is read (``sdk.match.records.read_record``) and replayed through the rules
engine (``records.replay``) from its own game, options, seed and steps: only a record that
replays exactly is stored, as the row the referee would have written for it (its result,
faults, sides), with the record's text. The rows go to the database (``--db``) through the
ladder writer's batch path (:func:`domino_arena.server.store.writer.store_batch`): up to
:data:`~domino_arena.server.store.writer.MAX_BATCH` records per transaction, each record whole
or not at all, so a bad record fails alone.

Decisions (docs/admin.md, "Importing results"):

* a match is stored under its record's ``match_id`` (a record without one is refused), so
  importing a file again stores nothing twice: it is counted as skipped;
* unrated by default: results played elsewhere move no rating unless ``--rated`` says so; then
  they move the ladder of their game in the order the files are given, exactly as if the
  referee had finished them in that order;
* every seat must name a bot the database knows (a house seat, ``house:NAME``, needs none);
  an unknown one is refused unless ``--create-bots`` creates it (enabled, no token shown: its
  owner gets one with ``bot rotate``); a deleted bot is refused always;
* ``created`` is the record header's when it is an ISO 8601 time, else the time of the import.

Every refused record is named with its file, its line when there is one, and what is wrong;
a summary follows. The exit status is 1 when any record was refused, else 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

from domino_arena.sdk.match.records import MatchRecord, RecordError, parse_record, replay
from domino_arena.sdk.rules import make_game
from domino_arena.server.cli.arguments import Handler, Handlers, db_argument
from domino_arena.server.cli.serve import open_storage
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.store.bots import BotState
from domino_arena.server.store.engine import display_url, error_reason
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tables import HOUSE_PREFIX
from domino_arena.server.store.writer import MAX_BATCH, store_batch


@dataclass(frozen=True, slots=True)
class Refused:
    """A record not stored: its file, what was wrong (the line first, when known)."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(slots=True)
class ImportReport:
    """What :func:`import_records` did."""

    imported: int = 0
    skipped: int = 0
    """Stored already (the same match id): nothing written."""
    refused: list[Refused] = field(default_factory=list)
    created_bots: list[str] = field(default_factory=list)

    def summary(self) -> str:
        total = self.imported + self.skipped + len(self.refused)
        created = (
            f"; created {len(self.created_bots)} bot(s): {', '.join(self.created_bots)}"
            if self.created_bots
            else ""
        )
        return (
            f"{total} record(s): {self.imported} imported, {self.skipped} skipped (stored "
            f"already), {len(self.refused)} refused{created}"
        )


def match_of(record: MatchRecord, text: str, *, rated: bool, stamp: dt.datetime) -> StoredMatch:
    """Return the row the referee stores for the match of ``record`` (its text ``text``).

    Raises:
        ValueError: the header has no match id.
    """
    if not record.match_id:
        raise ValueError(
            "line 1: match_id: the header has none; an imported match is stored under its "
            "record's match id, so that importing it again stores it once"
        )
    game = make_game(record.game, **record.options)
    result = record.result
    forfeit = next((fault for fault in record.faults if fault.forfeited), None)
    faults = [0] * len(record.seats)
    for fault in record.faults:
        faults[fault.seat] += 1
    return StoredMatch(
        id=record.match_id,
        game=record.game,
        options=game.options(),
        seats=record.seats,
        seed=record.seed,
        termination=result.termination.value,
        winner=result.winner,
        scores=result.scores,
        faulted_seat=None if forfeit is None else forfeit.seat,
        fault=None if forfeit is None else forfeit.kind.value,
        detail=result.detail,
        record=text,
        created=_created(record.created) or stamp,
        side_of_seat=tuple(game.side_of(seat) for seat in range(len(record.seats))),
        faults=tuple(faults),
        rated=rated,
    )


def _created(text: str | None) -> dt.datetime | None:
    """The header's ``created`` as an aware time, or None when it is none or no ISO 8601."""
    if not text:
        return None
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def _read(path: str) -> tuple[MatchRecord, str]:
    """The record in ``path`` and its text, replayed.

    Raises:
        RecordError: unreadable, or it does not replay (the message names the line).
        OSError: the file cannot be read.
    """
    with open(path, encoding="utf-8", newline="") as file:
        try:
            text = file.read()
        except UnicodeDecodeError as exc:
            raise RecordError(f"not UTF-8 text: {exc}") from None
    record = parse_record(text)
    checked = replay(record)
    if not checked.ok:
        raise RecordError(f"does not replay: {checked.error}")
    return record, text


def import_records(
    storage: RatedStorage,
    paths: Iterable[str],
    *,
    rated: bool = False,
    create_bots: bool = False,
    batch_size: int = MAX_BATCH,
) -> ImportReport:
    """Read, replay and store the records of ``paths`` in that order (see the module doc)."""
    report = ImportReport()
    known = {bot.name: bot.state for bot in storage.bots(include_deleted=True)}
    for chunk in _chunks(paths, batch_size):
        batch: list[tuple[str, StoredMatch]] = []
        for path in chunk:
            try:
                record, text = _read(path)
                match = match_of(record, text, rated=rated, stamp=dt.datetime.now(dt.UTC))
                _check_seats(storage, match.seats, known, create_bots, report)
            except (RecordError, ValueError) as exc:
                report.refused.append(Refused(path, str(exc)))
                continue
            except OSError as exc:
                report.refused.append(Refused(path, f"cannot read it: {exc.strerror}"))
                continue
            batch.append((path, match))
        outcomes = store_batch(storage, [match for _, match in batch])
        for (path, match), outcome in zip(batch, outcomes, strict=True):
            if outcome is True:
                report.imported += 1
            elif outcome is False:
                report.skipped += 1
            else:
                report.refused.append(
                    Refused(path, f"match {match.id} not stored: {error_reason(outcome)}")
                )
    return report


def _check_seats(
    storage: RatedStorage,
    seats: Sequence[str],
    known: dict[str, BotState],
    create_bots: bool,
    report: ImportReport,
) -> None:
    """Refuse a seat that is no known bot (unless ``create_bots``: then create it) or a
    deleted one.

    Raises:
        ValueError: which seat, which bot, and why.
    """
    for seat, name in enumerate(seats):
        if name.startswith(HOUSE_PREFIX):
            continue
        state = known.get(name)
        if state is BotState.DELETED:
            raise ValueError(f"line 1: seats[{seat}]: bot {name!r} is deleted")
        if state is None and not create_bots:
            raise ValueError(
                f"line 1: seats[{seat}]: no bot is named {name!r} in the database "
                "(create it first, or import with --create-bots)"
            )
    for name in seats:
        if name not in known and not name.startswith(HOUSE_PREFIX):
            storage.create_bot(name)  # its name is checked there (a ValueError)
            known[name] = BotState.ENABLED
            report.created_bots.append(name)


def _chunks(paths: Iterable[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    for path in paths:
        chunk.append(path)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


# -- the command ----------------------------------------------------------------------------------


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "records",
        nargs="+",
        metavar="RECORDS",
        help="match record files (JSON Lines, one match each), stored in this order",
    )
    db_argument(parser)
    parser.add_argument(
        "--rated",
        action="store_true",
        help="the matches move the ladder of their game, in the order given (default: stored "
        "unrated, moving no rating)",
    )
    parser.add_argument(
        "--create-bots",
        action="store_true",
        help="create the bots the records seat that the database does not know (default: "
        "refuse those records)",
    )


def _run(args: argparse.Namespace) -> int:
    storage = open_storage(args.db)
    print(f"importing into {display_url(args.db)}", file=sys.stderr)
    try:
        report = import_records(
            storage, args.records, rated=args.rated, create_bots=args.create_bots
        )
    finally:
        storage.close()
    for refused in report.refused:
        print(f"REFUSED {refused}")
    print(report.summary())
    return 1 if report.refused else 0


HANDLERS: Final[Handlers] = {"import": Handler(_arguments, _run)}
