"""The runner: hosted bots connected to the referee like any remote bot (docs/hosting.md).

For each bot with an accepted version (``store/hosted.py``), the runner holds one bot stream to
the referee (a single referee's own port, or a cluster's gateways) through the stdio relay
(``sdk/stdio/relay.py``): the Hello carries a runner token the runner set for the bot in the
database, so the bot's own token never leaves its owner and never enters the sandbox. The
referee sees a remote bot: the same clock, fault policy and records.

The relay starts the bot's sandboxed process (``bundles.py``, ``sandbox.py``) at its first
match, keeps it while it plays, stops it when idle and restarts it after a crash; the runner
picks the version for each start (the tournament's pinned one, else the latest accepted), keeps
each match's stderr (``match_logs.py``) and stores it when the match ends. A version whose
process dies in several matches in a row is suspended by the store, and the runner lets its bot
go. New versions are checked by the validator (``validator.py``) before any of this.

On a cluster (``serve --role runner``) several runners share the bots: each takes a bot's
ownership lease (``store/ownership.py``, key ``hosted:NAME``) before it connects it, renews
its leases, and lets go of a bot whose lease another runner took. docs/hosting.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from sqlalchemy.engine import Engine

from domino_arena.sdk.client.errors import RefereeError
from domino_arena.sdk.client.tls import ClientTls
from domino_arena.sdk.stdio.child import ChildCommand
from domino_arena.sdk.stdio.relay import RelayHooks, relay
from domino_arena.server.logs import escape
from domino_arena.server.store import bots, hosted, ownership, tables
from domino_arena.server.store.lease import Holder
from domino_arena.v1 import referee_pb2

from .bundles import Bundles
from .match_logs import MatchLogs
from .validator import Validator

LOG: Final = logging.getLogger(__name__)

CLIENT: Final = "domino-arena-runner"
"""The Hello's ``client`` of a hosted bot: the referee's lists show who runs it."""
NOTES_ROOM: Final = 1024
"""Bytes of a match's kept log left for the runner's own lines (an exit, what was cut)."""
RETRY_SECONDS: Final = 5.0
"""How long the runner waits before connecting a bot again after its stream failed."""


def hosted_key(bot: str) -> str:
    """The ownership lease of a hosted bot on a cluster (one runner hosts it)."""
    return f"hosted:{bot}"


@dataclass(frozen=True, slots=True)
class Hosting:
    """A single referee's own runner (``serve``, on by default; ``--no-hosting`` turns it off)."""

    workdir: Path
    """Where versions are unpacked (``serve --hosting-dir``; readable by the sandbox's user)."""
    idle_stop_seconds: float = 60.0
    poll_seconds: float = 2.0


@dataclass(frozen=True, slots=True)
class RunnerConfig:
    """Where the runner connects and how it keeps its bots."""

    target: str
    """The referee's bot address (``host:port``), or a cluster's gateways'."""
    workdir: Path
    """Where versions are unpacked (readable by the sandbox's user)."""
    tls: ClientTls | None = None
    """TLS to the referee; None: plaintext (a single referee's own loopback port)."""
    poll_seconds: float = 2.0
    """How often the runner looks for bots to host, versions to check and leases to renew."""
    idle_stop_seconds: float = 60.0
    """A bot's process is stopped after this long without a match (started again at the next)."""
    node: str = ""
    """This runner's name on a cluster (its leases say it); empty on a single referee."""
    holder: Holder | None = None
    """A cluster's runner leases each bot it hosts; None (a single referee's runner) hosts all."""
    lease_seconds: float = 30.0
    max_bots: int = 500
    """The most bots this runner hosts at once (a cluster spreads the rest over other runners)."""


@dataclass(slots=True)
class _Hosted:
    """One bot this runner connects: its relay's task and what it played with."""

    logs: MatchLogs
    task: asyncio.Task[None] | None = None
    running: int = 0
    """The version of the bot's process now (0: none started)."""


class Runner:
    """Hosts every hosted bot of a database (or its share of them on a cluster)."""

    def __init__(self, engine: Engine, config: RunnerConfig) -> None:
        self.engine = engine
        self.config = config
        self.bundles = Bundles(config.workdir / "bundles")
        self.validator = Validator(
            engine, self.bundles, None if config.holder is None else self._claim_check
        )
        self._hosted: dict[str, _Hosted] = {}

    @property
    def hosting(self) -> tuple[str, ...]:
        """The bots this runner connects now."""
        return tuple(sorted(self._hosted))

    async def run(self) -> None:
        """Host bots and check versions until cancelled; let every bot go at the end."""
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self.validator.run(self.config.poll_seconds))
                while True:
                    await self._follow()
                    await asyncio.sleep(self.config.poll_seconds)
        finally:
            for name in list(self._hosted):
                await self._drop(name)
            if self.config.holder is not None:
                holder = self.config.holder
                with contextlib.suppress(Exception):  # the leases expire by themselves
                    await asyncio.to_thread(ownership.release_all, self.engine, holder)

    async def _follow(self) -> None:
        """Connect the bots that became hosted, let go of those that are not any more."""
        try:
            wanted = set(await asyncio.to_thread(hosted.hosted_bot_names, self.engine))
            if self.config.holder is not None:
                wanted = await self._leased(wanted)
        except Exception as error:  # the database is away: keep what runs, look again later
            LOG.warning("hosted bots not looked up: %s", error)
            return
        for name in sorted(set(self._hosted) - wanted):
            LOG.info("hosted bot %s: no longer hosted here", escape(name))
            await self._drop(name)
        for name in sorted(wanted - set(self._hosted))[: self._room()]:
            LOG.info("hosted bot %s: connecting", escape(name))
            entry = _Hosted(MatchLogs(1))
            entry.task = asyncio.create_task(self._host(name, entry), name=f"hosted {name}")
            self._hosted[name] = entry

    def _claim_check(self, bot: str, number: int) -> bool:
        """On a cluster, whether this runner is the one to check version ``number`` of ``bot``
        (a lease of its own: two runners never check one version; it expires by itself)."""
        assert self.config.holder is not None
        key = f"{hosted_key(bot)}:check:{number}"
        seconds = max(self.config.lease_seconds, 600.0)  # a check takes seconds, not minutes
        claim = ownership.claim(
            self.engine, key, self.config.holder, self.config.node, seconds=seconds
        )
        return claim.won

    def _room(self) -> int:
        return max(0, self.config.max_bots - len(self._hosted))

    async def _leased(self, wanted: set[str]) -> set[str]:
        """The bots of ``wanted`` this runner holds (renewed) or could take (claimed)."""
        holder = self.config.holder
        assert holder is not None
        seconds = self.config.lease_seconds
        mine = {hosted_key(name): name for name in self._hosted}
        lost = await asyncio.to_thread(ownership.renew, self.engine, holder, mine, seconds=seconds)
        held = {name for key, name in mine.items() if key not in lost}
        room = self._room()
        if room <= 0:
            return held & wanted
        live = await asyncio.to_thread(ownership.owners, self.engine)
        others = {owner.key for owner in live if owner.holder != holder.id}
        free = sorted(name for name in wanted - held if hosted_key(name) not in others)
        for name in free:  # claimed one by one (another runner may be quicker), until full
            if room <= 0:
                break
            claim = await asyncio.to_thread(
                ownership.claim,
                self.engine,
                hosted_key(name),
                holder,
                self.config.node,
                seconds=seconds,
            )
            if claim.won:
                held.add(name)
                room -= 1
        return held & wanted

    async def _drop(self, name: str) -> None:
        entry = self._hosted.pop(name, None)
        if entry is None:
            return
        if entry.task is not None:
            entry.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await entry.task
        if self.config.holder is not None:
            holder = self.config.holder
            with contextlib.suppress(Exception):
                await asyncio.to_thread(ownership.release, self.engine, holder, hosted_key(name))

    async def _host(self, name: str, entry: _Hosted) -> None:
        """Keep ``name`` connected through the relay until cancelled, reconnecting after a
        failed stream."""
        while True:
            try:
                await self._connect(name, entry)
            except asyncio.CancelledError:
                raise
            except RefereeError as error:
                LOG.warning("hosted bot %s: %s", escape(name), error)
            except Exception:
                LOG.exception("hosted bot %s: the relay failed", escape(name))
            await asyncio.sleep(RETRY_SECONDS)

    async def _connect(self, name: str, entry: _Hosted) -> None:
        token = secrets.token_urlsafe(32)
        await asyncio.to_thread(hosted.set_runner_token, self.engine, name, token)
        latest = await asyncio.to_thread(hosted.latest_accepted, self.engine, name)
        if latest is None:
            return
        entry.logs = MatchLogs(hosted.MAX_LOG_BYTES - NOTES_ROOM)
        hello = referee_pb2.Hello(
            name=name, token=token, games=latest.games, protocol_version=2, client=CLIENT
        )
        hooks = RelayHooks(
            on_stderr=entry.logs.add,
            on_exit=entry.logs.exited,
            on_match_end=lambda match_id: self._ended(name, entry, match_id),
        )
        await relay(
            self.config.target,
            hello,
            self._command_for(name, entry),
            credentials=None if self.config.tls is None else self.config.tls.credentials(),
            hooks=hooks,
            idle_stop_seconds=self.config.idle_stop_seconds,
        )

    def _command_for(self, name: str, entry: _Hosted) -> Callable[[str], ChildCommand]:
        """The relay's way to start ``name``'s process for a match: that match's version.

        Called on the event loop at a process's start (the first match after an idle stop, or a
        restart): one indexed read, and an unpack the first time a version runs.
        """

        def command(match_id: str) -> ChildCommand:
            version = hosted.version_for_match(self.engine, name, match_id)
            if version is None:
                raise RuntimeError(f"bot {name}: no accepted version to run")
            submission = hosted.version_archive(self.engine, name, version.number)
            if submission is None:
                raise RuntimeError(f"bot {name}: version {version.number} has no files")
            stored = bots.bot(self.engine, name)
            limits = hosted.hosting_limits_for(
                self.engine,
                course=None if stored is None else stored.course,
                tournament_id=hosted.tournament_of_match(match_id),
            )
            entry.running = version.number
            entry.logs.limit = min(limits.log_kb * 1024, hosted.MAX_LOG_BYTES - NOTES_ROOM)
            LOG.info("hosted bot %s: starting version %d", escape(name), version.number)
            return self.bundles.command(submission, limits)

        return command

    def _ended(self, name: str, entry: _Hosted, match_id: str) -> None:
        """A match of ``name`` ended: store its log; a suspended version lets the bot go."""
        log = entry.logs.pop(match_id)
        number = entry.running

        async def store() -> None:
            try:
                suspended = await asyncio.to_thread(
                    hosted.record_match_log,
                    self.engine,
                    match_id,
                    name,
                    number,
                    log.text(),
                    crashed=log.crashed,
                    now=tables.now(),
                )
            except Exception as error:
                LOG.warning("the log of %s in %s not stored: %s", name, match_id, error)
                return
            if suspended:
                LOG.warning("hosted bot %s: version %d suspended (crashes)", escape(name), number)
                await self._drop(name)

        if number:
            asyncio.get_running_loop().create_task(store())
