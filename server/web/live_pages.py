"""The live pages: ``/live`` (what the referee plays now), ``/live/{id}`` (one match, drawn on the
server) and ``/api/live/{id}/events`` (its server-sent events), over a :class:`LiveSource`.

Without a live source (``domino-arena web`` without ``--server``) the pages say so with a 200
and their JSON has ``"referee": null``; the event stream, which cannot work then, is a 503.

An event is ``event: NAME`` and one ``data:`` line of JSON (:func:`~.live_feed.sse_json`: ``<``,
``>`` and ``&`` written as ``\\u003c`` ``\\u003e`` ``\\u0026``, so no stored text appears raw
in the bytes); a ``step`` event that has a table carries ``html`` too, the table drawn by the
same template as the page (Jinja2-escaped), which ``static/live.js`` swaps in. Each event is
encoded once per match, its names scrubbed then, and shared by every browser of the match
(:mod:`.live_feed`).

A match whose live view is ``signed-in`` is shown only to a browser signed in to its course
(:mod:`.live_access`); to any other it does not exist (not listed; its page, JSON and events
404). The home page, drawn for anyone, lists the public matches only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.templating import Jinja2Templates
from starlette.types import Receive, Scope, Send

from domino_arena.sdk.client.spectator import LiveView, Lobby
from domino_arena.server.web.live import GONE, Allowed, LiveSource, public_only
from domino_arena.server.web.live_access import allowed_for
from domino_arena.server.web.live_feed import (
    Encode,
    MakeEncode,
    Reader,
    plain_encode,
    replay_url,
    sse_event,
    stream_until_gone,
)
from domino_arena.server.web.params import WebError
from domino_arena.server.web.scoped import PublicNames
from domino_arena.server.web.seat_names import step_who
from domino_arena.server.web.sessions import Sessions, client_address
from domino_arena.server.web.views import WebStorage

API: Final = "/api"
NO_REFEREE: Final = (
    "No referee is connected: this web face was started without --server, so it shows "
    "stored matches only."
)
RETRY_MS: Final = 5000
"""What ``retry:`` tells a browser to wait before it reconnects a broken stream."""


def events_url(match_id: str) -> str:
    return f"{API}/live/{quote(match_id, safe='')}/events"


def live_url(match_id: str) -> str:
    return f"/live/{quote(match_id, safe='')}"


# -- the data of each page ------------------------------------------------------------------


def _no_browsers(match_id: str) -> int:
    return 0


def lobby_data(lobby: Lobby, browsers: Callable[[str], int] = _no_browsers) -> dict[str, Any]:
    """The referee's live matches (oldest first), the bots connected to it and its running
    ladders (by game name); ``watchers`` is the referee's count (this web face counts once),
    ``browsers`` this web face's own."""
    return {
        "matches": [
            {
                "id": m.match_id,
                "game": m.game.name,
                "title": m.game.describe(),
                "players": list(m.players),
                "tournament_id": m.tournament_id,
                "started": m.started.isoformat(),
                "steps": m.steps,
                "deal": m.deal,
                "scores": list(m.scores),
                "watchers": m.watchers,
                "browsers": browsers(m.match_id),
                "url": live_url(m.match_id),
            }
            for m in lobby.matches
        ],
        "connected": [
            {"name": b.name, "games": list(b.games), "matches": b.matches} for b in lobby.connected
        ],
        "ladders": [
            {
                "game": ladder.game.name,
                "title": ladder.game.describe(),
                "started": ladder.started,
                "finished": ladder.finished,
            }
            for ladder in lobby.ladders
        ],
    }


NOBODY: Final = Lobby(matches=(), connected=())
"""The lobby shown where no referee can say: nothing live, nobody connected, no ladder."""


async def visible(lobby: Lobby, allowed: Allowed) -> Lobby:
    """``lobby`` with only the matches the browser may see (a ``none`` one never)."""
    shown = [
        m
        for m in lobby.matches
        if m.live_view is not LiveView.NONE and await allowed(m.course, m.live_view)
    ]
    return Lobby(tuple(shown), lobby.connected, lobby.ladders)


async def live_list(live: LiveSource | None, allowed: Allowed = public_only) -> dict[str, Any]:
    if live is None:
        return {"referee": None, "message": NO_REFEREE, **lobby_data(NOBODY)}
    lobby = await visible(await live.lobby(), allowed)
    return {"referee": live.server, **lobby_data(lobby, live.browsers)}


async def home_live(live: LiveSource) -> dict[str, Any]:
    """The home page's live part: the public matches, or why the referee could not say (no
    error page: the rest of the home page is the database's)."""
    try:
        lobby = await visible(await live.lobby(), public_only)
        return {"referee": live.server, "error": None, **lobby_data(lobby, live.browsers)}
    except WebError as exc:
        return {"referee": live.server, "error": exc.message, **lobby_data(NOBODY)}


async def connection(live: LiveSource, bot: str) -> dict[str, Any]:
    """Whether ``bot`` is connected to the referee now, with the games it offers and the
    matches it sits in (``connected`` is null when the referee cannot be reached)."""
    try:
        lobby = await live.lobby()
    except WebError as exc:
        return {"connected": None, "games": [], "matches": 0, "error": exc.message}
    for b in lobby.connected:
        if b.name == bot:
            return {"connected": True, "games": list(b.games), "matches": b.matches, "error": None}
    return {"connected": False, "games": [], "matches": 0, "error": None}


async def live_match(
    live: LiveSource | None,
    match_id: str,
    allowed: Allowed = public_only,
    make_encode: MakeEncode = plain_encode,
) -> dict[str, Any]:
    """One match as the live page first draws it: ``state`` is ``live`` or ``over``."""
    LiveSource.check_id(match_id)
    data: dict[str, Any] = {
        "referee": None if live is None else live.server,
        "match_id": match_id,
        "replay": replay_url(match_id),
        "events": events_url(match_id),
        "state": None,
        "start": None,
        "step": 0,
        "last": None,
        "table": None,
        "end": None,
    }
    if live is None:
        data["message"] = NO_REFEREE
        return data
    try:
        snapshot = await live.snapshot(match_id, allowed, make_encode)
    except WebError as exc:
        if exc.status != GONE:
            raise
        data.update(state="over", message=exc.message)
        return data
    last = snapshot.last
    data.update(
        state="live" if snapshot.end is None else "over",
        start=snapshot.start,
        step=snapshot.steps,
        last=None if last is None else {k: last[k] for k in ("step", "seat", "action", "deal")},
        table=None if last is None else last["table"],
        end=snapshot.end,
    )
    return data


# -- the event stream -----------------------------------------------------------------------


class EventStream(Response):
    """A ``text/event-stream`` of one match for one browser: everything pending written as one
    chunk, a comment as a heartbeat, a ``cut`` event when it ends early; it leaves the match's
    feed when the browser goes."""

    media_type = "text/event-stream"

    def __init__(self, reader: Reader, heartbeat_seconds: float):
        # Not Response.__init__: it would declare a Content-Length (of an empty body).
        self.status_code = 200
        self.background = None
        self.raw_headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-store"),
            (b"x-accel-buffering", b"no"),
        ]
        self.reader = reader
        self.heartbeat_seconds = heartbeat_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await stream_until_gone(receive, send, self.raw_headers, lambda: self._body(send))
        finally:
            self.reader.close()

    async def _body(self, send: Send) -> None:
        async def write(chunk: bytes, more: bool = True) -> None:
            await send({"type": "http.response.body", "body": chunk, "more_body": more})

        chunk, last = self.reader.pending()
        await write(f"retry: {RETRY_MS}\n\n".encode() + chunk)
        while not last:
            if not await self.reader.wait(self.heartbeat_seconds):
                await write(b": heartbeat\n\n")
                continue
            chunk, last = self.reader.pending()
            await write(chunk)
        await write(b"", more=False)


# -- the routes -----------------------------------------------------------------------------


Names = Callable[[], Awaitable[PublicNames]]
"""The public names of the moment (read from the storage in a worker thread)."""
CourseOf = Callable[[list[str], str | None], Awaitable[dict[str, Any] | None]]
"""The course link of a live match, from its players and tournament id (read from the storage
in a worker thread; :func:`~.course_links.course_link`)."""


async def _nobody_hidden() -> PublicNames:
    return PublicNames({}, {}, None)


async def _no_course(players: list[str], tournament_id: str | None) -> dict[str, Any] | None:
    return None


def live_routes(
    live: LiveSource | None,
    templates: Jinja2Templates,
    names: Names = _nobody_hidden,
    course_of: CourseOf = _no_course,
    *,
    sessions: Sessions | None = None,
    storage: WebStorage | None = None,
) -> list[BaseRoute]:
    """``/live``, ``/live/{id}`` (each with its JSON under ``/api``) and the event stream;
    every name of an anonymous course's bot in them is shown as its alias (``names``). A live
    match's page links its course (``course_of``: its ``course_link``, null for the default
    course and before the match is known). A signed-in match is shown to the browsers with a
    current session of its course (``sessions``, checked against ``storage``); without them,
    to nobody."""
    fragment = templates.env.get_template("live_table.html")

    def render(table: dict[str, Any], players: list[str]) -> str:
        return fragment.render(t=table, seats=players)

    async def make_encode(start: dict[str, Any]) -> Encode:
        """A match's events as every browser gets them: the names of the moment scrubbed (read
        once: a match's players are registered before it starts), its tables drawn."""
        hidden = await names()
        players: list[str] = hidden.scrub(start)["players"]

        def encode(name: str, data: dict[str, Any]) -> bytes:
            data = hidden.scrub(data)
            if name == "step":
                data = {**data, "who": step_who(data["seat"], players, data["deal"])}
                if data["table"] is not None:
                    data["html"] = render(data["table"], players)
            return sse_event(name, data)

        return encode

    def allowed(request: Request) -> Allowed:
        return allowed_for(request, sessions, storage)

    def page(request: Request, template: str, data: dict[str, Any]) -> Response:
        context = {"data": data, "query": {}, "api_url": API + request.url.path}
        return templates.TemplateResponse(request, template, context)

    async def lobby(request: Request) -> dict[str, Any]:
        data = await live_list(live, allowed(request))
        scrubbed: dict[str, Any] = (await names()).scrub(data)
        return scrubbed

    async def one(request: Request) -> dict[str, Any]:
        data = await live_match(live, request.path_params["id"], allowed(request), make_encode)
        start = data["start"]
        # Read with the real names, before they are scrubbed.
        data["course_link"] = (
            None if start is None else await course_of(start["players"], start["tournament_id"])
        )
        scrubbed: dict[str, Any] = (await names()).scrub(data)
        return scrubbed

    async def lobby_html(request: Request) -> Response:
        return page(request, "live.html", await lobby(request))

    async def lobby_api(request: Request) -> Response:
        return JSONResponse(await lobby(request))

    async def match_html(request: Request) -> Response:
        return page(request, "live_match.html", await one(request))

    async def match_api(request: Request) -> Response:
        return JSONResponse(await one(request))

    async def events(request: Request) -> Response:
        if live is None:
            raise WebError(503, NO_REFEREE)
        if request.method == "HEAD":  # no stream (it would hold a slot for nothing)
            return Response(media_type=EventStream.media_type)
        reader = await live.open(
            request.path_params["id"], client_address(request), allowed(request), make_encode
        )
        return EventStream(reader, live.heartbeat_seconds)

    return [
        Route("/live", lobby_html, methods=["GET"]),
        Route(API + "/live", lobby_api, methods=["GET"]),
        Route("/live/{id}", match_html, methods=["GET"]),
        Route(API + "/live/{id}", match_api, methods=["GET"]),
        Route(API + "/live/{id}/events", events, methods=["GET"]),
    ]
