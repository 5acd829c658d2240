"""The course pages behind a form: registration, the student's own bot, the organizer's view.

- ``/courses/{name}/register``: a first bot with an invite code and an owner (the storage's
  ``register_bot``: it makes the owner, docs/courses.md: owners), or a later one with the
  owner token (``register_with_owner_token``): the web face's writes. It shows the bot's token
  once, and the new owner token once. A refused code gets one message whatever the reason
  (the store's ``INVITE_REFUSED``, also for a code of another course), a refused owner token
  another (``OWNER_TOKEN_REFUSED``).
- ``/courses/{name}/me``: the bot's name and its token or its owner's token (checked with
  ``check_bot`` or ``owner_of_token``) open a session naming the bot; the page (:mod:`.my_bot`)
  shows its real name, its standing, its faults grouped by reason and its replays, and its
  hosted versions with the form that uploads a new one (``POST .../bots/{bot}/versions``,
  multipart: :mod:`.uploads`; only the bot's owner, signed in, may: :mod:`.hosted_views`).
- ``/courses/{name}/organizer``: the organizer token (checked with ``organizer_course``) opens
  a session; the page shows invite -> owner -> bots (never a code), bots, owners and who is
  connected, and a Disable / Enable button per owner (``POST .../organizer/owners``, fields
  ``owner`` and ``action``: :mod:`.owner_switch`), which redirects back to the page.

Every POST carries a CSRF token and is read bounded; the failed ones (a refused code or token,
a wrong CSRF field) are rate limited per client address (:mod:`.sessions`). A session page's
JSON (``/api/courses/{name}/me``, ``.../organizer``) is a 401 without the session. No session
page is cached (``Cache-Control: no-store``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.templating import Jinja2Templates

from domino_arena.sdk.rules import GAMES
from domino_arena.server.hosting.spec.submissions import SubmissionError
from domino_arena.server.store import hosted
from domino_arena.server.store.bots import (
    BadBotNameError,
    BadOwnerError,
    BotCheck,
    DuplicateBotError,
    UnknownBotError,
)
from domino_arena.server.store.courses import INVITE_REFUSED, InviteError
from domino_arena.server.store.owners import (
    OWNER_TOKEN_REFUSED,
    OwnerDisabledError,
    OwnerTakenError,
    OwnerTokenError,
)
from domino_arena.server.store.tables import now
from domino_arena.server.web import course_pages, hosted_views, my_bot, owner_switch, uploads
from domino_arena.server.web.live import LiveSource
from domino_arena.server.web.live_pages import lobby_data
from domino_arena.server.web.params import WebError
from domino_arena.server.web.scoped import known_course
from domino_arena.server.web.sessions import (
    OWNER_STAMP,
    RateLimit,
    Session,
    Sessions,
    client_address,
    current,
    read_form,
    stamp_of,
)
from domino_arena.server.web.views import WebStorage

API: Final = "/api"
NO_STORE: Final = {"Cache-Control": "no-store"}
BOT_REFUSED: Final = "bot name or token not accepted"
BOTH_GIVEN: Final = (
    "owner token: give it alone for a later bot (it names you and the course), or an invite "
    "code and an owner for your first"
)
ORGANIZER_REFUSED: Final = "organizer token not accepted"
NOT_CONNECTED: Final = "not connected to a referee"
FORM_PATHS: Final = (
    r"^/courses/[^/]+/(register|me|me/logout|organizer|organizer/logout|organizer/owners"
    r"|bots/[^/]+/versions)$"
)
"""The paths that take a POST (the security middleware lets these through, and only these)."""


def form_routes(
    storage: WebStorage,
    templates: Jinja2Templates,
    live: LiveSource | None,
    sessions: Sessions,
    rate_limit: RateLimit,
) -> list[BaseRoute]:
    """The registration, student and organizer pages (see the module)."""
    organizer_tokens = owner_switch.OrganizerTokens(clock=sessions.clock)

    def render(
        request: Request, template: str, data: dict[str, Any], status: int = 200
    ) -> Response:
        token, fresh = sessions.csrf(request)
        context = {"data": data, "query": {}, "csrf": token}
        response = templates.TemplateResponse(
            request, template, context, status_code=status, headers=NO_STORE
        )
        sessions.set_csrf(response, request, fresh)
        return response

    async def course_of(request: Request) -> dict[str, Any]:
        course = await run_in_threadpool(known_course, storage, request.path_params["name"])
        return course_pages.course_summary(course)

    async def posted(request: Request) -> dict[str, str]:
        address = client_address(request)
        rate_limit.check(address)
        form = await read_form(request)
        try:
            sessions.check_csrf(request, form)
        except WebError:
            rate_limit.failed(address)
            raise
        return form

    def refused(request: Request, response: Response) -> Response:
        """A refusal of the POST ``request``: it counts against its address's rate limit."""
        rate_limit.failed(client_address(request))
        return response

    # -- registration ---------------------------------------------------------------------------

    async def register_form(request: Request) -> Response:
        data = {"course": await course_of(request), "message": None, "issued": None, "form": {}}
        return render(request, "course_register.html", data)

    async def register(request: Request) -> Response:
        form = await posted(request)  # the rate limit first: a flood costs no read
        course = await course_of(request)
        code, bot, owner, owner_token = (
            form.get(k, "").strip() for k in ("code", "bot", "owner", "owner_token")
        )
        data: dict[str, Any] = {
            "course": course,
            "message": None,
            "issued": None,
            "form": {"bot": bot, "owner": owner},
        }
        try:
            if owner_token and (code or owner):
                raise OwnerTokenError(BOTH_GIVEN)
            if owner_token:
                if owner_token.partition(":")[0] != course["name"]:
                    raise OwnerTokenError(OWNER_TOKEN_REFUSED)
                issued = await run_in_threadpool(
                    storage.register_with_owner_token, owner_token, bot
                )
            else:
                if code.partition(":")[0] != course["name"]:
                    raise InviteError(INVITE_REFUSED)
                issued = await run_in_threadpool(storage.register_bot, code, bot, owner)
        except InviteError:
            data["message"] = INVITE_REFUSED
        except OwnerTokenError as exc:
            data["message"] = str(exc)
        except (OwnerTakenError, OwnerDisabledError) as exc:
            data["message"] = str(exc)
        except (BadBotNameError, BadOwnerError, DuplicateBotError) as exc:
            field = "owner" if isinstance(exc, BadOwnerError) else "bot name"
            data["message"] = f"{field}: {exc}"
        else:
            data["issued"] = {
                "bot": issued.bot.name,
                "owner": issued.bot.owner,
                "course": issued.bot.course,
                "token": issued.token,
                "owner_token": issued.owner_token,
            }
            return render(request, "course_register.html", data)
        return refused(request, render(request, "course_register.html", data, status=400))

    # -- the student's own bot ------------------------------------------------------------------

    async def bot_session(request: Request, name: str) -> Session | None:
        """The request's bot session, if its bot is still of ``name`` with the same token."""
        session = sessions.read(request, "bot", name)
        if session is None or not await run_in_threadpool(current, storage, "bot", name, session):
            return None
        return session

    async def me_data(request: Request) -> dict[str, Any] | None:
        name = request.path_params["name"]
        session = await bot_session(request, name)
        if session is None:
            return None
        return await run_in_threadpool(my_bot.my_bot, storage, name, session.name)

    async def me(request: Request) -> Response:
        data = await me_data(request)
        if data is None:
            login = {"course": await course_of(request), "message": None}
            return render(request, "course_me_login.html", login)
        return render(request, "course_me.html", data)

    async def upload(request: Request) -> Response:
        """A new version of a hosted bot (:mod:`.uploads`): 303 back to the page, or the page
        with the reason (400; 429 past the day's versions)."""
        address = client_address(request)
        rate_limit.check(address)  # a flood costs no read
        name, bot = request.path_params["name"], request.path_params["bot"]
        await course_of(request)
        try:
            session = await bot_session(request, name)
            if session is None:
                raise WebError(
                    401, f"not signed in: sign in at /courses/{name}/me to upload a version"
                )
            owner = await run_in_threadpool(hosted_views.uploader, storage, name, session, bot)
            form = await uploads.read_upload(request)  # 413 past the bound, before reading it
            sessions.check_csrf(request, {"csrf": form.csrf})
        except WebError as exc:
            if exc.status != 413:
                rate_limit.failed(address)
            raise
        status, message = 400, ""
        try:
            games = uploads.checked_games(form)
            submission = await run_in_threadpool(uploads.submission_of, form)
            await run_in_threadpool(
                hosted.add_version,
                storage.engine,
                bot,
                submission,
                submitter=f"owner {owner}",
                games=() if set(games) == set(GAMES) else games,  # (): every game, later too
                now=now(),
            )
        except (uploads.UploadError, SubmissionError, ValueError) as exc:
            message = str(exc)
        except UnknownBotError:
            status, message = 404, f"bot: no bot named {bot[:64]!r} takes a version"
        except hosted.VersionLimitError as exc:
            status, message = 429, str(exc)
        else:
            return RedirectResponse(f"/courses/{name}/me#versions", status_code=303)
        data = await run_in_threadpool(my_bot.my_bot, storage, name, session.name)
        data["upload_error"] = message
        data["upload_form"] = {"command": form.command[:200], "games": list(form.games)}
        return render(request, "course_me.html", data, status=status)

    async def me_api(request: Request) -> Response:
        await course_of(request)
        data = await me_data(request)
        if data is None:
            return _signed_out(request, "me")
        return JSONResponse(data, headers=NO_STORE)

    async def me_login(request: Request) -> Response:
        form = await posted(request)  # the rate limit first: a flood costs no read
        course = await course_of(request)
        bot, token = form.get("bot", "").strip(), form.get("token", "").strip()
        check = await run_in_threadpool(storage.check_bot, bot, token)
        stored = await run_in_threadpool(storage.bot, bot)
        stamp = None if stored is None else stamp_of(stored.token_issued)
        if check not in (BotCheck.OK, BotCheck.DISABLED, BotCheck.OWNER_DISABLED):
            # The owner's token signs in as any of its bots (docs/courses.md: owners).
            owner = await run_in_threadpool(storage.owner_of_token, token)
            mine = owner is not None and stored is not None and stored.owner == owner.name
            stamp = OWNER_STAMP + stamp_of(owner.token_issued) if owner and mine else None
        if stored is None or stamp is None or stored.course != course["name"]:
            login = {"course": course, "message": BOT_REFUSED}
            return refused(request, render(request, "course_me_login.html", login, status=401))
        response = RedirectResponse(f"/courses/{course['name']}/me", status_code=303)
        session = Session("bot", course["name"], stored.name, stamp)
        sessions.open(response, request, session)
        return response

    # -- the organizer --------------------------------------------------------------------------

    async def organizer_session(request: Request) -> Session | None:
        """The request's organizer session, if opened with the course's current token."""
        name = request.path_params["name"]
        session = sessions.read(request, "organizer", name)
        if session is None or not await run_in_threadpool(
            current, storage, "organizer", name, session
        ):
            return None
        return session

    async def organizer_data(request: Request) -> dict[str, Any] | None:
        name = request.path_params["name"]
        if await organizer_session(request) is None:
            return None
        data = await run_in_threadpool(course_pages.organizer_view, storage, name)
        data["connected"] = await _connected(live, {b["name"] for b in data["bots"]})
        data["owner_note"] = owner_switch.NEXT_HELLO if live is None else None
        return data

    async def organizer(request: Request) -> Response:
        data = await organizer_data(request)
        if data is None:
            login = {"course": await course_of(request), "message": None}
            return render(request, "course_organizer_login.html", login)
        return render(request, "course_organizer.html", data)

    async def organizer_api(request: Request) -> Response:
        await course_of(request)
        data = await organizer_data(request)
        if data is None:
            return _signed_out(request, "organizer")
        return JSONResponse(data, headers=NO_STORE)

    async def organizer_login(request: Request) -> Response:
        form = await posted(request)  # the rate limit first: a flood costs no read
        course = await course_of(request)
        token = form.get("token", "").strip()
        found = await run_in_threadpool(storage.organizer_course, token)
        stored = await run_in_threadpool(storage.course, course["name"])
        if found != course["name"] or stored is None:
            login = {"course": course, "message": ORGANIZER_REFUSED}
            return refused(
                request, render(request, "course_organizer_login.html", login, status=401)
            )
        response = RedirectResponse(f"/courses/{course['name']}/organizer", status_code=303)
        session = Session(
            "organizer", course["name"], course["name"], stamp_of(stored.organizer_token_issued)
        )
        sessions.open(response, request, session)
        organizer_tokens.keep(course["name"], session.stamp, token)
        return response

    async def switch_owner(request: Request) -> Response:
        """Disable or enable one owner of the course, then back to the page (POST/redirect/GET);
        every refusal is one line and counts against the address's rate limit."""
        form = await posted(request)  # the rate limit first: a flood costs no read
        course = await course_of(request)
        name = course["name"]
        owner, action = form.get("owner", "").strip(), form.get("action", "").strip()
        try:
            session = await organizer_session(request)
            if session is None:
                raise WebError(
                    401,
                    f"not signed in as the organizer of {name}: sign in at "
                    f"/courses/{name}/organizer",
                )
            if action not in owner_switch.ACTIONS:
                raise WebError(400, f"action: expected disable or enable, got {action[:40]!r}")
            if await run_in_threadpool(storage.owner, name, owner) is None:
                raise owner_switch.unknown_owner(name, owner)
            token = organizer_tokens.token(name, session.stamp)
            enabled = owner_switch.ACTIONS[action]
            await owner_switch.switch_owner(storage, live, token, name, owner, enabled=enabled)
        except WebError:
            rate_limit.failed(client_address(request))
            raise
        return RedirectResponse(f"/courses/{name}/organizer#owners", status_code=303)

    def logout(kind: str, page: str) -> Callable[[Request], Awaitable[Response]]:
        async def handler(request: Request) -> Response:
            await posted(request)
            course = await course_of(request)
            response = RedirectResponse(f"/courses/{course['name']}/{page}", status_code=303)
            sessions.end(response, request, kind, course["name"])
            return response

        return handler

    base = "/courses/{name}"
    return [
        Route(base + "/register", register_form, methods=["GET"]),
        Route(base + "/register", register, methods=["POST"]),
        Route(base + "/me", me, methods=["GET"]),
        Route(base + "/me", me_login, methods=["POST"]),
        Route(base + "/me/logout", logout("bot", "me"), methods=["POST"]),
        Route(base + "/bots/{bot}/versions", upload, methods=["POST"]),
        Route(API + base + "/me", me_api, methods=["GET"]),
        Route(base + "/organizer", organizer, methods=["GET"]),
        Route(base + "/organizer", organizer_login, methods=["POST"]),
        Route(base + "/organizer/logout", logout("organizer", "organizer"), methods=["POST"]),
        Route(base + "/organizer/owners", switch_owner, methods=["POST"]),
        Route(API + base + "/organizer", organizer_api, methods=["GET"]),
    ]


def _signed_out(request: Request, page: str) -> Response:
    where = f"/courses/{request.path_params['name']}/{page}"
    return JSONResponse(
        {"error": f"not signed in: sign in at {where}", "status": 401},
        status_code=401,
        headers=NO_STORE,
    )


async def _connected(live: LiveSource | None, bots: set[str]) -> dict[str, Any]:
    """Which of the course's ``bots`` are connected to the referee now (when the web face
    follows one), else why nobody can say."""
    if live is None:
        return {"referee": None, "message": NOT_CONNECTED, "bots": []}
    try:
        lobby = lobby_data(await live.lobby())
    except WebError as exc:
        return {"referee": live.server, "message": exc.message, "bots": []}
    return {
        "referee": live.server,
        "message": None,
        "bots": [b for b in lobby["connected"] if b["name"] in bots],
    }
