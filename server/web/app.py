"""The web face's Starlette application: every page as HTML and, beside it, as JSON.

Read-only but for the course forms (:mod:`.forms`: registration, the student's and the
organizer's sign-in, the organizer's Disable / Enable of an owner), the one place that writes.

:func:`create_app` is given an opened storage (the referee's, or one opened on the same
database by ``domino-arena web``). Each page is one function of :mod:`.views` or of a module
beside it (:mod:`.activity` the home page, :mod:`.lists` the paged tournaments,
:mod:`.course_pages`, :mod:`.standings`), with the page's course link added here
(:mod:`.course_links`); the HTML route renders its data with a Jinja2 template (autoescaping
on, so every stored text is escaped) and the ``/api/...`` route returns the same data as JSON.
Query parameters are checked on the event loop (:mod:`.params`); the database is read in a
worker thread, never on the loop.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Final
from urllib.parse import urlencode

import jinja2
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from domino_arena.server.web import (
    activity,
    analysis_pages,
    bot_ratings,
    bracket_svg,
    course_links,
    course_pages,
    drawing,
    forms,
    hosted_views,
    lists,
    live_pages,
    params,
    seat_names,
    standings,
    views,
)
from domino_arena.server.web.live import LiveSource
from domino_arena.server.web.params import WebError, not_found
from domino_arena.server.web.people.registry import PersonMatches
from domino_arena.server.web.people.routes import PLAY_PATHS, play_routes
from domino_arena.server.web.scoped import PublicNames, public_names
from domino_arena.server.web.security import SecurityMiddleware
from domino_arena.server.web.sessions import RateLimit, Sessions
from domino_arena.server.web.views import TournamentTotal, WebStorage

API: Final = "/api"
PACKAGE: Final = "domino_arena.server.web"

Gather = Callable[[WebStorage, Request], Callable[[], dict[str, Any]]]
"""A page's data source: checks the request's parameters (on the loop) and returns the blocking
call that reads the page's data (run in a thread)."""
Extend = Callable[[Request, dict[str, Any]], Awaitable[None]]
"""What a live source adds to a page's data (on the loop, after the database's part)."""


def _templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(PACKAGE, "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["with_query"] = with_query
    env.globals["bracket_svg"] = bracket_drawing
    env.globals["table_svg"] = drawing.draw_table
    env.filters["points"] = bracket_svg.points_text
    env.globals["seat_label"] = seat_names.seat_label
    env.globals["step_who"] = seat_names.step_who
    env.globals["significance"] = standings.significance
    return Jinja2Templates(env=env)


def with_query(current: Mapping[str, Any], **changes: Any) -> str:
    """The query string of ``current`` with ``changes`` applied (None drops a key), e.g. the
    link to the next page keeping the filters."""
    merged = {**current, **changes}
    kept = {k: v for k, v in merged.items() if v is not None and v != ""}
    return "?" + urlencode(kept) if kept else "?"


def bracket_drawing(knockout: Mapping[str, Any], label: str) -> Markup:
    """A knockout page's bracket drawn from its data (names already public: drawn after the
    page's data was scrubbed, so no hidden name is ever cut to fit a box)."""
    return bracket_svg.draw(bracket_svg.BracketView.from_json(knockout), label=label)


# -- the data of each page, from a request ---------------------------------------------------


def _home(storage: WebStorage, request: Request) -> Callable[[], dict[str, Any]]:
    return functools.partial(activity.home, storage)


def _standings(storage: WebStorage, request: Request) -> Callable[[], dict[str, Any]]:
    query = request.query_params
    sort = params.choice(query, "sort", "rating", standings.SORTS)
    players = None if not query.get("players") else params.integer(query, "players", 0, 1, 8)
    return functools.partial(
        standings.standings,
        storage,
        request.path_params["game"],
        sort,
        params.paging(query),
        players,
    )


def _tournaments(total: TournamentTotal | None) -> Gather:
    def gather(storage: WebStorage, request: Request) -> Callable[[], dict[str, Any]]:
        paging = params.paging(request.query_params)
        return functools.partial(lists.tournaments, storage, total, paging=paging)

    return gather


def _tournament(total: TournamentTotal | None) -> Gather:
    def gather(storage: WebStorage, request: Request) -> Callable[[], dict[str, Any]]:
        query = request.query_params
        paging = params.paging(query)
        deals_page = params.integer(query, "deals_page", 1, 1, params.MAX_PAGE)

        def read() -> dict[str, Any]:
            data = views.tournament(storage, request.path_params["id"], total, paging, deals_page)
            data["course_link"] = course_links.course_link(storage, data["course"])
            data["analysis_progress"] = analysis_pages.tournament_progress(
                storage.engine, data["id"]
            )
            return data

        return read

    return gather


def _bot(storage: WebStorage, request: Request) -> Callable[[], dict[str, Any]]:
    name = request.path_params["name"]
    names: PublicNames = request.state.public_names

    def read() -> dict[str, Any]:
        # A bot of an anonymous course has no public page: its URL would name it.
        if names.hidden(name):
            raise not_found(f"no bot is called {name!r}")
        data = bot_ratings.bot_page(storage, name)
        data["analysis"] = analysis_pages.bot_summary(storage.engine, name)
        data["course_link"] = course_links.course_link(
            storage, course_links.bot_course(storage, name)
        )
        return data

    return read


def _matches(storage: WebStorage, request: Request) -> Callable[[], dict[str, Any]]:
    query = request.query_params
    paging = params.paging(query)
    bot, game = params.text(query, "bot"), params.text(query, "game")
    tournament_id, course = params.text(query, "tournament"), params.text(query, "course")
    names: PublicNames = request.state.public_names

    def read() -> dict[str, Any]:
        # The filters say which course is meant (docs/web.md: courses).
        scope = course_links.matches_course(
            storage, names, bot=bot, tournament_id=tournament_id, course=course
        )
        data = views.matches(
            storage, paging, bot=bot, game=game, tournament_id=tournament_id, course=scope
        )
        data["filters"]["course"] = course
        data["course_link"] = course_links.course_link(storage, scope)
        return data

    return read


def _match(storage: WebStorage, request: Request) -> Callable[[], dict[str, Any]]:
    query = request.query_params
    step = None if not query.get("step") else params.integer(query, "step", 0, 0, 1_000_000)

    def read() -> dict[str, Any]:
        data = views.match(storage, request.path_params["id"], step)
        analysis_pages.attach_replay(storage.engine, data)
        data["course_link"] = course_links.course_link(storage, data["match"]["course"])
        return data

    return read


def _match_step(storage: WebStorage, request: Request) -> Callable[[], dict[str, Any]]:
    """One step of a match's replay (``/matches/{id}/table?step=N``, the end without ``step``):
    the page's data, of which the fragment draws the step's part."""
    query = request.query_params
    step = None if not query.get("step") else params.integer(query, "step", 0, 0, 1_000_000)

    def read() -> dict[str, Any]:
        data = views.match(storage, request.path_params["id"], step)
        if data["replay"] is None:
            raise not_found(
                f"no replay of match {request.path_params['id']!r}: {data['no_replay']}"
            )
        analysis_pages.attach_replay(storage.engine, data)
        return data

    return read


def _courses(storage: WebStorage, request: Request) -> Callable[[], dict[str, Any]]:
    return functools.partial(course_pages.courses, storage, params.paging(request.query_params))


def _course(storage: WebStorage, request: Request) -> Callable[[], dict[str, Any]]:
    return functools.partial(course_pages.leaderboard, storage, request.path_params["name"])


def _course_tournaments(total: TournamentTotal | None) -> Gather:
    def gather(storage: WebStorage, request: Request) -> Callable[[], dict[str, Any]]:
        name, paging = request.path_params["name"], params.paging(request.query_params)
        return functools.partial(course_pages.course_tournaments, storage, name, total, paging)

    return gather


def _course_matches(storage: WebStorage, request: Request) -> Callable[[], dict[str, Any]]:
    query = request.query_params
    return functools.partial(
        course_pages.course_matches_page,
        storage,
        request.path_params["name"],
        params.paging(query),
        game=params.text(query, "game"),
        tournament_id=params.text(query, "tournament"),
    )


# -- the application ------------------------------------------------------------------------


def _private(request: Request, response: Response) -> Response:
    """``response`` marked ``Cache-Control: no-store`` when it shows what only its viewer may
    see (``request.state.private``: a match's logs)."""
    if getattr(request.state, "private", False):
        response.headers["Cache-Control"] = "no-store"
    return response


def _live_extensions(live: LiveSource | None) -> tuple[Extend | None, Extend | None]:
    """The home page's ``live`` and the bot page's ``connection``, when a live source exists."""
    if live is None:
        return None, None

    async def home(request: Request, data: dict[str, Any]) -> None:
        data["live"] = await live_pages.home_live(live)

    async def bot(request: Request, data: dict[str, Any]) -> None:
        data["connection"] = await live_pages.connection(live, request.path_params["name"])

    return home, bot


def create_app(
    storage: WebStorage,
    *,
    tournament_total: TournamentTotal | None = None,
    live: LiveSource | None = None,
    sessions: Sessions | None = None,
    rate_limit: RateLimit | None = None,
    people: PersonMatches | None = None,
    debug: bool = False,
) -> Starlette:
    """Return the read-only web application over ``storage`` (opened; the caller closes it).

    Args:
        tournament_total: the number of games of a tournament's schedule, for its progress
            (``domino-arena web`` passes play's schedule); without it a page shows the games
            stored so far only.
        live: the referee's live matches (``domino-arena web --server``): the live pages,
            the home page's live matches and the bot page's connection state; without it the
            live pages say that no referee is connected.
        sessions: signs the course pages' sessions and CSRF tokens (a random key by default).
        rate_limit: the course forms' failed POSTs per client address (10 a minute by default).
        people: the matches people play from their browsers (:mod:`.people`; its defaults
            when None: tests pass one whose bots' steps are not paced).

    Every public page's data passes through the storage's :class:`PublicNames` (read per
    request), so no name of an anonymous course's bot or owner reaches it.
    """
    templates = _templates()
    sessions = Sessions() if sessions is None else sessions
    rate_limit = RateLimit() if rate_limit is None else rate_limit
    people = PersonMatches() if people is None else people

    async def names() -> PublicNames:
        return await run_in_threadpool(public_names, storage)

    def live_course(players: list[str], tournament_id: str | None) -> dict[str, Any] | None:
        course = course_links.seats_course(storage, players, tournament_id)
        return course_links.course_link(storage, course)

    async def course_of(players: list[str], tournament_id: str | None) -> dict[str, Any] | None:
        return await run_in_threadpool(live_course, players, tournament_id)

    home_extra, bot_extra = _live_extensions(live)

    async def match_logs(request: Request, data: dict[str, Any]) -> None:
        """The hosted seats' logs this viewer may read (:mod:`.hosted_views`): a page that
        has some is private, never kept by a cache."""
        course = data["match"]["course"]
        organizer = sessions.read(request, "organizer", course)
        student = sessions.read(request, "bot", course)
        data["logs"] = []
        if organizer is None and student is None:
            return
        reader = await run_in_threadpool(
            hosted_views.log_reader, storage, course, organizer, student
        )
        data["logs"] = await run_in_threadpool(
            hosted_views.match_logs, storage.engine, data["match"]["id"], reader
        )
        request.state.private = reader.anyone

    def page(
        path: str, template: str, gather: Gather, extend: Extend | None = None
    ) -> list[BaseRoute]:
        async def data(request: Request) -> dict[str, Any]:
            # Read once a request: the gatherers that must hide a bot find them here too.
            request.state.public_names = hidden = await names()
            call = gather(storage, request)
            result: dict[str, Any] = await run_in_threadpool(call)
            if extend is not None:
                await extend(request, result)
            scrubbed: dict[str, Any] = hidden.scrub(result)
            return scrubbed

        async def html(request: Request) -> Response:
            context: dict[str, Any] = {
                "data": await data(request),
                "query": dict(request.query_params),
            }
            context["api_url"] = (
                API + request.url.path + (f"?{request.url.query}" if request.url.query else "")
            )
            response = templates.TemplateResponse(request, template, context)
            return _private(request, response)

        async def api(request: Request) -> Response:
            return _private(request, JSONResponse(await data(request)))

        return [Route(path, html, methods=["GET"]), Route(API + path, api, methods=["GET"])]

    async def match_step(request: Request) -> Response:
        """One replay step's table as an HTML fragment (``templates/replay_step.html``, the
        page's own), which ``static/replay.js`` swaps in without reloading the page."""
        request.state.public_names = hidden = await names()
        data = hidden.scrub(await run_in_threadpool(_match_step(storage, request)))
        return templates.TemplateResponse(request, "replay_step.html", {"data": data})

    async def error(request: Request, exc: Exception) -> Response:
        if isinstance(exc, WebError):
            status, message = exc.status, exc.message
        elif isinstance(exc, HTTPException):
            status = exc.status_code
            message = f"no page at {request.url.path}" if status == 404 else str(exc.detail)
        else:  # pragma: no cover - Starlette registers handlers for these two kinds only
            raise exc
        if request.url.path == API or request.url.path.startswith(API + "/"):
            return JSONResponse({"error": message, "status": status}, status_code=status)
        context = {"status": status, "message": message}
        return templates.TemplateResponse(request, "error.html", context, status_code=status)

    async def healthz(request: Request) -> Response:
        """Kubernetes' probe: ok once the database answers a read (its error otherwise)."""
        try:
            await run_in_threadpool(storage.pools)
        except Exception as exc:  # any failure of the read means "not ready"
            why = f"the database did not answer: {type(exc).__name__}"
            return JSONResponse({"status": "unavailable", "error": why}, status_code=503)
        return JSONResponse({"status": "ok"})

    routes: list[BaseRoute] = [
        Route("/healthz", healthz, methods=["GET"]),
        *page("/", "home.html", _home, home_extra),
        *page("/games/{game}/standings", "standings.html", _standings),
        *page("/tournaments", "tournaments.html", _tournaments(tournament_total)),
        *page("/tournaments/{id}", "tournament.html", _tournament(tournament_total)),
        *page("/bots/{name}", "bot.html", _bot, bot_extra),
        *page("/matches", "matches.html", _matches),
        *page("/matches/{id}", "match.html", _match, match_logs),
        Route("/matches/{id}/table", match_step, methods=["GET"]),
        *page("/courses", "courses.html", _courses),
        *page("/courses/{name}", "course.html", _course),
        *page(
            "/courses/{name}/tournaments",
            "course_tournaments.html",
            _course_tournaments(tournament_total),
        ),
        *page("/courses/{name}/matches", "course_matches.html", _course_matches),
        *forms.form_routes(storage, templates, live, sessions, rate_limit),
        *play_routes(storage, templates, live, sessions, rate_limit, matches=people),
        *live_pages.live_routes(
            live, templates, names, course_of, sessions=sessions, storage=storage
        ),
        Mount("/static", StaticFiles(packages=[(PACKAGE, "static")]), name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await people.close()
        if live is not None:
            await live.close()

    return Starlette(
        debug=debug,
        routes=routes,
        lifespan=lifespan,
        middleware=[Middleware(SecurityMiddleware, form_paths=forms.FORM_PATHS + "|" + PLAY_PATHS)],
        exception_handlers={WebError: error, HTTPException: error},
    )
