"""The schema that queries use: every table of the referee's database, in :data:`METADATA`.

The versioned migrations in ``migrations/`` build the same schema on a database (a test
compares the two); a change here needs a new revision there. Every time column holds UTC:
:func:`utc` restores the zone SQLite does not keep.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

import sqlalchemy as sa

from domino_arena.server.names import HOUSE_PREFIX as HOUSE_PREFIX  # noqa: PLC0414

# Re-exported (mypy's explicit form): the store's modules and the referee read it from here.
from domino_arena.server.store.live_views import LIVE_VIEW_PUBLIC

METADATA: Final = sa.MetaData()

DEFAULT_COURSE: Final = "default"
"""The course of every bot, match and tournament made without one: a single-user install."""

BOTS: Final = sa.Table(
    "bots",
    METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(64), nullable=False, unique=True),
    sa.Column("token_hash", sa.String(255), nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.Column("state", sa.String(16), nullable=False, server_default="enabled"),
    sa.Column("token_issued", sa.DateTime(timezone=True), nullable=True),
    sa.Column("course", sa.String(64), nullable=False, server_default=DEFAULT_COURSE),
    sa.Column("owner", sa.String(64), nullable=False, server_default=""),
    sa.Column("runner_token_hash", sa.String(255), nullable=False, server_default=""),
    sa.Column("allow_people", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Index("ix_bots_course_owner", "course", "owner"),
)
"""Every bot ever created. ``state`` is ``enabled``, ``disabled`` or ``deleted`` (a deleted bot
keeps its row, so its name stays taken and its matches still name it; its ``token_hash`` is
empty). ``token_issued`` is when its current token was made. ``course`` is the course it
belongs to (names are unique on the whole server); ``owner`` who registered it ("" for none).
``runner_token_hash`` is the hash of the token the hosted runner connects it with ("" for none:
server/store/hosted.py). ``allow_people``: its owner lets people of its course play against it
(docs/people.md)."""

COURSES: Final = sa.Table(
    "courses",
    METADATA,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.Column("organizer_token_hash", sa.String(255), nullable=False, server_default=""),
    sa.Column("organizer_token_issued", sa.DateTime(timezone=True), nullable=True),
    sa.Column("anonymous", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("allow_same_owner_tables", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("allow_same_owner_partners", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("baselines", sa.JSON, nullable=False, server_default=sa.text("'[]'")),
    sa.Column("live_view", sa.String(16), nullable=False, server_default=LIVE_VIEW_PUBLIC),
    sa.Column("hosting_limits", sa.Text, nullable=True),
    sa.Column("human_move_ms", sa.Integer, nullable=False, server_default="0"),
    sa.Column("analyse_tournaments", sa.Boolean, nullable=False, server_default=sa.false()),
)
"""The courses (or events): a named space of bots, tournaments and ladders with its own
organizer token (a salted hash, "" for none: the default course has none). ``baselines`` is a
list of ``{"bot": house bot name, "rating": fixed Elo}``. ``live_view`` says who may watch its
matches while they run (:data:`.live_views.LIVE_VIEWS`). ``hosting_limits`` is the JSON of
the sandbox limits its organizer set for its hosted bots (NULL: the defaults;
server/store/hosted_settings.py). ``human_move_ms`` is a person's time per move in its
practice matches (0: the default, docs/people.md). ``analyse_tournaments``: each tournament of
the course is analysed when it ends (docs/courses.md: analysis)."""

INVITES: Final = sa.Table(
    "invites",
    METADATA,
    sa.Column("id", sa.String(16), primary_key=True),
    sa.Column(
        "course",
        sa.String(64),
        sa.ForeignKey("courses.name", name="fk_invites_course"),
        nullable=False,
    ),
    sa.Column("code_hash", sa.String(255), nullable=False),
    sa.Column("uses", sa.Integer, nullable=False),
    sa.Column("used", sa.Integer, nullable=False, server_default=sa.text("0")),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires", sa.DateTime(timezone=True), nullable=True),
    sa.Column("revoked", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Index("ix_invites_course_created", "course", "created"),
)
"""Invite codes: a student registers a bot in ``course`` with one. A code is
``COURSE:ID:SECRET``; only the secret's salted hash is kept. ``used`` counts bots registered."""

OWNERS: Final = sa.Table(
    "owners",
    METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "course",
        sa.String(64),
        sa.ForeignKey("courses.name", name="fk_owners_course"),
        nullable=False,
    ),
    sa.Column("name", sa.String(64), nullable=False),
    sa.Column("token_hash", sa.String(255), nullable=False, server_default=""),
    sa.Column("token_issued", sa.DateTime(timezone=True), nullable=True),
    sa.Column("state", sa.String(16), nullable=False, server_default="enabled"),
    sa.Column("invite_id", sa.String(16), nullable=True),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("course", "name", name="uq_owners_course_name"),
    sa.Index("ix_owners_invite", "invite_id"),
)
"""The owners of a course (docs/courses.md: owners): made by the first use of an invite
(``invite_id``) or, for bots registered before owners existed and bots an organizer made for
someone, without a token (``token_hash`` "") until the organizer issues one. ``state`` is
``enabled`` or ``disabled`` (every bot of a disabled owner is refused). A bot names its owner
by ``bots.owner`` = ``owners.name`` within its course."""

TOURNAMENTS: Final = sa.Table(
    "tournaments",
    METADATA,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("game", sa.String(32), nullable=False),
    sa.Column("options", sa.JSON, nullable=False),
    sa.Column("entrants", sa.JSON, nullable=False),
    sa.Column("games_per_pairing", sa.Integer, nullable=False),
    sa.Column("deals", sa.String(16), nullable=False, server_default="duplicate"),
    sa.Column("move_ms", sa.Integer, nullable=False),
    sa.Column("bank_ms", sa.Integer, nullable=False),
    sa.Column("grace_ms", sa.Integer, nullable=False),
    sa.Column("fault_policy", sa.String(16), nullable=False),
    sa.Column("max_strikes", sa.Integer, nullable=False),
    sa.Column("concurrency", sa.Integer, nullable=False),
    sa.Column("wait_seconds", sa.Double, nullable=False),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("rated", sa.Boolean, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
    sa.Column("max_deals", sa.Integer, nullable=True),
    sa.Column("seed_commitment", sa.String(64), nullable=False, server_default=""),
    sa.Column("seed_salt", sa.String(64), nullable=False, server_default=""),
    sa.Column("deal_scheme", sa.Integer, nullable=False, server_default=sa.text("1")),
    sa.Column("kind", sa.String(16), nullable=False, server_default="round_robin"),
    sa.Column("plan", sa.JSON, nullable=True),
    sa.Column("verdict", sa.JSON, nullable=True),
    sa.Column("course", sa.String(64), nullable=False, server_default=DEFAULT_COURSE),
    sa.Column("entrant_policy", sa.String(16), nullable=False, server_default="listed"),
    sa.Column("start_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("regrade_of", sa.String(64), nullable=True),
    sa.Column("replaced", sa.JSON, nullable=True),
    sa.Column("owners", sa.JSON, nullable=True),
    sa.Column("allow_same_owner_tables", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("allow_same_owner_partners", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("baselines", sa.JSON, nullable=True),
    sa.Column("live_view", sa.String(16), nullable=True),
    sa.Column("version_pins", sa.Text, nullable=True),
    sa.Column("hosting_limits", sa.Text, nullable=True),
    sa.Column("format", sa.String(16), nullable=False, server_default="round-robin"),
    sa.Column("games_per_entrant", sa.Integer, nullable=True),
    sa.Column("rounds", sa.Integer, nullable=True),
    sa.Column("knockout", sa.Text, nullable=True),
    sa.Column("seeding", sa.JSON, nullable=True),
    sa.Index("ix_tournaments_course", "course", "created"),
)
"""Every tournament. ``course`` scopes it; ``entrant_policy`` (``listed``, ``connected``,
``latest``) says who plays, chosen at start when not ``listed``; ``start_at`` starts it by
itself. ``owners`` ({entrant: owner}) and the two ``allow_same_owner_*`` flags are the seating
rule's input, kept with the row so its schedule is the same on every replay. ``baselines`` are
the frozen baselines seated ({"bot", "rating"}, entrants ``house:NAME``). ``regrade_of`` and
``replaced`` ([{"bot", "by"}]) make it a regrade of another tournament. ``live_view`` says who
may watch its games while they run (:data:`.live_views.LIVE_VIEWS`); NULL: its course's.
``version_pins`` is the JSON {bot: version number} of the hosted versions it plays: the
organizer's pins, and the latest accepted version of each other hosted entrant written when it
starts; ``hosting_limits`` the JSON of its sandbox limits (NULL: its course's). Both are
server/store/hosted.py's. ``format`` (``round-robin``, ``balanced``, ``gauntlet``) says which
tables it plays and ``games_per_entrant`` how many games each entrant plays in a balanced or
gauntlet one (NULL: a round robin; docs/tournaments.md: formats). A Swiss one plays ``rounds``
rounds; a knockout one's ``knockout`` is the JSON {"sets", "max_sets"} of its ties; ``seeding``
orders the entrants, best first, for a knockout's bracket and a Swiss's first round (NULL: the
entrants' order)."""

TOURNAMENT_ROUNDS: Final = sa.Table(
    "tournament_rounds",
    METADATA,
    sa.Column(
        "tournament_id",
        sa.String(64),
        sa.ForeignKey("tournaments.id", name="fk_tournament_rounds_tournament"),
        primary_key=True,
    ),
    sa.Column("number", sa.Integer, primary_key=True),
    sa.Column("tables", sa.JSON, nullable=False),
    sa.Column("byes", sa.JSON, nullable=False),
    sa.Column("first_index", sa.Integer, nullable=False),
    sa.Column("games", sa.Integer, nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
)
"""The rounds of a Swiss or knockout tournament, each stored before its first game starts: its
tables (seat order before rotation), the entrants sitting it out, and the game indexes it
holds (``first_index`` .. ``first_index + games - 1``), so a restart plays the same games of
the same round and never seats a round twice (docs/tournaments.md: Swiss, knockout)."""

MATCHES: Final = sa.Table(
    "matches",
    METADATA,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("game", sa.String(32), nullable=False),
    sa.Column("options", sa.JSON, nullable=False),
    sa.Column("seats", sa.JSON, nullable=False),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("termination", sa.String(16), nullable=False),
    sa.Column("winner", sa.Integer, nullable=True),
    sa.Column("scores", sa.JSON, nullable=False),
    sa.Column("faulted_seat", sa.Integer, nullable=True),
    sa.Column("fault", sa.String(16), nullable=True),
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("record", sa.Text, nullable=True),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.Column(
        "tournament_id",
        sa.String(64),
        sa.ForeignKey("tournaments.id", name="fk_matches_tournament"),
        nullable=True,
    ),
    sa.Column("game_index", sa.Integer, nullable=True),
    sa.Column("deal_id", sa.Integer, nullable=True),
    sa.Column("rotation", sa.Integer, nullable=True),
    sa.Column("side_of_seat", sa.JSON, nullable=False, server_default=sa.text("'[]'")),
    sa.Column("faults", sa.JSON, nullable=False, server_default=sa.text("'[]'")),
    sa.Column("rated", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("rating_model", sa.String(32), nullable=False, server_default=""),
    sa.Column("course", sa.String(64), nullable=False, server_default=DEFAULT_COURSE),
    sa.Column("carried_from", sa.String(64), nullable=True),
    sa.UniqueConstraint("tournament_id", "game_index", name="uq_matches_tournament_game"),
    sa.Index("ix_matches_course_created", "course", "created", "id"),
    sa.Index("ix_matches_created", "created", "id"),
    sa.Index("ix_matches_game_created", "game", "created", "id"),
    sa.Index("ix_matches_tournament_created", "tournament_id", "created", "id"),
)
"""Every finished match. The indexes serve the web face's lists, newest first: all matches,
one game's (``game``), one tournament's (``tournament_id``), each holding the order (``created``,
``id``) so a page's ids are found in the index alone (``record`` comes before ``created`` in a
SQLite row, so reading ``created`` from a row walks the record's pages); a bot's go through
:data:`MATCH_SEATS`; a course's through ``ix_matches_course_created``. ``carried_from`` names the
match of the original tournament a regrade's game was carried over from (not played again)."""

MATCH_SEATS: Final = sa.Table(
    "match_seats",
    METADATA,
    sa.Column(
        "match_id",
        sa.String(64),
        sa.ForeignKey("matches.id", name="fk_match_seats_match"),
        primary_key=True,
    ),
    sa.Column("seat", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("bot", sa.String(64), nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_match_seats_bot", "bot", "created", "match_id"),
)
"""Who sat where in each match: ``matches.seats`` (and ``created``) again, one row per seat,
written with the match (:func:`.matches.insert_batch`), so a page of "the matches of a bot", newest
first, is read from this index alone rather than by scanning every match's JSON."""

RATINGS: Final = sa.Table(
    "ratings",
    METADATA,
    sa.Column("pool", sa.String(32), primary_key=True),
    sa.Column("bot", sa.String(64), primary_key=True),
    sa.Column("rating", sa.Double, nullable=False),
    sa.Column("games", sa.Integer, nullable=False),
    sa.Column("wins", sa.Integer, nullable=False),
    sa.Column("draws", sa.Integer, nullable=False),
    sa.Column("losses", sa.Integer, nullable=False),
    sa.Column("faults", sa.Integer, nullable=False),
    sa.Column("information", sa.Double, nullable=False),
)
"""Each bot's current rating in each pool (a pool is a game type: the match's ``game``).

The ladder (``server/ladder/ratings_store.py``) reads and writes it; the storage only keeps it."""

RATED_GAMES: Final = sa.Table(
    "rated_games",
    METADATA,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("pool", sa.String(32), nullable=False),
    sa.Column(
        "match_id",
        sa.String(64),
        sa.ForeignKey("matches.id", name="fk_rated_games_match"),
        nullable=False,
        unique=True,
    ),
    sa.Index("ix_rated_games_pool_seq", "pool", "seq"),
)
"""The matches that moved ratings, in the order they did: replaying them gives ``ratings``."""

RATING_HISTORY: Final = sa.Table(
    "rating_history",
    METADATA,
    sa.Column(
        "seq",
        sa.Integer,
        sa.ForeignKey("rated_games.seq", name="fk_rating_history_seq"),
        primary_key=True,
        autoincrement=False,
    ),
    sa.Column("bot", sa.String(64), primary_key=True),
    sa.Column("pool", sa.String(32), nullable=False),
    sa.Column("rating", sa.Double, nullable=False),
    sa.Index("ix_rating_history_pool_bot_seq", "pool", "bot", "seq"),
)
"""Each bot's rating right after each rated game it played (``seq`` of ``rated_games``): the
points of its rating chart. The ladder writes them with the rating change, in one transaction,
and rebuilds a pool's from its rated games when some are missing (a database of 0004)."""

REFEREE_LEASE: Final = sa.Table(
    "referee_lease",
    METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("holder", sa.String(36), nullable=False),
    sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("renewed_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
)
"""The one referee allowed to serve this database: at most one row, ``id`` 1 (``lease.py``).

``holder`` is a random uuid made at each start; ``host`` and ``pid`` name the process for the
message that refuses a second referee."""

OWNERSHIP_LEASES: Final = sa.Table(
    "ownership_leases",
    METADATA,
    sa.Column("key", sa.String(200), primary_key=True),
    sa.Column("holder", sa.String(36), nullable=False),
    sa.Column("node", sa.String(255), nullable=False),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("renewed_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_ownership_leases_holder", "holder"),
)
"""Which of a cluster's match hosts owns which tournament or ladder pool (``ownership.py``):
one row per ``key`` (``tournament:ID``, ``ladder:COURSE/GAME``), held by one host process
(``holder``, its uuid; ``node``, its name in the cluster) until ``expires_at``."""

LADDERS: Final = sa.Table(
    "ladders",
    METADATA,
    sa.Column("course", sa.String(64), primary_key=True),
    sa.Column("game", sa.String(32), primary_key=True),
    sa.Column("options", sa.JSON, nullable=False),
    sa.Column("move_ms", sa.Integer, nullable=False),
    sa.Column("bank_ms", sa.Integer, nullable=False),
    sa.Column("grace_ms", sa.Integer, nullable=False),
    sa.Column("fault_policy", sa.String(16), nullable=False),
    sa.Column("max_strikes", sa.Integer, nullable=False),
    sa.Column("max_deals", sa.Integer, nullable=False),
    sa.Column("concurrency", sa.Integer, nullable=False),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("started", sa.DateTime(timezone=True), nullable=False),
)
"""The ladders a cluster's match hosts run (``ladders.py``): one row per ladder pool (the
course, the game name), with what ``StartLadder`` set, so another host resumes it when the
pool's lease (``ladder:COURSE/GAME`` in ``ownership_leases``) expires; deleted when stopped."""


BOT_VERSIONS: Final = sa.Table(
    "bot_versions",
    METADATA,
    sa.Column(
        "bot",
        sa.String(64),
        sa.ForeignKey("bots.name", name="fk_bot_versions_bot"),
        primary_key=True,
    ),
    sa.Column("number", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("entry", sa.String(1000), nullable=False),
    sa.Column("games", sa.String(255), nullable=False),
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("unpacked_bytes", sa.BigInteger, nullable=False),
    sa.Column("files", sa.Integer, nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.Column("submitter", sa.String(64), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("report", sa.Text, nullable=False, server_default=""),
    sa.Column("crash_streak", sa.Integer, nullable=False, server_default=sa.text("0")),
    # Last: SQLite reads a row's columns in order, and every column after a large value
    # would walk its overflow pages (the versions are listed without their archives).
    sa.Column("archive", sa.LargeBinary, nullable=False),
    sa.Index("ix_bot_versions_status", "status", "created"),
)
"""Every version of a hosted bot (docs/hosting.md), numbered 1, 2, ... per bot and never
changed but for its verdict: ``status`` is ``checking`` until the validator runs it, then
``accepted`` or ``rejected`` (``report`` says why), and ``suspended`` once it crashed in
several matches in a row (``crash_streak``). ``archive`` is the canonical tar.gz
(server/hosting/spec/submissions.py), ``sha256`` its hash; ``games`` a comma list ("" for all)."""

MATCH_LOGS: Final = sa.Table(
    "match_logs",
    METADATA,
    sa.Column("match_id", sa.String(64), primary_key=True),
    sa.Column("bot", sa.String(64), primary_key=True),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("crashed", sa.Boolean, nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.Column("text", sa.Text, nullable=False),  # last, as bot_versions.archive
)
"""What a hosted bot (``version`` of ``bot``) wrote to stderr during a match, cut to 64 KiB,
and whether it crashed in it. No foreign key to ``matches``: the runner writes the log when the
bot's part ends, which may come before the referee stores the match."""


ANALYSES: Final = sa.Table(
    "analyses",
    METADATA,
    sa.Column(
        "match_id",
        sa.String(64),
        sa.ForeignKey("matches.id", name="fk_analyses_match"),
        primary_key=True,
    ),
    sa.Column("seat", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("bot", sa.String(64), nullable=False),
    sa.Column("game", sa.String(32), nullable=False),
    sa.Column("played", sa.DateTime(timezone=True), nullable=False),
    sa.Column("analysed", sa.DateTime(timezone=True), nullable=False),
    sa.Column("decisions", sa.Integer, nullable=False),
    sa.Column("mean_loss_points", sa.Double, nullable=False),
    sa.Column("accuracy", sa.Double, nullable=False),
    sa.Column("body", sa.Text, nullable=False),  # last, as bot_versions.archive
    sa.Index("ix_analyses_bot_played", "bot", "played", "match_id"),
)
"""The analysis of one seat of a match (docs/analysis.md): ``body`` is the JSON of a
``MatchAnalysis`` of that seat alone (its decisions, summary, and the match's pars); ``bot``
(the seat's name), ``played`` (the match's ``created``) and the summary's figures are copied
out of it for a bot's list and the grades (server/store/analyses.py). Analysing a seat again
replaces its row."""

ANALYSIS_JOBS: Final = sa.Table(
    "analysis_jobs",
    METADATA,
    sa.Column(
        "match_id",
        sa.String(64),
        sa.ForeignKey("matches.id", name="fk_analysis_jobs_match"),
        primary_key=True,
    ),
    sa.Column("tournament_id", sa.String(64), nullable=True),
    sa.Column("seats", sa.JSON, nullable=True),
    sa.Column("precision", sa.Double, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("error", sa.Text, nullable=False, server_default=""),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_analysis_jobs_state_created", "state", "created"),
    sa.Index("ix_analysis_jobs_tournament", "tournament_id"),
)
"""Matches waiting to be analysed (server/analysis/service/jobs.py), kept so a restart goes on with
them: ``state`` is ``pending``, ``running``, ``done`` or ``failed`` (``error`` says why);
``seats`` the seats asked for (NULL: all)."""


def utc(moment: dt.datetime) -> dt.datetime:
    """Return a time read from a column in UTC (SQLite keeps no zone; all times written are UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.UTC)
    return moment


def utc_text(moment: dt.datetime) -> str:
    """A time for a message: ISO 8601 to the second, ``Z`` for UTC (``2026-01-02T03:04:35Z``)."""
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def now() -> dt.datetime:
    """The time to stamp a row with: now, in UTC."""
    return dt.datetime.now(dt.UTC)
