"""A student's upload of a hosted bot's new version, from the "My bot" page (docs/web.md:
hosted bots; docs/hosting.md).

The form is ``multipart/form-data`` (the one form that carries a file) with the fields
``csrf``, ``file`` (a ``.py`` file holding a ``Bot``, or a ``.zip`` / ``.tar.gz`` / ``.tgz`` /
``.tar`` archive), ``command`` (an archive's: ``./run.sh``, or ``mybot.py:MyBot`` for a Python
bot) and ``games`` (checkboxes, one per game).

The body is bounded before it is read: a ``Content-Length`` past :data:`MAX_UPLOAD_BYTES` is a
413 at once, and the bytes are counted while they stream in (a chunked body without a length
gets the same 413 the moment it passes the bound), so no request makes the web face hold more
than one archive's worth. Starlette's multipart parser (python-multipart) reads the parts; a
file part past one file or a field past :data:`MAX_FIELD_BYTES` is refused.

The bytes are then checked exactly as the command line's ``bot submit`` packs and the referee's
``SubmitBot`` re-checks them (:mod:`domino_arena.server.hosting.spec.submissions`): the file is
packed by :func:`~domino_arena.server.hosting.spec.submissions.pack` as ``bot submit FILE
[--command CMD]`` packs it (a ``.py`` file's one ``Bot`` class found by parsing it, an
archive's kind taken from its command: ``mybot.py:MyBot`` python, else a command line), and
the result is checked by :func:`~domino_arena.server.hosting.spec.submissions.check`, as the
referee checks an upload. Every refusal names the field, or the member, and the rule.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from domino_arena.sdk.rules import GAMES
from domino_arena.server.hosting.spec.submissions import (
    MAX_ARCHIVE_BYTES,
    Submission,
    SubmissionError,
    check,
    pack,
)
from domino_arena.server.web.params import WebError

FORM_OVERHEAD: Final = 64 << 10
"""What the form adds to the file: its other fields and the multipart framing."""
MAX_UPLOAD_BYTES: Final = MAX_ARCHIVE_BYTES + FORM_OVERHEAD
"""The largest upload body read (a 413 past it, before or while reading)."""
MAX_FIELD_BYTES: Final = 1024
"""A field other than the file: the CSRF token, a command, a game's name."""
MAX_FIELDS: Final = 16
MAX_FILENAME: Final = 100
ARCHIVES: Final = (".tar.gz", ".tgz", ".tar", ".zip")
FILENAME: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
TOO_BIG: Final = (
    f"the upload is too large: at most {MAX_ARCHIVE_BYTES} bytes "
    f"({MAX_ARCHIVE_BYTES >> 20} MiB) of file (docs/web.md: hosted bots)"
)


class UploadError(ValueError):
    """A refused upload: the message names the field and the rule (shown on the page)."""


@dataclass(frozen=True, slots=True)
class Upload:
    """The fields of an upload form, read and bounded (not yet checked)."""

    csrf: str
    filename: str
    content: bytes
    command: str
    games: tuple[str, ...]


async def read_upload(request: Request) -> Upload:
    """The request's upload form; a 413 past :data:`MAX_UPLOAD_BYTES` (its Content-Length
    first, then the bytes counted as they come), a 415 for a body that is not multipart, a 400
    for one that cannot be read."""
    kind = request.headers.get("content-type", "").split(";")[0].strip()
    if kind != "multipart/form-data":
        raise WebError(415, f"expected an upload form (multipart/form-data), got {kind[:80]!r}")
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_UPLOAD_BYTES):
        raise WebError(413, TOO_BIG)

    async def bounded() -> AsyncGenerator[bytes, None]:
        seen = 0
        async for chunk in request.stream():
            seen += len(chunk)
            if seen > MAX_UPLOAD_BYTES:
                raise WebError(413, TOO_BIG)
            yield chunk

    parser = MultiPartParser(
        request.headers,
        bounded(),
        max_files=1,
        max_fields=MAX_FIELDS,
        max_part_size=MAX_FIELD_BYTES,
    )
    try:
        form = await parser.parse()
    except MultiPartException as exc:
        raise WebError(400, f"the upload form cannot be read: {exc.message[:120]}") from None
    try:
        fields = {k: v for k, v in form.multi_items() if isinstance(v, str)}
        file = form.get("file")
        content = await file.read() if isinstance(file, UploadFile) else b""
        filename = (file.filename or "") if isinstance(file, UploadFile) else ""
    finally:
        await form.close()
    games = tuple(v for k, v in form.multi_items() if k == "games" and isinstance(v, str))
    return Upload(
        csrf=fields.get("csrf", ""),
        filename=filename,
        content=content,
        command=fields.get("command", "").strip(),
        games=games,
    )


def checked_games(upload: Upload) -> tuple[str, ...]:
    """The games ticked, each a known game (in :data:`GAMES`' order)."""
    unknown = [g for g in upload.games if g not in GAMES]
    if unknown:
        raise UploadError(
            f"games: {unknown[0][:40]!r} is not a game (expected some of {', '.join(GAMES)})"
        )
    if not upload.games:
        raise UploadError("games: tick at least one game the bot plays")
    return tuple(g for g in GAMES if g in upload.games)


def base_name(filename: str) -> str:
    """The file's own name (a browser may send a path, Windows' included), checked to be a
    plain file name."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    if not name:
        raise UploadError("file: choose a file to upload (a .py file, a .zip or a .tar.gz)")
    if len(name) > MAX_FILENAME or not FILENAME.match(name):
        raise UploadError(
            f"file: the name {name[:MAX_FILENAME]!r} is not a plain file name (letters, digits, "
            f"'_', '-' and '.', at most {MAX_FILENAME} characters)"
        )
    return name


def submission_of(upload: Upload) -> Submission:
    """The upload checked as ``bot submit`` and ``SubmitBot`` check one (see the module):
    an :class:`UploadError` or a :class:`SubmissionError` names what is wrong."""
    name = base_name(upload.filename)
    if not upload.content:
        raise UploadError(f"file: {name!r} is empty")
    if len(upload.content) > MAX_ARCHIVE_BYTES:
        raise UploadError(f"file: {TOO_BIG}")
    if not name.endswith((".py", *ARCHIVES)):
        raise UploadError(
            f"file: {name!r} is neither a .py file nor an archive (expected .py, "
            f"{', '.join(ARCHIVES)})"
        )
    if name.endswith(ARCHIVES) and not upload.command:
        raise UploadError(
            "command: an archive needs the command that starts the bot (./run.sh) or its "
            "Python bot (mybot.py:MyBot)"
        )
    packed = _packed(name, upload.content, upload.command or None)
    return check(packed.kind, packed.entry, packed.archive)


def _packed(name: str, content: bytes, command: str | None) -> Submission:
    """``content`` saved as ``name`` in a private folder and packed as ``bot submit`` packs
    that file: a .py file's one Bot class found by parsing it, an archive's members checked and
    the kind taken from ``command`` (``mybot.py:MyBot``: python, else a command line)."""
    with tempfile.TemporaryDirectory(prefix="upload-") as folder:
        path = Path(folder) / name
        path.write_bytes(content)
        try:
            return pack(path, command=command)
        except SubmissionError as exc:  # its message names the file by this folder's path
            raise SubmissionError(str(exc).replace(f"{folder}/", "")) from None
