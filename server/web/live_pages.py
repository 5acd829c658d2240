"""The live pages: ``/live`` (what the referee plays now), ``/live/{id}`` (one match, drawn on the
server) and ``/api/live/{id}/events`` (its server-sent events), over a :class:`LiveSource`.

Without a live source (``domino-arena web`` without ``--server``) the pages say so with a 200
and their JSON has ``"referee": null``; the event stream, which cannot work then, is a 503.

An event is ``event: NAME`` and one ``data:`` line of JSON (:func:`sse_json`: ``<``, ``>`` and
``&`` written as ``\\u003c`` ``\\u003e`` ``\\u0026``, so no stored text appears raw in the bytes);
a ``step`` event that has a table carries ``html`` too, the table drawn by the same template as
the page (Jinja2-escaped), which ``static/live.js`` swaps in.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Final
from urllib.parse import quote

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.templating import Jinja2Templates
from starlette.types import Receive, Scope, Send

from domino_arena.sdk.client.spectator import Lobby
from domino_arena.server.web.live import GONE, LiveSource, StreamCutError, StreamEvents, replay_url
from domino_arena.server.web.params import WebError
from domino_arena.server.web.scoped import PublicNames

API: Final = "/api"
NO_REFEREE: Final = (
    "No referee is connected: this web face was started without --server, so it shows "
    "stored matches only."
)
RETRY_MS: Final = 5000
"""What ``retry:`` tells a browser to wait before it reconnects a broken stream."""


def sse_json(data: Any) -> str:
    """``data`` as one line of JSON that holds no raw ``<``, ``>`` or ``&``."""
    text = json.dumps(data, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def events_url(match_id: str) -> str:
    return f"{API}/live/{quote(match_id, safe='')}/events"


def live_url(match_id: str) -> str:
    return f"/live/{quote(match_id, safe='')}"


# -- the data of each page ------------------------------------------------------------------


def lobby_data(lobby: Lobby) -> dict[str, Any]:
    """The referee's live matches (oldest first), the bots connected to it and its running
    ladders (by game name)."""
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


async def live_list(live: LiveSource | None) -> dict[str, Any]:
    if live is None:
        return {"referee": None, "message": NO_REFEREE, **lobby_data(NOBODY)}
    return {"referee": live.server, **lobby_data(await live.lobby())}


async def home_live(live: LiveSource) -> dict[str, Any]:
    """The home page's live part: the matches, or why the referee could not say (no error
    page: the rest of the home page is the database's)."""
    try:
        return {"referee": live.server, "error": None, **lobby_data(await live.lobby())}
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


async def live_match(live: LiveSource | None, match_id: str) -> dict[str, Any]:
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
        snapshot = await live.snapshot(match_id)
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
        last=None if last is None else {k: last[k] for k in ("step", "seat", "action")},
        table=None if last is None else last["table"],
        end=snapshot.end,
    )
    return data


# -- the event stream -----------------------------------------------------------------------


class EventStream(Response):
    """A ``text/event-stream`` of one match for one browser: the events, a comment as a
    heartbeat, a ``cut`` event when it ends early; it stops the watch when the browser goes."""

    media_type = "text/event-stream"

    def __init__(
        self,
        events: StreamEvents,
        render: Callable[[dict[str, Any], list[str]], str],
        scrub: Callable[[Any], Any] = lambda data: data,
    ):
        # Not Response.__init__: it would declare a Content-Length (of an empty body).
        self.status_code = 200
        self.background = None
        self.raw_headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-store"),
            (b"x-accel-buffering", b"no"),
        ]
        self.events = events
        self.draw = render
        self.scrub = scrub
        """Hides the names of anonymous courses' bots (:class:`~.scoped.PublicNames`)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            async with anyio.create_task_group() as group:

                async def body() -> None:
                    await self._body(send)
                    group.cancel_scope.cancel()

                async def gone() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    group.cancel_scope.cancel()

                group.start_soon(body)
                group.start_soon(gone)
        except OSError:
            pass  # the browser went away mid-write
        finally:
            await self.events.stop()

    async def _body(self, send: Send) -> None:
        async def write(text: str, more: bool = True) -> None:
            await send({"type": "http.response.body", "body": text.encode(), "more_body": more})

        await write(f"retry: {RETRY_MS}\n\n")
        players: list[str] = []
        while True:
            try:
                item = await self.events.next()
            except TimeoutError:
                await write(": heartbeat\n\n")
                continue
            except StreamCutError as cut:
                await write(f"event: cut\ndata: {sse_json({'reason': cut.reason})}\n\n")
                break
            if item is None:
                break
            name, data = item
            data = self.scrub(data)
            if name == "start":
                players = data["players"]
            elif name == "step" and data["table"] is not None:
                data = {**data, "html": self.draw(data["table"], players)}
            await write(f"event: {name}\ndata: {sse_json(data)}\n\n")
        await write("", more=False)


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
) -> list[BaseRoute]:
    """``/live``, ``/live/{id}`` (each with its JSON under ``/api``) and the event stream;
    every name of an anonymous course's bot in them is shown as its alias (``names``). A live
    match's page links its course (``course_of``: its ``course_link``, null for the default
    course and before the match is known)."""
    fragment = templates.env.get_template("live_table.html")

    def render(table: dict[str, Any], players: list[str]) -> str:
        return fragment.render(t=table, seats=players)

    def page(request: Request, template: str, data: dict[str, Any]) -> Response:
        context = {"data": data, "query": {}, "api_url": API + request.url.path}
        return templates.TemplateResponse(request, template, context)

    async def lobby() -> dict[str, Any]:
        data = await live_list(live)
        scrubbed: dict[str, Any] = (await names()).scrub(data)
        return scrubbed

    async def one(request: Request) -> dict[str, Any]:
        data = await live_match(live, request.path_params["id"])
        start = data["start"]
        # Read with the real names, before they are scrubbed.
        data["course_link"] = (
            None if start is None else await course_of(start["players"], start["tournament_id"])
        )
        scrubbed: dict[str, Any] = (await names()).scrub(data)
        return scrubbed

    async def lobby_html(request: Request) -> Response:
        return page(request, "live.html", await lobby())

    async def lobby_api(request: Request) -> Response:
        return JSONResponse(await lobby())

    async def match_html(request: Request) -> Response:
        return page(request, "live_match.html", await one(request))

    async def match_api(request: Request) -> Response:
        return JSONResponse(await one(request))

    async def events(request: Request) -> Response:
        if live is None:
            raise WebError(503, NO_REFEREE)
        if request.method == "HEAD":  # no stream (it would hold a slot for nothing)
            return Response(media_type=EventStream.media_type)
        hidden = await names()
        return EventStream(await live.open(request.path_params["id"]), render, hidden.scrub)

    return [
        Route("/live", lobby_html, methods=["GET"]),
        Route(API + "/live", lobby_api, methods=["GET"]),
        Route("/live/{id}", match_html, methods=["GET"]),
        Route(API + "/live/{id}", match_api, methods=["GET"]),
        Route(API + "/live/{id}/events", events, methods=["GET"]),
    ]
