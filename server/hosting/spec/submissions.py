"""A submission's files: packed by the author, checked again by the server, unpacked to run.

docs/hosting.md ("How submissions are checked"). Whatever the author gives (a Python file, a
folder, a .zip or a tar archive) becomes one canonical tar.gz: regular files and folders only,
sorted, mtime 0, owner 0, modes 0644 or 0755, so the same files always have the same sha256.
The server trusts none of it: :func:`check` reads the uploaded bytes with the same rules and
packs them again. Every refusal names the member and the rule. Sizes are counted while the
bytes stream out of the decompressor, never taken from a header, so a 1 GB member of zeros
(a megabyte compressed) is refused after 64 MiB and never written anywhere.

Standard library only: the light install's ``domino-arena bot submit`` packs with it.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import io
import keyword
import os
import re
import shlex
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final, cast

MAX_ARCHIVE_BYTES: Final = 3 << 20
"""What is uploaded (fits a gRPC message)."""
MAX_UNPACKED_BYTES: Final = 64 << 20
MAX_MEMBERS: Final = 2000
MAX_TAR_BYTES: Final = MAX_UNPACKED_BYTES + (MAX_MEMBERS + 1) * 3 * 512 + (1 << 20)
"""A tar's whole inflated stream: the files, a header and its extended headers (up to 1 KiB)
for each member, padding and end blocks."""
MAX_ENTRY_CHARS: Final = 1000
KINDS: Final = ("python", "command")
SKIPPED_FOLDERS: Final = frozenset({"__pycache__", ".git", ".hg", ".svn"})
"""Folders a folder submission leaves out (caches and version control)."""
BOT_BASES: Final = frozenset({"Bot", "AsyncBot"})
_CHUNK: Final = 1 << 16
_ARCHIVE_SUFFIXES: Final = (".zip", ".tar", ".tar.gz", ".tgz")
_PYTHON_ENTRY: Final = re.compile(r"^(?P<file>[^:]+\.py):(?P<cls>[^:]*)$")


class SubmissionError(ValueError):
    """A refused submission: names the member (or entry) and the rule it breaks."""


@dataclass(frozen=True, slots=True)
class Submission:
    """A checked submission: its entry and its canonical archive."""

    kind: str
    """``"python"`` (entry ``"mybot.py:MyBot"``) or ``"command"`` (entry ``"./run.sh"``)."""
    entry: str
    archive: bytes
    """Canonical tar.gz of the files (sorted, mtime 0, modes 0644/0755, files and folders)."""
    sha256: str
    unpacked_bytes: int
    files: int


def _shown(name: str) -> str:
    """A member name from untrusted bytes, escaped and bounded for a message."""
    text = name.encode("unicode_escape", "backslashreplace").decode("ascii")
    return text if len(text) <= 120 else text[:117] + "..."


def _member_path(name: str) -> str:
    """The member's normalized relative path, or SubmissionError naming the rule it breaks."""
    fail = f"member {_shown(name)}: "
    if not name or name in {".", "./"}:
        raise SubmissionError(fail + "an empty name")
    if any(ord(c) < 32 or ord(c) == 127 or "\udc80" <= c <= "\udcff" for c in name):
        raise SubmissionError(fail + "a control character or a byte that is not UTF-8 in the name")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise SubmissionError(fail + "an absolute path")
    if "\\" in name:
        raise SubmissionError(fail + "a backslash in the name (paths use /)")
    parts = [part for part in name.split("/") if part not in {"", "."}]
    if ".." in parts:
        raise SubmissionError(fail + "a path outside the submission")
    if not parts:
        raise SubmissionError(fail + "an empty name")
    if len(name) > 1000 or any(len(part.encode()) > 255 for part in parts):
        raise SubmissionError(fail + "a name longer than 1000 characters or 255 bytes a part")
    return "/".join(parts)


class _Collector:
    """The files and folders read so far, with the bounds counted as bytes arrive."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[bytes, bool]] = {}  # path -> (content, executable)
        self.folders: set[str] = set()
        self.members = 0
        self.total = 0

    def count(self, name: str) -> None:
        self.members += 1
        if self.members > MAX_MEMBERS:
            raise SubmissionError(
                f"member {_shown(name)}: more than {MAX_MEMBERS} members (files and folders)"
            )

    def folder(self, name: str) -> None:
        path = _member_path(name)
        if path in self.files:
            raise SubmissionError(f"member {_shown(name)}: both a file and a folder")
        self.folders.add(path)

    def file(self, name: str, stream: IO[bytes], executable: bool) -> None:
        path = _member_path(name)
        if path in self.files or path in self.folders:
            raise SubmissionError(f"member {_shown(name)}: twice in the submission")
        chunks = []
        while chunk := stream.read(_CHUNK):
            self.total += len(chunk)
            if self.total > MAX_UNPACKED_BYTES:
                raise SubmissionError(
                    f"member {_shown(name)}: the files unpack to more than "
                    f"{MAX_UNPACKED_BYTES} bytes ({MAX_UNPACKED_BYTES >> 20} MiB)"
                )
            chunks.append(chunk)
        self.files[path] = (b"".join(chunks), executable)

    def finish(self) -> None:
        """Every file's parent folders exist and no file stands where a folder is needed."""
        for path in list(self.files):
            parts = path.split("/")
            for depth in range(1, len(parts)):
                parent = "/".join(parts[:depth])
                if parent in self.files:
                    raise SubmissionError(f"member {_shown(path)}: inside a file ({parent})")
                self.folders.add(parent)


class _Inflated:
    """A tar's bytes counted as tarfile reads them, headers included: tarfile reads a pax or GNU
    long-name header whole, whatever size it claims, so a bound on the members' contents alone
    would let a 1 GiB header of zeros (a megabyte compressed) into memory."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        left = MAX_TAR_BYTES - self.count
        chunk = self.stream.read(left + 1 if size < 0 or size > left else size)
        self.count += len(chunk)
        if self.count > MAX_TAR_BYTES:
            raise SubmissionError(
                f"the archive unpacks to more than {MAX_TAR_BYTES} bytes with its headers"
            )
        return chunk


def _read_tar(data: IO[bytes], into: _Collector) -> None:
    """A tar, plain or gzipped. gzip's own reader inflates only what is read (tarfile's stream
    would inflate 10 KiB of input at once, ten megabytes of a bomb, and copy it on every read)."""
    magic = data.read(2)
    data.seek(0)
    source: IO[bytes] = data
    if magic == b"\x1f\x8b":
        source = gzip.GzipFile(fileobj=data, mode="rb")  # type: ignore[assignment]
    inflated = cast(IO[bytes], _Inflated(source))
    try:
        with tarfile.open(fileobj=inflated, mode="r|") as archive:
            for member in archive:
                into.count(member.name)
                if member.issym():
                    raise SubmissionError(f"member {_shown(member.name)}: a symbolic link")
                if member.islnk():
                    raise SubmissionError(f"member {_shown(member.name)}: a hard link")
                if member.ischr() or member.isblk() or member.isfifo():
                    raise SubmissionError(f"member {_shown(member.name)}: a device or a fifo")
                if member.isdir():
                    into.folder(member.name)
                elif member.isreg() and not member.issparse():
                    stream = archive.extractfile(member)
                    if stream is None:  # pragma: no cover - isreg members always have one
                        raise SubmissionError(f"member {_shown(member.name)}: unreadable")
                    into.file(member.name, stream, bool(member.mode & 0o111))
                else:
                    raise SubmissionError(
                        f"member {_shown(member.name)}: not a regular file or a folder"
                    )
    except (tarfile.TarError, EOFError, OSError, zlib.error) as error:  # gzip's BadGzipFile too
        raise SubmissionError(f"not a readable tar archive: {_shown(str(error))}") from None


def _read_zip(data: IO[bytes], into: _Collector) -> None:
    try:
        with zipfile.ZipFile(data) as archive:
            members = archive.infolist()
            if len(members) > MAX_MEMBERS:
                raise SubmissionError(
                    f"member {_shown(members[MAX_MEMBERS].filename)}: more than {MAX_MEMBERS} "
                    "members (files and folders)"
                )
            for info in members:
                into.count(info.filename)
                # Unix modes only from a Unix zip, and a type only when one is given
                mode = info.external_attr >> 16 if info.create_system == 3 else 0
                kind = stat.S_IFMT(mode)
                if kind == stat.S_IFLNK:
                    raise SubmissionError(f"member {_shown(info.filename)}: a symbolic link")
                if kind not in {0, stat.S_IFREG, stat.S_IFDIR}:
                    raise SubmissionError(f"member {_shown(info.filename)}: a device or a fifo")
                if info.flag_bits & 0x1:
                    raise SubmissionError(f"member {_shown(info.filename)}: encrypted")
                if info.is_dir():
                    into.folder(info.filename)
                    continue
                with archive.open(info) as stream:
                    into.file(info.filename, stream, bool(mode & 0o111))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError) as error:
        raise SubmissionError(f"not a readable zip archive: {_shown(str(error))}") from None
    except EOFError:
        raise SubmissionError("not a readable zip archive: truncated") from None


def _read_folder(folder: Path, into: _Collector) -> None:
    for root, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS)
        base = Path(root)
        for name in [*dirs, *sorted(names)]:
            path = base / name
            relative = path.relative_to(folder).as_posix()
            into.count(relative)
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                raise SubmissionError(f"member {_shown(relative)}: a symbolic link")
            if stat.S_ISDIR(info.st_mode):
                into.folder(relative)
            elif stat.S_ISREG(info.st_mode):
                with path.open("rb") as stream:
                    into.file(relative, stream, bool(info.st_mode & 0o111))
            else:
                raise SubmissionError(f"member {_shown(relative)}: a device, fifo or socket")


def _read_archive(data: bytes, into: _Collector) -> None:
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
        _read_zip(io.BytesIO(data), into)
    else:
        _read_tar(io.BytesIO(data), into)


def bot_class(source: bytes, filename: str) -> str:
    """The one class of ``source`` that subclasses Bot (found by parsing, never importing)."""
    try:
        tree = ast.parse(source, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        line = getattr(error, "lineno", None)
        where = f" line {line}:" if line else ""
        raise SubmissionError(
            f"{_shown(filename)}: not valid Python:{where} {_shown(str(error))}"
        ) from None
    bots: set[str] = set()
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    changed = True
    while changed:  # subclasses of subclasses in the same file count too
        changed = False
        for node in classes:
            names = {
                base.id if isinstance(base, ast.Name) else base.attr
                for base in node.bases
                if isinstance(base, ast.Name | ast.Attribute)
            }
            if node.name not in bots and names & (BOT_BASES | bots):
                bots.add(node.name)
                changed = True
    if len(bots) != 1:
        found = "no subclass of Bot" if not bots else "several: " + ", ".join(sorted(bots))
        raise SubmissionError(f"{_shown(filename)}: {found}; name the class as {filename}:Class")
    return bots.pop()


def _check_entry(kind: str, entry: str, into: _Collector) -> dict[str, tuple[bytes, bool]]:
    """The files, with the command's file made executable; SubmissionError if the entry is bad."""
    if kind not in KINDS:
        raise SubmissionError(f"kind {_shown(kind)}: expected one of {', '.join(KINDS)}")
    if not entry.strip() or len(entry) > MAX_ENTRY_CHARS or any(ord(c) < 32 for c in entry):
        raise SubmissionError(
            f"entry {_shown(entry)}: expected one line of at most {MAX_ENTRY_CHARS} characters"
        )
    files = dict(into.files)
    if kind == "python":
        match = _PYTHON_ENTRY.match(entry)
        if match is None:
            raise SubmissionError(f"entry {_shown(entry)}: expected FILE.py:Class")
        name, cls = match["file"], match["cls"]
        path = _member_path(name)
        if path not in files:
            raise SubmissionError(f"entry {_shown(entry)}: {_shown(name)} is not in the submission")
        if not cls.isidentifier() or keyword.iskeyword(cls):
            raise SubmissionError(
                f"entry {_shown(entry)}: the class part {_shown(cls)} is not a Python identifier"
            )
        return files
    try:
        words = shlex.split(entry)
    except ValueError as error:
        raise SubmissionError(f"command {_shown(entry)}: {error}") from None
    if not words:
        raise SubmissionError(f"command {_shown(entry)}: empty")
    program = words[0]
    if "/" in program and not program.startswith("/"):
        # a file of the submission (a bare name or an absolute path is a program of the sandbox's)
        path = _member_path(program)
        if path not in files:
            raise SubmissionError(
                f"command {_shown(entry)}: {_shown(program)} is not in the submission"
            )
        files[path] = (files[path][0], True)
    return files


def _canonical(files: dict[str, tuple[bytes, bool]], folders: set[str]) -> bytes:
    """The deterministic tar.gz of the files (see the module)."""
    raw = io.BytesIO()
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as archive,
    ):
        for path in sorted(folders | set(files), key=lambda p: p.split("/")):
            info = tarfile.TarInfo(path)
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if path in files:
                content, executable = files[path]
                info.size = len(content)
                info.mode = 0o755 if executable else 0o644
                archive.addfile(info, io.BytesIO(content))
            else:
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                archive.addfile(info)
    return raw.getvalue()


def _submission(kind: str, entry: str, into: _Collector) -> Submission:
    into.finish()
    files = _check_entry(kind, entry, into)
    archive = _canonical(files, into.folders)
    if len(archive) > MAX_ARCHIVE_BYTES:
        raise SubmissionError(
            f"the packed submission is {len(archive)} bytes, more than {MAX_ARCHIVE_BYTES} "
            f"({MAX_ARCHIVE_BYTES >> 20} MiB)"
        )
    return Submission(
        kind=kind,
        entry=entry,
        archive=archive,
        sha256=hashlib.sha256(archive).hexdigest(),
        unpacked_bytes=into.total,
        files=len(files),
    )


def _split_entry(path: Path) -> tuple[Path, str | None]:
    """``mybot.py:MyBot`` -> (mybot.py, "MyBot"); a path that exists as given is kept whole."""
    text = str(path)
    if path.exists() or ":" not in text:
        return path, None
    file, _, cls = text.rpartition(":")
    return Path(file), cls


def pack(path: Path, *, command: str | None = None) -> Submission:
    """A submission from the author's files (see the module); SubmissionError says what is wrong.

    ``path`` is a Python file (``mybot.py``, its one Bot subclass found by parsing it, or
    ``mybot.py:MyBot``), or a folder or a .zip/.tar/.tar.gz/.tgz archive with ``command``: a
    command line (``./run.sh``, ``java -jar bot.jar``) or a Python entry (``mybot.py:MyBot``).
    """
    path, cls = _split_entry(path)
    into = _Collector()
    name = str(path)
    if path.is_dir():
        _read_folder(path, into)
    elif not path.is_file():
        raise SubmissionError(f"{_shown(name)}: no such file or folder")
    elif name.endswith(_ARCHIVE_SUFFIXES):
        size = path.stat().st_size
        if size > MAX_UNPACKED_BYTES:
            raise SubmissionError(
                f"{_shown(name)}: the archive is {size} bytes, more than {MAX_UNPACKED_BYTES}"
            )
        _read_archive(path.read_bytes(), into)
    elif name.endswith(".py"):
        into.count(path.name)
        with path.open("rb") as stream:
            into.file(path.name, stream, executable=False)
        if command is None:
            cls = cls or bot_class(into.files[path.name][0], path.name)
            return _submission("python", f"{path.name}:{cls}", into)
    else:
        raise SubmissionError(
            f"{_shown(name)}: expected a .py file, a folder or a .zip/.tar/.tar.gz/.tgz archive"
        )
    if cls is not None:
        raise SubmissionError(f"{_shown(str(path))}:{_shown(cls)}: only a .py file takes :Class")
    if command is None:
        raise SubmissionError(
            f"{_shown(name)}: a folder or an archive needs a command (--command ./run.sh) "
            "or a Python entry (--command mybot.py:MyBot)"
        )
    if _PYTHON_ENTRY.match(command) and " " not in command:
        return _submission("python", command, into)
    return _submission("command", command, into)


def check(kind: str, entry: str, archive: bytes) -> Submission:
    """Untrusted uploaded bytes checked as :func:`pack` checks files, then packed canonically."""
    if len(archive) > MAX_ARCHIVE_BYTES:
        raise SubmissionError(
            f"the archive is {len(archive)} bytes, more than {MAX_ARCHIVE_BYTES} "
            f"({MAX_ARCHIVE_BYTES >> 20} MiB)"
        )
    into = _Collector()
    _read_archive(archive, into)
    return _submission(kind, entry, into)


def _members(archive: bytes) -> Iterator[tuple[str, bytes | None, bool]]:
    """(path, content or None for a folder, executable) of a checked archive, folders first."""
    into = _Collector()
    _read_archive(archive, into)
    into.finish()
    for folder in sorted(into.folders, key=lambda p: p.split("/")):
        yield folder, None, True
    for path, (content, executable) in sorted(into.files.items()):
        yield path, content, executable


def unpack(submission: Submission, into: Path) -> None:
    """Write the submission's files under ``into`` (new or empty), world-readable for the sandbox.

    The archive is read again with every check (it may come from storage), files are created
    exclusively and never through a link.
    """
    into.mkdir(parents=True, exist_ok=True)
    if any(into.iterdir()):
        raise SubmissionError(f"{into}: not empty, a submission unpacks into a new folder")
    os.chmod(into, 0o755)
    for path, content, executable in _members(submission.archive):
        target = into.joinpath(*path.split("/"))
        if content is None:
            target.mkdir(mode=0o755)
            os.chmod(target, 0o755)
            continue
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        mode = 0o755 if executable else 0o644
        descriptor = os.open(target, flags, mode)
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(content)
        os.chmod(target, mode)


def size_text(size: int) -> str:
    """A byte count in words, as ``bot submit``, ``bot versions`` and the bot's page show it:
    ``812 B``, ``1.2 KiB``, ``3.0 MiB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1 << 20:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1 << 20):.1f} MiB"
