"""``domino-arena import RECORDS...``: store matches played elsewhere, from their record files.

Each file is one match record (JSON Lines, as ``domino-arena record`` saves and ``replay``
checks), and untrusted input: it is read (at most :data:`MAX_RECORD_BYTES`, UTF-8), parsed
(``sdk.match.records.parse_record``) and replayed through the rules engine
(``records.replay``) from its own game, options, seed and steps; only a record that replays
exactly and passes the checks below is stored, as the row the referee would have written for
it, with the record's text. The rows go to the database (``--db``) through the ladder
writer's batch path (:func:`domino_arena.server.store.writer.store_batch`): up to
:data:`~domino_arena.server.store.writer.MAX_BATCH` records per transaction, each record whole
or not at all, so a bad record fails alone.

Decisions (docs/admin.md, "Importing results"):

* a match is stored under its record's ``match_id``, which must be in a form the referee makes
  (``match_spec.MATCH_ID_RULE``), so importing a file again stores nothing twice: it is
  counted as skipped;
* **only what the moves prove, unless signed**: a record that claims a fault, a forfeit, a
  void, an abort or an adjudication (anything but a game played to its end by the rules) is
  stored only when a referee whose key the importing arena trusts signed it (``--trust-key``,
  ``server/play/record_signing.py``); unsigned (or signed by a key not trusted) it is refused,
  rated or not: nothing in the database then carries a claim nobody vouched for, so this
  arena's own signature on the records it hands out stays sound;
* unrated by default: results played elsewhere move no rating unless ``--rated`` says so; then
  they move the ladder of their game in the order the files are given, exactly as if the
  referee had finished them in that order;
* every seat must name a bot the database knows (a house seat, ``house:NAME``, needs none),
  all of one course (as RunMatch requires, ``store.bots.course_of_match``): the match is stored
  in that course. An unknown bot is refused unless ``--create-bots`` creates it (in that
  course, enabled, no token shown), and only for a record that passed every check; a deleted
  bot is refused always;
* ``created`` is the header's (ISO 8601) when it has one, else the time of the import; a time
  in the future (beyond :data:`CLOCK_SKEW`) or before :data:`EARLIEST` is refused.

Every refused record is named with its file, its line when there is one, and what is wrong,
on one line, escaped and bounded (:data:`MAX_REASON`); a summary follows. The exit status is 1
when any record was refused, else 0.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from domino_arena.sdk.match.records import (
    MatchRecord,
    RecordError,
    parse_record,
    replay,
    split_signature,
)
from domino_arena.sdk.match.results import Termination
from domino_arena.sdk.rules import make_game
from domino_arena.server.cli.arguments import CliError, Handler, Handlers, db_argument
from domino_arena.server.cli.storage_open import open_storage
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.logs import bounded, escape
from domino_arena.server.net.limits import ECHO_CHARS
from domino_arena.server.play.match_spec import MATCH_ID_RULE, referee_match_id
from domino_arena.server.store.bots import (
    NAME_PATTERN,
    NAME_RULE,
    BotState,
    StoredBot,
    course_of_match,
)
from domino_arena.server.store.engine import display_url, error_reason
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.tables import DEFAULT_COURSE, HOUSE_PREFIX
from domino_arena.server.store.writer import MAX_BATCH, store_batch

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

MAX_RECORD_BYTES: Final = 16 * 1024 * 1024
"""The largest record file read (16 MiB; a long match's record is a few hundred kB): at most
one byte more is read, so ``/dev/zero`` or a huge file is refused at once."""
CLOCK_SKEW: Final = dt.timedelta(minutes=5)
"""How far in the future a record's ``created`` may be (another machine's clock)."""
EARLIEST: Final = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
"""No record of this arena's format was written before this time."""
MAX_REASON: Final = 400
"""The most characters of a refusal's reason printed (escaped first): one line, always."""


@dataclass(frozen=True, slots=True)
class Refused:
    """A record not stored: its file, what was wrong (the line first, when known)."""

    path: str
    reason: str

    def __str__(self) -> str:
        """One line whatever the file held: escaped (``logs.escape``) and bounded."""
        return (
            f"{escape(bounded(self.path, MAX_REASON))}: {escape(bounded(self.reason, MAX_REASON))}"
        )


def _echo(text: str) -> str:
    """An untrusted value in a reason: quoted and cut to ``limits.ECHO_CHARS`` characters (the
    whole reason is escaped when printed, :class:`Refused`)."""
    return f"'{bounded(text, ECHO_CHARS)}'"


@dataclass(slots=True)
class ImportReport:
    """What :func:`import_records` did."""

    imported: int = 0
    skipped: int = 0
    """Stored already (the same match id): nothing written."""
    refused: list[Refused] = field(default_factory=list)
    created_bots: list[str] = field(default_factory=list)
    authenticated: int = 0
    """Records stored whose signature a trusted key checked."""

    def summary(self) -> str:
        total = self.imported + self.skipped + len(self.refused)
        created = (
            f"; created {len(self.created_bots)} bot(s): {', '.join(self.created_bots)}"
            if self.created_bots
            else ""
        )
        signed = f" ({self.authenticated} signed by a trusted key)" if self.authenticated else ""
        return (
            f"{total} record(s): {self.imported} imported{signed}, {self.skipped} skipped "
            f"(stored already), {len(self.refused)} refused{created}"
        )


@dataclass(frozen=True, slots=True)
class _Checked:
    """A record that passed every check: its row, and the bots to create before storing it."""

    path: str
    match: StoredMatch
    new_bots: tuple[str, ...]
    signed: bool


def match_of(
    record: MatchRecord,
    text: str,
    *,
    rated: bool,
    stamp: dt.datetime,
    course: str = DEFAULT_COURSE,
) -> StoredMatch:
    """Return the row the referee stores for the match of ``record`` (its text ``text``).

    Raises:
        ValueError: the header has no match id, or one not in the referee's form, or a bad
            ``created``.
    """
    if not record.match_id:
        raise ValueError(
            "line 1: match_id: the header has none; an imported match is stored under its "
            "record's match id, so that importing it again stores it once"
        )
    if not referee_match_id(record.match_id):
        raise ValueError(
            f"line 1: match_id: expected {MATCH_ID_RULE}, got {_echo(record.match_id)}"
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
        created=_created(record.created, stamp) or stamp,
        side_of_seat=tuple(game.side_of(seat) for seat in range(len(record.seats))),
        faults=tuple(faults),
        rated=rated,
        course=course,
    )


def _created(text: str | None, now: dt.datetime) -> dt.datetime | None:
    """The header's ``created`` as an aware time; None when it has none.

    Raises:
        ValueError: not ISO 8601, in the future (beyond :data:`CLOCK_SKEW`) or before
            :data:`EARLIEST`.
    """
    if not text:
        return None
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"line 1: created: expected an ISO 8601 time, got {_echo(text)}") from None
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)
    if moment > now + CLOCK_SKEW:
        raise ValueError(
            f"line 1: created: {_echo(text)} is in the future (the import's clock says "
            f"{now:%Y-%m-%dT%H:%M:%SZ}; {CLOCK_SKEW.seconds // 60} minutes of skew allowed)"
        )
    if moment < EARLIEST:
        raise ValueError(
            f"line 1: created: {_echo(text)} is before {EARLIEST:%Y-%m-%d}, when no record of "
            "this format existed"
        )
    return moment


def read_file(path: str, limit: int = MAX_RECORD_BYTES) -> str:
    """The text of the record file ``path``: at most ``limit`` bytes, strict UTF-8.

    Raises:
        RecordError: larger than ``limit`` (only ``limit + 1`` bytes are read), or not UTF-8.
        OSError: the file cannot be read.
    """
    with open(path, "rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise RecordError(
            f"larger than {limit:,} bytes, the most a record file may hold (read stopped there)"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(
            f"not UTF-8 text: byte {exc.start} (0x{data[exc.start]:02x}) cannot start or "
            "continue a character"
        ) from None


def _proved(record: MatchRecord) -> str | None:
    """What ``record`` claims that its moves do not prove (None: nothing).

    A game played to its end by the rules with no fault is proved by a replay; a fault, a
    forfeit, a void, an abort or an adjudication is what the referee that played it says.
    """
    termination = record.result.termination
    if termination is not Termination.NORMAL:
        forfeit = next((f for f in record.faults if f.forfeited), None)
        why = f" (seat {forfeit.seat}, {forfeit.kind.value})" if forfeit is not None else ""
        return f"ended by '{termination.value}'{why} after {len(record.steps)} steps"
    if record.faults:
        fault = record.faults[0]
        return f"{len(record.faults)} fault(s) (first: seat {fault.seat}, {fault.kind.value})"
    return None


def _check(
    path: str,
    trusted: Mapping[str, Ed25519PublicKey],
    known: Mapping[str, StoredBot],
    *,
    rated: bool,
    create_bots: bool,
    stamp: dt.datetime,
) -> _Checked:
    """Read and check the record in ``path`` (the module doc's rules, in order).

    Raises:
        RecordError, ValueError: what is wrong (the line first when known).
        OSError: the file cannot be read.
    """
    text = read_file(path)
    body, signature = split_signature(text)
    signed = False
    if signature is not None and trusted:
        from domino_arena.server.play.record_signing import authenticated  # noqa: PLC0415

        signed = authenticated(body, signature, trusted)
    record = parse_record(text)
    checked = replay(record)
    if not checked.ok:
        raise RecordError(f"does not replay: {checked.error}")
    claim = _proved(record)
    if claim is not None and not signed:
        how = (
            "it is unsigned"
            if signature is None
            else f"its signature's key {_echo(signature['key'])} is not trusted here"
        )
        raise RecordError(
            f"result (line {len(record.steps) + len(record.faults) + 2}): claims {claim}, which "
            f"its moves do not prove, and {how}: such a record is imported only signed by the "
            "referee that played it, with a key trusted here (--trust-key FILE.pub)"
        )
    course, new_bots = _seats(record.seats, known, create_bots)
    match = match_of(record, text, rated=rated, stamp=stamp, course=course)
    return _Checked(path, match, new_bots, signed)


def _seats(
    seats: Iterable[str], known: Mapping[str, StoredBot], create_bots: bool
) -> tuple[str, tuple[str, ...]]:
    """The course of a record seating ``seats``, and its unknown bots (to create).

    Raises:
        ValueError: a seat that is no known bot (unless ``create_bots``) or a deleted one, or
            seats of different courses.
    """
    seated: list[StoredBot] = []
    new: list[str] = []
    for seat, name in enumerate(seats):
        if name.startswith(HOUSE_PREFIX):
            continue
        bot = known.get(name)
        if bot is not None and bot.state is BotState.DELETED:
            raise ValueError(f"line 1: seats[{seat}]: bot {_echo(name)} is deleted")
        if bot is not None:
            seated.append(bot)
        elif not create_bots:
            raise ValueError(
                f"line 1: seats[{seat}]: no bot is named {_echo(name)} in the database "
                "(create it first, or import with --create-bots)"
            )
        elif not NAME_PATTERN.match(name):
            raise ValueError(f"line 1: seats[{seat}]: {_echo(name)} cannot name a bot: {NAME_RULE}")
        elif name not in new:
            new.append(name)
    try:
        course = course_of_match(seated) or DEFAULT_COURSE
    except ValueError as exc:
        raise ValueError(f"line 1: seats: {exc}") from None
    return course, tuple(new)


def import_records(
    storage: RatedStorage,
    paths: Iterable[str],
    *,
    rated: bool = False,
    create_bots: bool = False,
    trusted: Mapping[str, Ed25519PublicKey] | None = None,
    batch_size: int = MAX_BATCH,
    now: dt.datetime | None = None,
) -> ImportReport:
    """Read, check and store the records of ``paths`` in that order (see the module doc).

    ``trusted``: the public keys whose signatures authenticate a record, by key id
    (``record_signing.trusted_keys``); ``now``: the clock ``created`` is checked against.
    """
    report = ImportReport()
    known = {bot.name: bot for bot in storage.bots(include_deleted=True)}
    for chunk in _chunks(paths, batch_size):
        batch: list[_Checked] = []
        ids: set[str] = set()
        for path in chunk:
            try:
                checked = _check(
                    path,
                    trusted or {},
                    known,
                    rated=rated,
                    create_bots=create_bots,
                    stamp=now or dt.datetime.now(dt.UTC),
                )
            except (RecordError, ValueError) as exc:
                report.refused.append(Refused(path, str(exc)))
                continue
            except OSError as exc:
                report.refused.append(Refused(path, f"cannot read it: {exc.strerror or exc}"))
                continue
            except RecursionError:
                report.refused.append(Refused(path, "nested deeper than a record may be"))
                continue
            if checked.match.id in ids or storage.match(checked.match.id) is not None:
                report.skipped += 1  # nothing written, no bot made
                continue
            ids.add(checked.match.id)
            batch.append(checked)
        _create_bots(storage, batch, known, report)
        outcomes = store_batch(storage, [checked.match for checked in batch])
        for checked, outcome in zip(batch, outcomes, strict=True):
            if outcome is True:
                report.imported += 1
                report.authenticated += checked.signed
            elif outcome is False:
                report.skipped += 1
            else:
                report.refused.append(
                    Refused(
                        checked.path,
                        f"match {checked.match.id} not stored: {error_reason(outcome)}",
                    )
                )
    return report


def _create_bots(
    storage: RatedStorage,
    batch: list[_Checked],
    known: dict[str, StoredBot],
    report: ImportReport,
) -> None:
    """Create the bots the records of ``batch`` (each has passed every check) need, in their
    match's course; a record whose bot cannot be created leaves the batch, refused."""
    for checked in list(batch):
        try:
            for name in checked.new_bots:
                if name not in known:
                    known[name] = storage.create_bot(name, course=checked.match.course).bot
                    report.created_bots.append(name)
        except ValueError as exc:
            batch.remove(checked)
            report.refused.append(Refused(checked.path, f"line 1: seats: {exc}"))


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
        help="create the bots the records seat that the database does not know, in the "
        "course of the record's other bots (default: refuse those records)",
    )
    parser.add_argument(
        "--trust-key",
        action="append",
        default=[],
        metavar="FILE",
        help="a referee's public key (PEM, `keys new`'s PREFIX.pub; repeatable): a record it "
        "signed may claim faults, forfeits, voids, aborts and adjudications (default: only "
        "games played to their end without a fault are imported)",
    )


def _trusted(paths: list[str]) -> dict[str, Any]:
    """The ``--trust-key`` keys by key id (cryptography is imported only when some are given)."""
    if not paths:
        return {}
    from domino_arena.server.play.record_signing import KeyFileError, trusted_keys  # noqa: PLC0415

    try:
        return trusted_keys(paths)
    except KeyFileError as exc:
        raise CliError(str(exc)) from None


def _run(args: argparse.Namespace) -> int:
    trusted = _trusted(args.trust_key)
    storage = open_storage(args.db)
    print(f"importing into {display_url(args.db)}", file=sys.stderr)
    try:
        report = import_records(
            storage,
            args.records,
            rated=args.rated,
            create_bots=args.create_bots,
            trusted=trusted,
        )
    finally:
        storage.close()
    for refused in report.refused:
        print(f"REFUSED {refused}")
    print(report.summary())
    return 1 if report.refused else 0


HANDLERS: Final[Handlers] = {"import": Handler(_arguments, _run)}
