"""The person's pages: the form that seats them, their table, its event stream and their moves.

- ``GET /courses/{name}/play``: the form (a signed-in student or organizer of the course; else
  how to sign in): the game (``?game=``: the opponents depend on it), the seat, the deals, who
  sits in each other seat (the referee's ``ListOpponents``: house bots, the person's own bots,
  bots whose owners allow people; those not connected are shown but cannot be chosen).
- ``POST /courses/{name}/play``: CSRF-checked and read bounded; within the bounds of
  :mod:`.registry`, asks the referee for the seat (``SeatPerson``), connects it
  (:class:`~.seat.SeatClient`) and redirects to the table.
- ``GET /play/{id}`` (JSON: ``/api/play/{id}``): the person's table, to the session that started
  the match only (a 404 for anyone else, as for a match that does not exist).
- ``GET /api/play/{id}/events``: its server-sent events (:mod:`.stream`), same owner check.
- ``POST /play/{id}/act``: one action (field ``action``, its canonical text), CSRF-checked: a
  204 (or, from a plain form, a 303 back to the table), or a 400 saying what is wrong.

The table's own CSRF cookie lives under ``/play`` (the course forms' under ``/courses``). In an
anonymous course a student sees every other student's bot and name by its alias, as on the
public pages (the organizer sees real names, as on the organizer's page).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.templating import Jinja2Templates

from domino_arena.server.web import course_pages
from domino_arena.server.web.live import LiveSource
from domino_arena.server.web.params import WebError, not_found
from domino_arena.server.web.people import form as play_form
from domino_arena.server.web.people.registry import PersonMatches
from domino_arena.server.web.people.seat import ActError, SeatClient
from domino_arena.server.web.people.stream import STREAMS_PER_MATCH, PlayStream
from domino_arena.server.web.people.tables import Person, Tables
from domino_arena.server.web.scoped import PublicNames, known_course, public_names
from domino_arena.server.web.sessions import (
    RateLimit,
    Session,
    Sessions,
    client_address,
    current,
    read_form,
)
from domino_arena.server.web.views import WebStorage

API: Final = "/api"
PLAY_COOKIE_PATH: Final = "/play"
NO_STORE: Final = {"Cache-Control": "no-store"}
PLAY_PATHS: Final = r"^/courses/[^/]+/play$|^/play/[^/]+/act$"
"""The paths of this module that take a POST (for the security middleware)."""
NO_REFEREE: Final = (
    "This web face cannot seat people: it follows no referee (domino-arena web --server), or "
    "holds no relay token of it (--relay-token-file)."
)


def play_url(match_id: str) -> str:
    return f"/play/{quote(match_id, safe='')}"


def _names_without(names: PublicNames, keep: set[str]) -> PublicNames:
    """``names`` less ``keep`` (the person's own names, which they may see)."""
    kept = {real: alias for real, alias in names.names.items() if real not in keep}
    ordered = sorted(kept, key=lambda n: (-len(n), n))
    pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
    by_course = {bot: c for bot, c in names.by_course.items() if bot in kept}
    return PublicNames(kept, by_course, pattern)


def play_routes(
    storage: WebStorage,
    templates: Jinja2Templates,
    live: LiveSource | None,
    sessions: Sessions,
    rate_limit: RateLimit,
    *,
    matches: PersonMatches,
) -> list[BaseRoute]:
    """The routes of the person's pages (see the module)."""
    tables: Tables | None = None
    if live is not None and live.relay_token:
        tables = Tables(live.server, live.relay_token, tls=live.tls)
        matches.closing.append(tables.close)
    panel = templates.env.get_template("play_panel.html")

    # -- who is asking ----------------------------------------------------------------------

    async def signed_in(request: Request, course: str) -> tuple[Session, Person] | None:
        """The request's current session of ``course`` (the organizer's first) and the person
        it is."""
        for kind in ("organizer", "bot"):
            session = sessions.read(request, kind, course)
            if session is None:
                continue
            if not await run_in_threadpool(current, storage, kind, course, session):
                continue
            if kind == "organizer":
                return session, Person(course, "organizer", play_form.DEFAULT_ORGANIZER_NAME)
            bot = await run_in_threadpool(storage.bot, session.name)
            if bot is not None:
                return session, Person(course, "student", bot.owner or bot.name, bot.owner)
        return None

    async def scrubber(person: Person) -> PublicNames:
        """What hides other students' names from ``person`` (nothing for the organizer)."""
        names: PublicNames = await run_in_threadpool(public_names, storage)
        if person.role != "student":
            return PublicNames({}, {}, None)
        own = {person.name, person.owner}
        own |= {
            b.name
            for b in await run_in_threadpool(storage.bots, course=person.course)
            if person.owner and b.owner == person.owner
        }
        return _names_without(names, own)

    async def mine(request: Request) -> SeatClient:
        """The match of the path, if this request's session started it (else a 404)."""
        match_id = request.path_params["id"]
        match = matches.get(match_id)
        missing = not_found(f"no match of yours has id {match_id[:200]!r} at this web face")
        if match is None or not isinstance(match.owner, Session):
            raise missing
        owner = match.owner
        if sessions.read(request, owner.kind, owner.course) != owner:
            raise missing
        if not await run_in_threadpool(current, storage, owner.kind, owner.course, owner):
            raise missing
        return match

    # -- the form -------------------------------------------------------------------------------

    async def form_data(
        request: Request, person: Person | None, game_value: str | None
    ) -> dict[str, Any]:
        course = await run_in_threadpool(known_course, storage, request.path_params["name"])
        key, game = play_form.chosen_game(game_value)
        data: dict[str, Any] = {
            "course": course_pages.course_summary(course),
            "person": None if person is None else {"name": person.name, "role": person.role},
            "games": play_form.game_choices(),
            "game": key,
            "title": game.describe(),
            "players": game.num_players,
            "deals": [
                {"value": v, "text": play_form.DEALS_TEXT[n]} for v, n in play_form.DEALS.items()
            ],
            "opponents": [],
            "default_opponent": "",
            "clock": None,
            "message": None,
            "referee": NO_REFEREE if tables is None else None,
            "form": {},
        }
        if person is None or tables is None:
            return data
        names = await scrubber(person)
        try:
            listed = await tables.opponents(person, game)
        except WebError as exc:
            data["referee"] = exc.message
            return data
        data["opponents"] = [
            {
                "value": names.text(o.name),
                "name": names.text(o.name),
                "kind": "house bot" if o.house else "your bot" if o.own else "bot",
                "connected": o.connected,
            }
            for o in listed.opponents
        ]
        connected = [o["value"] for o in data["opponents"] if o["connected"]]
        preferred = [v for v in play_form.PREFERRED if v in connected]
        data["default_opponent"] = (preferred or connected or [""])[0]
        data["clock"] = {"move_ms": listed.clock.move_ms, "bank_ms": listed.clock.bank_ms}
        return data

    def render(
        request: Request,
        template: str,
        context: dict[str, Any],
        status: int = 200,
        cookie_path: str = "/courses",
    ) -> Response:
        token, fresh = sessions.csrf(request)
        response = templates.TemplateResponse(
            request,
            template,
            {"query": {}, "csrf": token, **context},
            status_code=status,
            headers=NO_STORE,
        )
        sessions.set_csrf(response, request, fresh, path=cookie_path)
        return response

    async def show_form(request: Request) -> Response:
        who = await signed_in(request, request.path_params["name"])
        data = await form_data(
            request, None if who is None else who[1], request.query_params.get("game")
        )
        return render(request, "play_form.html", {"data": data})

    async def start(request: Request) -> Response:
        address = client_address(request)
        rate_limit.check(address)
        form = await read_form(request)
        name = request.path_params["name"]
        try:
            sessions.check_csrf(request, form)
        except WebError:
            rate_limit.failed(address)
            raise
        who = await signed_in(request, name)
        if who is None:
            rate_limit.failed(address)
            raise WebError(
                401,
                f"not signed in: sign in as a student at /courses/{name}/me or as the "
                f"organizer at /courses/{name}/organizer, then come back to /courses/{name}/play",
            )
        session, signed = who
        person = signed  # the bounds count the signed-in person, whatever name they show
        try:
            choice = play_form.read_choice(form, organizer=person.role == "organizer")
            if choice.name is not None:
                person = Person(person.course, person.role, choice.name, person.owner)
            if tables is None or live is None:
                raise WebError(503, NO_REFEREE)
            names = await scrubber(person)
            real = {alias: real for real, alias in names.names.items()}
            opponents = tuple(real.get(o, o) for o in choice.opponents)
            with matches.reserve(signed):
                seated = await tables.seat(
                    person, choice.game, choice.seat, opponents, max_deals=choice.max_deals
                )
                match = SeatClient(
                    seated,
                    person=signed,
                    owner=session,
                    game=choice.game,
                    seat=choice.seat,
                    server=live.server,
                    tls=live.tls,
                    pace=matches.pace,
                    names=names.scrub,
                )
                match.start()
                matches.add(match)
        except WebError as exc:
            asked = form.get("game", "").strip()
            data = await form_data(request, person, asked if asked in play_form.GAMES else None)
            data["message"] = exc.message
            data["form"] = {k: v for k, v in form.items() if k != "csrf"}
            return render(request, "play_form.html", {"data": data}, status=exc.status)
        return RedirectResponse(play_url(match.match_id), status_code=303)

    # -- the table ------------------------------------------------------------------------------

    def panel_html(match: SeatClient, csrf: str) -> Callable[[dict[str, Any]], str]:
        def draw(view: dict[str, Any]) -> str:
            return panel.render(v=view, csrf=csrf, act=play_url(match.match_id) + "/act")

        return draw

    async def table(request: Request) -> Response:
        match = await mine(request)
        context = {
            "v": match.view(),
            "act": play_url(match.match_id) + "/act",
            "events": f"{API}/play/{quote(match.match_id, safe='')}/events",
            "api_url": f"{API}{play_url(match.match_id)}",
        }
        return render(request, "play_match.html", context, cookie_path=PLAY_COOKIE_PATH)

    async def table_api(request: Request) -> Response:
        match = await mine(request)
        return JSONResponse(match.view(), headers=NO_STORE)

    async def events(request: Request) -> Response:
        match = await mine(request)
        if request.method == "HEAD":
            return Response(media_type=PlayStream.media_type)
        if match.streams >= STREAMS_PER_MATCH:
            raise WebError(
                503,
                f"too many streams of this match: {match.streams} are open, the most one match "
                "may have; close a tab of it",
            )
        token, _ = sessions.csrf(request)
        return PlayStream(match, panel_html(match, token))

    async def act(request: Request) -> Response:
        """One move: a 204 for a script (a refusal as JSON), a 303 back to the table for a
        plain form (a refusal as the error page)."""
        page = "text/html" in request.headers.get("accept", "")
        try:
            match = await moved(request)
        except WebError as exc:
            if page:
                raise
            body = {"error": exc.message, "status": exc.status}
            return JSONResponse(body, status_code=exc.status, headers=NO_STORE)
        if page:
            return RedirectResponse(play_url(match.match_id), status_code=303)
        return Response(status_code=204)

    async def moved(request: Request) -> SeatClient:
        address = client_address(request)
        rate_limit.check(address)
        form = await read_form(request)
        try:
            sessions.check_csrf(request, form)
        except WebError:
            rate_limit.failed(address)
            raise
        match = await mine(request)
        try:
            match.act(form.get("action", ""))
        except ActError as exc:
            raise WebError(400, str(exc)) from None
        return match

    return [
        Route("/courses/{name}/play", show_form, methods=["GET"]),
        Route("/courses/{name}/play", start, methods=["POST"]),
        Route("/play/{id}", table, methods=["GET"]),
        Route(API + "/play/{id}", table_api, methods=["GET"]),
        Route(API + "/play/{id}/events", events, methods=["GET"]),
        Route("/play/{id}/act", act, methods=["POST"]),
    ]
