"""What the referee keeps: bots, finished matches and tournaments (docs/decisions.md: decision 12).

:class:`Storage` is the one object the rest of the server holds; each of its calls is a
function of the module that owns that job (:mod:`.engine` opens and migrates, :mod:`.bots`,
:mod:`.matches`, :mod:`.tournaments`; :mod:`.tables` is the schema). Every call blocks: the
service runs them off the event loop (``asyncio.to_thread`` / ``trio.to_thread.run_sync``).

Ratings are the ladder's: a match that counts for the ladder is saved together with its rating
change, in one transaction that the ladder holds (``store_and_rate`` in
``server/ladder/ratings_store.py``, whose ``RatedStorage`` extends this class): it has the store
insert the rows (:func:`.matches.insert_batch`) and rates them in the same transaction. The
storage itself knows no rating and calls nothing above it.

>>> storage = Storage("sqlite://")
>>> storage.open()
>>> token = storage.add_bot("alice")
>>> storage.check_bot("alice", token), storage.check_bot("alice", "guess")
(<BotCheck.OK: 'ok'>, <BotCheck.WRONG_TOKEN: 'wrong token'>)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy.engine import Engine

from domino_arena.server.store import (
    bots,
    courses,
    engine,
    hosted_settings,
    matches,
    migrations,
    owners,
    tournament_rounds,
    tournaments,
)
from domino_arena.server.store.bots import BotCheck, IssuedToken, StoredBot
from domino_arena.server.store.courses import (
    IssuedCourseToken,
    IssuedInvite,
    StoredCourse,
    StoredInvite,
)
from domino_arena.server.store.matches import StoredMatch
from domino_arena.server.store.owners import IssuedOwnerToken, StoredOwner
from domino_arena.server.store.tables import DEFAULT_COURSE
from domino_arena.server.store.tournament_rounds import StoredRound
from domino_arena.server.store.tournaments import StoredTournament, TournamentState


class Storage:
    """The referee's database. Build it, :meth:`open` it, then call it from any thread.

    Args:
        url: a SQLAlchemy URL, e.g. ``sqlite:///domino-arena.db`` or
            ``postgresql+psycopg://user@host/db`` (``postgresql://`` picks psycopg too).
        schema: PostgreSQL only: keep the tables (and the migrations' version table) in this
            schema, created if missing, so several test runs can share one database.
    """

    def __init__(self, url: str, *, schema: str | None = None) -> None:
        engine.check_schema(schema)
        self.url = url
        self.schema = schema
        self._engine: Engine | None = None

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            raise RuntimeError("Storage.open() was not called")
        return self._engine

    def open(self) -> None:
        """Connect and migrate the database to the newest schema (:func:`.engine.open_engine`).

        Raises:
            StorageError: the database cannot be opened or migrated (one line, names it).
        """
        self._engine = engine.open_engine(self.url, self.schema)

    def close(self) -> None:
        """Close every pooled connection; the storage may be opened again."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def drop(self) -> None:
        """Drop the tables (and the schema, if one was given): for tests that share a server."""
        engine.drop(self.engine, self.schema)

    def schema_version(self) -> str:
        """Return the migration revision the database is at (``"0002"``, ...)."""
        with self.engine.connect() as connection:
            revision = migrations.current(connection)
        if revision is None:
            where = engine.display_url(self.url)
            raise engine.StorageError(f"the database {where} has no schema version")
        return revision

    # -- bots -----------------------------------------------------------------------------------

    def add_bot(self, name: str) -> str:
        """Create the bot ``name`` and return its new token (:func:`.bots.add_bot`)."""
        return bots.add_bot(self.engine, name)

    def create_bot(
        self, name: str, *, course: str = DEFAULT_COURSE, owner: str = ""
    ) -> IssuedToken:
        """Create the bot ``name`` of ``owner`` in ``course``, and the owner (without a token)
        if the course has none of that name; return it with its new token
        (:func:`.owners.create_bot_for`)."""
        return owners.create_bot_for(self.engine, name, course=course, owner=owner)

    def check_bot(self, name: str, token: str) -> BotCheck:
        """Say whether ``token`` is the token of the bot ``name`` and the bot may connect
        (:func:`.bots.check_bot`)."""
        return bots.check_bot(self.engine, name, token)

    def check_own_token(self, name: str, token: str) -> BotCheck:
        """:meth:`check_bot` with the bot's own token only, never its hosted runner's: for what
        the bot's owner does with it (rotate it, submit a version, read its logs)."""
        return bots.check_bot(self.engine, name, token, runner=False)

    def bot_names(self) -> list[str]:
        """Return the names of every bot that is not deleted, sorted."""
        return bots.bot_names(self.engine)

    def bots(self, *, include_deleted: bool = False, course: str | None = None) -> list[StoredBot]:
        """Return every bot (the deleted ones too if asked; of ``course`` alone if given),
        by name."""
        return bots.bots(self.engine, include_deleted=include_deleted, course=course)

    def bot(self, name: str) -> StoredBot | None:
        """Return the bot ``name`` (deleted or not), or None."""
        return bots.bot(self.engine, name)

    def rotate_token(self, name: str) -> IssuedToken:
        """Give the bot ``name`` a new token; the old one stops working at once
        (:func:`.bots.rotate_token`)."""
        return bots.rotate_token(self.engine, name)

    def set_bot_enabled(self, name: str, enabled: bool) -> StoredBot:
        """Enable or disable the bot ``name`` (:func:`.bots.set_enabled`)."""
        return bots.set_enabled(self.engine, name, enabled)

    def set_allow_people(self, name: str, allow: bool) -> StoredBot:
        """Let people play against the bot ``name``, or stop (:func:`.bots.set_allow_people`)."""
        return bots.set_allow_people(self.engine, name, allow)

    def delete_bot(self, name: str) -> StoredBot:
        """Delete the bot ``name`` for good, keeping its history (:func:`.bots.delete_bot`)."""
        return bots.delete_bot(self.engine, name)

    # -- courses and invites (docs/courses.md) ---------------------------------------------------

    def create_course(self, name: str, **settings: Any) -> IssuedCourseToken:
        """Create a course with a new organizer token (:func:`.courses.create_course`)."""
        return courses.create_course(self.engine, name, **settings)

    def courses(self) -> list[StoredCourse]:
        """Every course, by name (:func:`.courses.courses`)."""
        return courses.courses(self.engine)

    def course(self, name: str) -> StoredCourse | None:
        """The course ``name``, or None."""
        return courses.course(self.engine, name)

    def update_course(self, name: str, **changes: Any) -> StoredCourse:
        """Change a course's settings (:func:`.courses.update_course`)."""
        return courses.update_course(self.engine, name, **changes)

    def rotate_organizer_token(self, name: str) -> IssuedCourseToken:
        """A new organizer token for ``name`` (:func:`.courses.rotate_organizer_token`)."""
        return courses.rotate_organizer_token(self.engine, name)

    def organizer_course(self, token: str) -> str | None:
        """The course whose organizer token ``token`` is, or None."""
        return courses.organizer_course(self.engine, token)

    def create_invites(
        self, course: str, count: int, *, uses: int = 1, expires: dt.datetime | None = None
    ) -> list[IssuedInvite]:
        """Make invite codes (:func:`.courses.create_invites`)."""
        return courses.create_invites(self.engine, course, count, uses=uses, expires=expires)

    def invites(self, course: str) -> list[StoredInvite]:
        """The invites of ``course``, newest first."""
        return courses.invites(self.engine, course)

    def invite(self, invite_id: str) -> StoredInvite | None:
        """The invite ``invite_id``, or None."""
        return courses.invite(self.engine, invite_id)

    def revoke_invite(self, invite_id: str) -> StoredInvite:
        """Make an invite unusable (:func:`.courses.revoke_invite`)."""
        return courses.revoke_invite(self.engine, invite_id)

    def register_bot(self, code: str, name: str, owner: str) -> IssuedToken:
        """Register a new owner and its first bot with an invite code; the answer holds the
        owner token (:func:`.owners.register_with_invite`)."""
        return owners.register_with_invite(self.engine, code, name, owner)

    def live_view(self, course: str, tournament_id: str | None) -> str:
        """Who may watch a match of ``course`` (and of the tournament ``tournament_id``) while
        it runs: ``public``, ``signed-in`` or ``none`` (:func:`.tournaments.live_view`)."""
        return tournaments.live_view(self.engine, course, tournament_id)

    # -- owners (docs/courses.md: owners) -------------------------------------------------------

    def register_with_owner_token(self, token: str, name: str) -> IssuedToken:
        """Register another bot of an owner with its owner token
        (:func:`.owners.register_with_owner_token`)."""
        return owners.register_with_owner_token(self.engine, token, name)

    def owners(self, course: str) -> list[StoredOwner]:
        """Every owner of ``course``, by name, with its bots (:func:`.owners.owners`)."""
        return owners.owners(self.engine, course)

    def owner(self, course: str, name: str) -> StoredOwner | None:
        """The owner ``name`` of ``course``, or None."""
        return owners.owner(self.engine, course, name)

    def owner_of_token(self, token: str) -> StoredOwner | None:
        """The owner whose current owner token ``token`` is, or None."""
        return owners.owner_of_token(self.engine, token)

    def rotate_owner_token(self, token: str) -> IssuedOwnerToken:
        """A new owner token, authorised by the current one (:func:`.owners.rotate_owner_token`)."""
        return owners.rotate_owner_token(self.engine, token)

    def issue_owner_token(self, course: str, name: str) -> IssuedOwnerToken:
        """The organizer's new token for an owner (:func:`.owners.issue_owner_token`)."""
        return owners.issue_owner_token(self.engine, course, name)

    def set_owner_enabled(self, course: str, name: str, enabled: bool) -> StoredOwner:
        """Enable or disable an owner and so all its bots (:func:`.owners.set_owner_enabled`)."""
        return owners.set_owner_enabled(self.engine, course, name, enabled)

    # -- matches --------------------------------------------------------------------------------

    def save_match(self, match: StoredMatch) -> bool:
        """Store a finished match that moves no rating: a batch of one (:meth:`save_matches`).

        Returns:
            True when written; False when it was stored already (nothing is written then).

        Raises:
            ValueError: a field out of range, or a match that counts for the ladder (marked
                rated, ended normally or by forfeit): only ``RatedStorage`` saves those, with
                their rating change, so no rated match is ever stored unrated.
        """
        return self.save_matches((match,))[0]

    def save_matches(self, batch: Sequence[StoredMatch]) -> list[bool]:
        """Store the finished matches of ``batch``, none of which moves a rating, in one
        transaction: all of them or none (:func:`.matches.save_many`). The ladder writer's
        group commit (``RatedStorage`` stores and rates those that count, in one transaction
        of its own).

        Returns:
            For each match: True when written, False when it was stored already.

        Raises:
            ValueError: a field out of range, or a match that counts for the ladder (as
                :meth:`save_match`); nothing is written.
        """
        for match in batch:
            matches.check_match(match)
            if match.moves_ratings:
                raise ValueError(
                    f"match {match.id}: it counts for the ladder; save it with its rating "
                    "change through RatedStorage (server/ladder/ratings_store.py)"
                )
        return matches.save_many(self.engine, batch)

    def match(self, match_id: str) -> StoredMatch | None:
        """Return the stored match ``match_id``, or None."""
        return matches.match(self.engine, match_id)

    def matches(
        self,
        limit: int = 100,
        *,
        tournament_id: str | None = None,
        bot: str | None = None,
        game: str | None = None,
        offset: int = 0,
        records: bool = True,
        course: str | None = None,
    ) -> list[StoredMatch]:
        """Return the latest ``limit`` matches, newest first, that fit every filter, after the
        first ``offset`` of them; without their records if ``records`` is False
        (:func:`.matches.matches`)."""
        return matches.matches(
            self.engine,
            limit,
            tournament_id=tournament_id,
            bot=bot,
            game=game,
            offset=offset,
            records=records,
            course=course,
        )

    # -- tournaments ----------------------------------------------------------------------------

    def add_tournament(self, tournament: StoredTournament) -> None:
        """Store a new tournament (:func:`.tournaments.add_tournament`)."""
        tournaments.add_tournament(self.engine, tournament)

    def tournament(self, tournament_id: str) -> StoredTournament | None:
        """Return the tournament ``tournament_id``, or None."""
        return tournaments.tournament(self.engine, tournament_id)

    def tournaments(
        self, states: Collection[TournamentState] | None = None, *, course: str | None = None
    ) -> list[StoredTournament]:
        """Return the tournaments (only those in ``states``, of ``course``, if given), oldest
        first."""
        return tournaments.tournaments(self.engine, states, course=course)

    def set_tournament_entrants(
        self, tournament_id: str, entrants: tuple[str, ...], owners: dict[str, str] | None
    ) -> StoredTournament:
        """Write the entrants chosen at a tournament's start (:func:`.tournaments.set_entrants`)."""
        return tournaments.set_entrants(self.engine, tournament_id, entrants, owners)

    def freeze_versions(self, tournament_id: str) -> StoredTournament:
        """Pin each entrant's current hosted version at the tournament's start, unless pinned;
        return the tournament (:func:`.hosted_settings.freeze_versions`)."""
        hosted_settings.freeze_versions(self.engine, tournament_id)
        found = tournaments.tournament(self.engine, tournament_id)
        assert found is not None  # freeze_versions raised for an unknown id
        return found

    def set_tournament_state(self, tournament_id: str, state: TournamentState) -> None:
        """Set the state of the tournament ``tournament_id`` (:func:`.tournaments.set_state`)."""
        tournaments.set_state(self.engine, tournament_id, state)

    def set_tournament_verdict(self, tournament_id: str, verdict: dict[str, Any]) -> None:
        """Store a comparison's state (:func:`.tournaments.set_verdict`)."""
        tournaments.set_verdict(self.engine, tournament_id, verdict)

    def tournament_game_indexes(self, tournament_id: str) -> set[int]:
        """Return the schedule positions of the tournament's games that are stored."""
        return tournaments.game_indexes(self.engine, tournament_id)

    def tournament_rounds(self, tournament_id: str) -> list[StoredRound]:
        """Return the stored rounds of a Swiss or knockout tournament
        (:func:`.tournament_rounds.rounds`)."""
        return tournament_rounds.rounds(self.engine, tournament_id)

    def add_tournament_round(self, stored: StoredRound) -> StoredRound:
        """Store a round before its games start; the round stored first wins
        (:func:`.tournament_rounds.add_round`)."""
        return tournament_rounds.add_round(self.engine, stored)

    def tournament_game_count(self, tournament_id: str) -> int:
        """Return how many of the tournament's games are stored
        (:func:`.tournaments.game_count`)."""
        return tournaments.game_count(self.engine, tournament_id)
