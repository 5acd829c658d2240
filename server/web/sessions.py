"""The web face's few writes: signed session cookies, CSRF tokens, a rate limit, bounded forms.

Sessions. A signed cookie (HMAC-SHA256 with a key made at random when the process starts;
itsdangerous is not a dependency and Python's ``hmac`` is all this needs) holds what a session
is: its kind (``bot`` or ``organizer``), the course, the bot's name, when the token it was opened
with was issued, and when the session ends. Never a token. The page checks the stamp against
the store on every request, so rotating a bot's or an organizer's token ends the sessions opened
with the old one. The cookie is ``HttpOnly``, ``SameSite=Strict``, ``Secure`` when the request
came over https, and named after the course (one session per kind and course). A restart
makes a new key: every session ends.

CSRF. Every form carries a token bound to a cookie: the cookie ``csrf`` holds a random nonce
(set by the page that shows the form) and the form's hidden field holds the HMAC of that nonce.
A POST whose field is not the HMAC of its cookie's nonce is refused (403). A page elsewhere
cannot read the cookie or compute the HMAC, and ``SameSite=Strict`` keeps the cookie off its
requests anyway. (An Origin check was the other way; our ``Referrer-Policy: no-referrer`` makes
browsers send ``Origin: null`` on a form POST, so it could not tell same-origin from not.)

Rate limit. :class:`RateLimit` counts the FAILED form POSTs (a refused code, token or CSRF
field) per client address in a sliding window, in a table of at most ``addresses`` entries (the
least recently seen address goes first), in memory: a restart forgets it, and behind a proxy
every client shares the proxy's address. Correct sign-ins and registrations count nothing, so a
class behind one school address is never locked out by its own good tokens (issue 28).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import Response

from domino_arena.server.store.bots import StoredBot
from domino_arena.server.store.courses import StoredCourse
from domino_arena.server.store.owners import StoredOwner
from domino_arena.server.web.params import WebError

SESSION_SECONDS: Final = 8 * 3600
"""How long a session lasts (a working day)."""
CSRF_COOKIE: Final = "csrf"
MAX_FORM_BYTES: Final = 8192
"""The largest form body read (a code, a name, an owner and a token are far shorter)."""
MAX_FIELD: Final = 400


class Signer:
    """Signs and checks small JSON values with a per-process random key."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or secrets.token_bytes(32)

    def mac(self, text: str) -> str:
        return hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()

    def sign(self, value: dict[str, Any]) -> str:
        body = base64.urlsafe_b64encode(json.dumps(value, sort_keys=True).encode()).decode()
        return f"{body}.{self.mac(body)}"

    def unsign(self, signed: str) -> dict[str, Any] | None:
        """The value ``signed`` holds, or None when it is not one this process signed."""
        body, _, mac = signed.partition(".")
        if not mac or not hmac.compare_digest(mac, self.mac(body)):
            return None
        try:
            value = json.loads(base64.urlsafe_b64decode(body.encode()))
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


@dataclass(frozen=True, slots=True)
class Session:
    """A signed-in student (``kind`` ``bot``: ``name`` is the bot) or organizer of ``course``;
    ``stamp`` is when the token it was opened with was issued (ISO 8601)."""

    kind: str
    course: str
    name: str
    stamp: str


def cookie_name(kind: str, course: str) -> str:
    """One cookie per kind and course (a course name is a cookie-safe token)."""
    return f"session_{kind}_{course}"


def secure(request: Request) -> bool:
    return request.url.scheme == "https"


class Sessions:
    """Opens, reads and ends sessions and makes and checks CSRF tokens (see the module)."""

    def __init__(
        self, signer: Signer | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.signer = signer or Signer()
        self.clock = clock

    def open(self, response: Response, request: Request, session: Session) -> None:
        value = {
            "kind": session.kind,
            "course": session.course,
            "name": session.name,
            "stamp": session.stamp,
            "ends": self.clock() + SESSION_SECONDS,
        }
        response.set_cookie(
            cookie_name(session.kind, session.course),
            self.signer.sign(value),
            max_age=SESSION_SECONDS,
            path="/",
            secure=secure(request),
            httponly=True,
            samesite="strict",
        )

    def read(self, request: Request, kind: str, course: str) -> Session | None:
        """The request's unexpired ``kind`` session of ``course``, or None."""
        value = self.signer.unsign(request.cookies.get(cookie_name(kind, course), ""))
        if value is None or value.get("kind") != kind or value.get("course") != course:
            return None
        ends = value.get("ends")
        if not isinstance(ends, int | float) or ends <= self.clock():
            return None
        name, stamp = value.get("name"), value.get("stamp")
        if not isinstance(name, str) or not isinstance(stamp, str):
            return None
        return Session(kind, course, name, stamp)

    def end(self, response: Response, request: Request, kind: str, course: str) -> None:
        response.delete_cookie(
            cookie_name(kind, course),
            path="/",
            secure=secure(request),
            httponly=True,
            samesite="strict",
        )

    # -- CSRF -----------------------------------------------------------------------------------

    def csrf(self, request: Request) -> tuple[str, str | None]:
        """The form field's token for this request, and the nonce to set as the ``csrf``
        cookie when the request had none (None: it had one)."""
        nonce = request.cookies.get(CSRF_COOKIE, "")
        fresh = None
        if len(nonce) != 32 or not all(c in "0123456789abcdef" for c in nonce):
            nonce = fresh = secrets.token_hex(16)
        return self.signer.mac(f"csrf:{nonce}"), fresh

    def set_csrf(
        self, response: Response, request: Request, nonce: str | None, path: str = "/courses"
    ) -> None:
        """Set the ``csrf`` cookie for the pages under ``path`` (the course forms'; the
        person's table has its own, ``/play``)."""
        if nonce is not None:
            response.set_cookie(
                CSRF_COOKIE,
                nonce,
                path=path,
                secure=secure(request),
                httponly=True,
                samesite="strict",
            )

    def check_csrf(self, request: Request, form: dict[str, str]) -> None:
        """Raise a 403 unless the form's ``csrf`` field belongs to the request's cookie."""
        nonce = request.cookies.get(CSRF_COOKIE, "")
        field = form.get("csrf", "")
        if not nonce or not hmac.compare_digest(field, self.signer.mac(f"csrf:{nonce}")):
            raise WebError(
                403,
                "csrf: the form's token does not match this browser's csrf cookie (a form "
                "posted from another site, or an old page): reload the form and send it again",
            )


class RateLimit:
    """At most ``failures`` failed form POSTs per client address in any ``seconds``, then every
    POST is refused until the oldest leaves the window; the table keeps at most ``addresses``
    addresses (the least recently seen is forgotten first)."""

    def __init__(
        self,
        failures: int = 10,
        seconds: float = 60.0,
        addresses: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failures < 1 or seconds <= 0 or addresses < 1:
            raise ValueError(
                f"failures, seconds, addresses: expected positive values, got {failures}, "
                f"{seconds}, {addresses}"
            )
        self.failures = failures
        self.seconds = seconds
        self.addresses = addresses
        self.clock = clock
        self._lock = threading.Lock()
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def _recent(self, address: str, now: float) -> deque[float]:
        """``address``'s failures in the window (the lock held), it the most recently seen."""
        times = self._seen.pop(address, None) or deque()
        while times and times[0] <= now - self.seconds:
            times.popleft()
        self._seen[address] = times
        while len(self._seen) > self.addresses:
            self._seen.popitem(last=False)
        return times

    def check(self, address: str) -> None:
        """A 429 saying when to retry if ``address`` failed too often of late (counts nothing)."""
        now = self.clock()
        with self._lock:
            times = self._recent(address, now)
            if len(times) >= self.failures:
                wait = times[0] + self.seconds - now
                raise WebError(
                    429,
                    f"too many failed form posts from your address: at most {self.failures} "
                    f"every {self.seconds:.0f} s; try again in {max(wait, 1):.0f} s",
                )

    def failed(self, address: str) -> None:
        """Count one failed POST (a refused code, token or CSRF field) from ``address``."""
        now = self.clock()
        with self._lock:
            self._recent(address, now).append(now)


def client_address(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"


async def read_form(request: Request) -> dict[str, str]:
    """The request's urlencoded form, at most :data:`MAX_FORM_BYTES` (a 413 past that), each
    field at most :data:`MAX_FIELD` characters (a 400 naming it)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip()
    if kind != "application/x-www-form-urlencoded":
        raise WebError(
            415, f"expected a form (application/x-www-form-urlencoded), got {kind[:80]!r}"
        )
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise WebError(413, f"the form is too large: at most {MAX_FORM_BYTES} bytes")
    try:
        fields = parse_qs(body.decode(), keep_blank_values=True, max_num_fields=16)
    except (UnicodeDecodeError, ValueError) as exc:
        raise WebError(400, f"the form cannot be read: {str(exc)[:120]}") from None
    form: dict[str, str] = {}
    for key, values in fields.items():
        if len(values[0]) > MAX_FIELD:
            raise WebError(400, f"{key[:40]}: at most {MAX_FIELD} characters")
        form[key] = values[0]
    return form


# -- is a session current ---------------------------------------------------------------------

OWNER_STAMP: Final = "owner:"
"""A session opened with the owner's token: its stamp is this and the owner token's issue
time (rotating the owner token ends it, as rotating the bot's ends the others)."""


def stamp_of(issued: Any) -> str:
    """A token's issue time as a session stamps it ("" for none)."""
    return "" if issued is None else str(issued.isoformat())


class SessionStorage(Protocol):
    """What :func:`current` reads."""

    def course(self, name: str) -> StoredCourse | None: ...
    def bot(self, name: str) -> StoredBot | None: ...
    def owner(self, course: str, name: str) -> StoredOwner | None: ...


def current(storage: SessionStorage, kind: str, course: str, session: Session) -> bool:
    """Whether ``session`` (a ``kind`` session of ``course``) still holds: opened with the token
    its course, bot or owner holds now (rotating a token, or moving or deleting the bot, ends
    it). Blocking: run it in a worker thread."""
    if kind == "organizer":
        stored_course = storage.course(course)
        return stored_course is not None and stamp_of(stored_course.organizer_token_issued) == (
            session.stamp
        )
    bot = storage.bot(session.name)
    if bot is None or bot.course != course:
        return False
    if session.stamp.startswith(OWNER_STAMP):
        owner = storage.owner(course, bot.owner)
        return owner is not None and OWNER_STAMP + stamp_of(owner.token_issued) == session.stamp
    return stamp_of(bot.token_issued) == session.stamp
