"""``domino-arena verify TOURNAMENT``: check a finished tournament's deals against its commitment.

Provable deals (docs/tournaments.md): a tournament publishes a SHA-256 commitment to its master
seed when it is created, and reveals the seed and salt once it is over. This command asks the
referee's admin API for the tournament and every stored game with its record, then checks what
anyone can check without trusting the referee:

1. the revealed seed and salt give the published commitment (so the seed was fixed before the
   first game was dealt);
2. each game's seed is the one its deal id gives under the tournament's deal scheme, in the
   stored row and in the record's header alike;
3. each record replays through the rules engine (``sdk.match.records.replay``) from that seed:
   every step is legal on the tiles that seed deals, and the result is the engine's. A record
   whose deals or moves were altered fails there, at the step or result line that differs.

With ``--db URL`` it reads the referee's database instead (as ``bot add --db`` does), for a
tournament of any size (the admin API lists 1000 games at most), and also checks each game's
deal id against the tournament's schedule; only then does it need the server extra (its modules
are imported there).

A regrade's carried games (copied from its original, not played again) were dealt by the
original's seed: each is checked against the original's revealed seed, which matters for a
regrade on fresh deals (docs/courses.md: deadlines and regrading); the original's commitment
is verified by verifying the original.

It refuses (exit status 2) a tournament that is not over: nothing is revealed yet. Any failure
exits 1 and names the match and the field; ``--json`` prints the same report as one object.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from domino_arena.sdk.match.records import RecordError, parse_record, replay
from domino_arena.server.cli.admin_client import admin_call, enum_name
from domino_arena.server.cli.arguments import (
    CliError,
    Handler,
    Handlers,
    server_arguments,
    server_extra,
)
from domino_arena.server.cli.json_output import json_argument, print_json
from domino_arena.server.logs import escape
from domino_arena.server.play import provable
from domino_arena.v1 import admin_pb2

MAX_LISTED: Final = 1000
"""The most matches one ``ListMatches`` call returns (admin.proto)."""
PAGE: Final = 200
"""Games read from the database at a time (``--db``)."""


@dataclass(frozen=True, slots=True)
class Revealed:
    """What a tournament published and, once over, revealed."""

    tournament_id: str
    scheme: int
    seed: int
    salt: str
    commitment: str


@dataclass(frozen=True, slots=True)
class StoredGame:
    """One stored game as the referee reports it: its row's deal and seed, and its record."""

    match_id: str
    deal_id: int
    """-1 when the row names none."""
    seed: int
    seats: tuple[str, ...]
    record: str
    """JSON Lines; empty for a void match."""
    scheduled_deal: int | None = None
    """The deal id the tournament's schedule gives this game (``--db`` only: the admin API does
    not send the schedule); the seed is checked against it."""
    dealt_by: Revealed | None = None
    """A regrade's carried game: its original tournament, whose seed dealt it."""


@dataclass(frozen=True, slots=True)
class Failure:
    """One thing that differs: in which match (empty for the tournament) and which field."""

    match_id: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f"match {self.match_id}" if self.match_id else "tournament"
        return f"{where}: {self.field}: {self.message}"


@dataclass(slots=True)
class Report:
    """What :func:`verify` found."""

    tournament_id: str
    deal_scheme: int
    commitment_ok: bool = False
    games: int = 0
    """Games checked."""
    replayed: int = 0
    """Records replayed (a void game has none)."""
    failures: list[Failure] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def verify(revealed: Revealed, games: Iterable[StoredGame]) -> Report:
    """Check the commitment, then every game's seed and record (see the module docstring)."""
    report = Report(revealed.tournament_id, revealed.scheme)
    if not revealed.commitment:
        report.failures.append(
            Failure(
                "",
                "seed_commitment",
                f"none published (deal scheme {revealed.scheme}, before provable deals): the "
                "deals are recomputed below, but nothing shows the seed was fixed in advance",
            )
        )
    else:
        try:
            provable.check(
                scheme=revealed.scheme,
                seed=revealed.seed,
                salt=revealed.salt,
                commitment=revealed.commitment,
            )
            report.commitment_ok = True
        except provable.CommitmentError as exc:
            report.failures.append(Failure("", *_split(str(exc))))
    for game in games:
        report.games += 1
        report.failures.extend(_check_game(revealed, game, report))
    return report


def _check_game(revealed: Revealed, game: StoredGame, report: Report) -> list[Failure]:
    def failure(field_name: str, message: str) -> Failure:
        return Failure(game.match_id, field_name, message)

    found: list[Failure] = []
    revealed = game.dealt_by or revealed  # a carried game: the original's record, deal and seed
    deal = game.deal_id if game.scheduled_deal is None else game.scheduled_deal
    if deal != game.deal_id:
        found.append(
            failure(
                "deal_id",
                f"the stored game says deal {game.deal_id}, the tournament's schedule deal {deal}",
            )
        )
    try:
        expected = provable.deal_seed(revealed.scheme, revealed.seed, deal)
    except provable.CommitmentError as exc:
        return [*found, failure(*_split(str(exc)))]
    if game.seed != expected:
        found.append(
            failure(
                "seed",
                f"the stored game has seed {game.seed}, but deal {deal} of master seed "
                f"{revealed.seed} (scheme {revealed.scheme}) is {expected}",
            )
        )
    if not game.record:
        return found  # a void game: nothing was played, nothing to replay
    try:
        record = parse_record(game.record)
    except RecordError as exc:
        return [*found, failure("record", f"unreadable: {exc}")]
    if record.seed != expected:
        found.append(
            failure(
                "record seed",
                f"the record's header has seed {record.seed}, but deal {deal} is {expected}",
            )
        )
    if record.match_id is not None and not _record_of(game, record.match_id):
        found.append(failure("record match_id", f"the record is of match {record.match_id!r}"))
    if record.seats != game.seats:
        found.append(
            failure(
                "record seats",
                f"the record seats {list(record.seats)}, the stored game {list(game.seats)}",
            )
        )
    checked = replay(dataclasses.replace(record, seed=expected))  # dealt as the scheme deals
    report.replayed += 1
    if not checked.ok:
        found.append(failure("record", f"does not replay from seed {expected}: {checked.error}"))
    return found


def _record_of(game: StoredGame, match_id: str) -> bool:
    """Whether a record naming ``match_id`` may be ``game``'s: its own, or for a carried game
    one of the original tournament's (match ids are ``<tournament id>-<game index>``)."""
    if game.dealt_by is not None:
        return match_id.startswith(f"{game.dealt_by.tournament_id}-")
    return match_id == game.match_id


def _split(message: str) -> tuple[str, str]:
    """A check's ``"field: what"`` message as (field, what)."""
    name, _, rest = message.partition(": ")
    return name, rest


# -- through the admin API ------------------------------------------------------------------------


def _not_over(tournament_id: str, state: str, commitment: str) -> CliError:
    return CliError(
        f"tournament {tournament_id} is {state}: its seed is revealed only once it is finished "
        "or cancelled, so there is nothing to verify yet"
        + (f" (its commitment is {commitment})" if commitment else "")
    )


def from_referee(args: argparse.Namespace) -> tuple[Revealed, Iterator[StoredGame]]:
    """Ask the referee for the tournament ``args.id``, and its games with their records (one
    ``GetMatch`` each, as the report goes).

    Raises:
        CliError: the tournament is not over (nothing revealed: exit status 2), it has more
            games than ``ListMatches`` lists, or a call failed.
    """
    t = admin_call(args, "GetTournament", admin_pb2.GetTournamentRequest(tournament_id=args.id))
    if not t.HasField("seed"):
        state = enum_name(admin_pb2.TournamentState, t.state, "TOURNAMENT_STATE_")
        raise _not_over(t.id, state, t.seed_commitment)
    revealed = Revealed(t.id, t.deal_scheme or 1, t.seed, t.seed_salt, t.seed_commitment)
    original = None
    if t.carried:
        o = admin_call(
            args, "GetTournament", admin_pb2.GetTournamentRequest(tournament_id=t.regrade_of)
        )
        original = Revealed(o.id, o.deal_scheme or 1, o.seed, o.seed_salt, o.seed_commitment)
    carried = set(t.carried)
    listed = admin_call(
        args, "ListMatches", admin_pb2.ListMatchesRequest(tournament_id=t.id, limit=MAX_LISTED)
    )
    if len(listed.matches) >= MAX_LISTED and t.progress.done > MAX_LISTED:
        raise CliError(
            f"tournament {t.id} has {t.progress.done} stored games; the admin API lists at most "
            f"{MAX_LISTED}: verify it from its database with --db URL"
        )

    def games() -> Iterator[StoredGame]:
        for summary in sorted(listed.matches, key=lambda m: m.game_index):
            request = admin_pb2.GetMatchRequest(match_id=summary.match_id)
            answer = admin_call(args, "GetMatch", request)
            yield StoredGame(
                summary.match_id,
                summary.deal_id,
                summary.seed,
                tuple(summary.bots),
                answer.record,
                dealt_by=original if summary.game_index in carried else None,
            )

    return revealed, games()


# -- from the database ----------------------------------------------------------------------------


def from_database(url: str, tournament_id: str) -> tuple[Revealed, Iterator[StoredGame]]:
    """Read the tournament and its games from the referee's database, checking each game's
    deal id against the schedule too; the games are read a page at a time.

    Raises:
        CliError: no such tournament, it is not over, or the database cannot be opened; the
            server extra is not installed (reading a database needs it, asking the referee
            does not: docs/admin.md, the light install).
    """
    with server_extra("verify --db"):
        from domino_arena.server.cli.storage_open import open_storage  # noqa: PLC0415
        from domino_arena.server.tournaments.lifecycle import games_of  # noqa: PLC0415
    storage = open_storage(url)
    try:
        t = storage.tournament(tournament_id)
        if t is None:
            raise CliError(f"no tournament has id '{tournament_id}' in the database {url}")
        if not t.seed_revealed:
            raise _not_over(t.id, t.state.value, t.seed_commitment)
        deals = {g.index: g.deal_id for g in games_of(t, storage)}
        o = storage.tournament(t.regrade_of) if t.regrade_of else None
    except BaseException:
        storage.close()
        raise
    revealed = Revealed(t.id, t.deal_scheme, t.seed, t.seed_salt, t.seed_commitment)
    original = None
    if o is not None:
        original = Revealed(o.id, o.deal_scheme, o.seed, o.seed_salt, o.seed_commitment)

    def games() -> Iterator[StoredGame]:
        try:
            offset = 0
            while rows := storage.matches(PAGE, tournament_id=t.id, offset=offset):
                offset += len(rows)
                for row in rows:
                    index = -1 if row.game_index is None else row.game_index
                    yield StoredGame(
                        row.id,
                        -1 if row.deal_id is None else row.deal_id,
                        row.seed,
                        row.seats,
                        row.record or "",
                        scheduled_deal=deals.get(index, -1),
                        dealt_by=original if row.carried_from else None,
                    )
        finally:
            storage.close()

    return revealed, games()


# -- the command ----------------------------------------------------------------------------------


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="TOURNAMENT", help="the tournament's id")
    server_arguments(parser)
    parser.add_argument(
        "--db",
        metavar="URL",
        help="read the referee's database at URL instead of asking the referee (any size of "
        "tournament; the schedule's deal ids are checked too)",
    )
    json_argument(parser, "the report")


def _run(args: argparse.Namespace) -> int:
    revealed, games = from_referee(args) if args.db is None else from_database(args.db, args.id)
    report = verify(revealed, games)
    if args.json:
        print_json(report.to_json())
    else:
        _print_report(revealed, report)
    return 0 if report.ok else 1


def _print_report(revealed: Revealed, report: Report) -> None:
    print(f"tournament {report.tournament_id}: deal scheme {report.deal_scheme}")
    if report.commitment_ok:
        print(
            f"  commitment {revealed.commitment}: matches seed {revealed.seed} "
            f"with salt {revealed.salt}"
        )
    print(f"  {report.games} games checked, {report.replayed} records replayed")
    for failure in report.failures:
        print(f"  FAILED {escape(str(failure))}")
    if report.ok:
        print("OK: every deal is the one the committed seed gives")
    else:
        print(f"FAILED: {len(report.failures)} problem{'s' if len(report.failures) > 1 else ''}")


HANDLERS: Final[Handlers] = {"verify": Handler(_arguments, _run)}
