"""Submissions packed, checked and unpacked: every hostile archive is refused with the member and
the rule (docs/hosting.md, "How submissions are checked")."""

from __future__ import annotations

import functools
import gzip
import io
import os
import stat
import struct
import subprocess
import sys
import tarfile
import zipfile
import zlib
from pathlib import Path

import pytest

from domino_arena.server.hosting.spec.submissions import (
    MAX_ARCHIVE_BYTES,
    MAX_MEMBERS,
    MAX_TAR_BYTES,
    MAX_UNPACKED_BYTES,
    Submission,
    SubmissionError,
    bot_class,
    check,
    pack,
    unpack,
)

BOT = """
from domino_arena.sdk import Bot

class Helper:
    pass

class MyBot(Bot):
    def choose(self, observation, legal, clock):
        return legal[0]
"""
GIB = 1 << 30
MIB = 1 << 20


def tar_bytes(*members: tuple[tarfile.TarInfo, bytes], gz: bool = True) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz" if gz else "w") as archive:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            archive.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return raw.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info


def zip_bytes(*members: tuple[zipfile.ZipInfo | str, bytes]) -> bytes:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, data in members:
            archive.writestr(info, data)
    return raw.getvalue()


def refused(archive: bytes, kind: str = "command", entry: str = "true") -> str:
    with pytest.raises(SubmissionError) as raised:
        check(kind, entry, archive)
    return str(raised.value)


@functools.cache
def gibibyte_of_zeros() -> tuple[bytes, int]:
    """A raw deflate stream of 1 GiB of zeros and its CRC-32: a 1 MiB block, fully flushed so it
    stands alone, repeated (a thousandth of the size, never holding the zeros)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(bytes(MIB)) + compressor.flush(zlib.Z_FULL_FLUSH)
    final = zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # an empty last block
    crc = 0
    for _ in range(GIB // MIB):
        crc = zlib.crc32(bytes(MIB), crc)
    return block * (GIB // MIB) + final, crc


def gzip_member(deflated: bytes, crc: int, size: int) -> bytes:
    return (
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
        + deflated
        + struct.pack("<II", crc, size & 0xFFFFFFFF)
    )


@functools.cache
def gzip_bomb(kind: bytes = tarfile.REGTYPE) -> bytes:
    """A tar.gz whose one member is 1 GiB of zeros, about 1 MiB: three gzip members (the tar
    header, the zeros, the end-of-archive blocks), as gzip allows and gunzip reads. ``kind``
    may make the member a pax or GNU long-name header of that size instead of a file."""
    info = member("bomb.bin", kind)
    info.size = GIB
    header = info.tobuf(format=tarfile.GNU_FORMAT)
    end = bytes(1024)
    zeros, crc = gibibyte_of_zeros()

    def deflate(data: bytes) -> bytes:
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
        return compressor.compress(data) + compressor.flush()

    return (
        gzip_member(deflate(header), zlib.crc32(header), len(header))
        + gzip_member(zeros, crc, GIB)
        + gzip_member(deflate(end), zlib.crc32(end), len(end))
    )


@functools.cache
def zip_bomb() -> bytes:
    """A zip whose one member inflates to 1 GiB of zeros (headers built by hand, zip64 sizes)."""
    body, crc = gibibyte_of_zeros()
    name = b"bomb.bin"
    extra = struct.pack("<HHQQ", 1, 16, GIB, len(body))
    local = (
        struct.pack(
            "<IHHHHHIIIHH",
            0x04034B50,
            45,
            0,
            8,
            0,
            0,
            crc,
            0xFFFFFFFF,
            0xFFFFFFFF,
            len(name),
            len(extra),
        )
        + name
        + extra
    )
    central_extra = struct.pack("<HHQQQ", 1, 24, GIB, len(body), 0)
    central = (
        struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50,
            45,
            45,
            0,
            8,
            0,
            0,
            crc,
            0xFFFFFFFF,
            0xFFFFFFFF,
            len(name),
            len(central_extra),
            0,
            0,
            0,
            0o100644 << 16,
            0,
        )
        + name
        + central_extra
    )
    offset = len(local) + len(body)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), offset, 0)
    return local + body + central + end


def test_bombs_are_well_formed_archives_of_a_gibibyte() -> None:
    """The bombs below are real: they inflate to 1 GiB (checked on the first MiBs here)."""
    tar_bomb, zipped = gzip_bomb(), zip_bomb()
    assert len(tar_bomb) < MAX_ARCHIVE_BYTES and len(zipped) < MAX_ARCHIVE_BYTES
    with gzip.open(io.BytesIO(tar_bomb)) as stream:
        info = tarfile.TarInfo.frombuf(stream.read(512), "utf-8", "surrogateescape")
        assert (info.name, info.size) == ("bomb.bin", GIB)
        assert stream.read(4 * MIB) == bytes(4 * MIB)
    with zipfile.ZipFile(io.BytesIO(zipped)) as archive:
        assert archive.infolist()[0].file_size == GIB
        with archive.open("bomb.bin") as stream:
            assert stream.read(4 * MIB) == bytes(4 * MIB)


def test_a_python_file_finds_its_one_bot_class_without_importing_it(tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    source = tmp_path / "mybot.py"
    source.write_text(f"open({str(marker)!r}, 'w').close()\n" + BOT)
    submission = pack(source)
    assert (submission.kind, submission.entry, submission.files) == ("python", "mybot.py:MyBot", 1)
    assert not marker.exists(), "pack imported the submission"
    assert pack(Path(f"{source}:Helper")).entry == "mybot.py:Helper"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("class A:\n    pass\n", "mybot.py: no subclass of Bot; name the class as mybot.py:Class"),
        (
            BOT + "class Other(MyBot):\n    pass\n",
            "mybot.py: several: MyBot, Other; name the class as mybot.py:Class",
        ),
        ("class (:\n", "mybot.py: not valid Python: line 1:"),
    ],
    ids=["none", "several", "syntax"],
)
def test_a_python_file_without_one_bot_class_is_refused(source: str, message: str) -> None:
    with pytest.raises(SubmissionError) as raised:
        bot_class(source.encode(), "mybot.py")
    assert str(raised.value).startswith(message)


def test_the_same_files_make_the_same_archive(tmp_path: Path) -> None:
    files = {
        "run.sh": b"#!/bin/sh\nexec python3 bot.py\n",
        "lib/util.py": b"X = 1\n",
        "bot.py": BOT.encode(),
    }
    first = tmp_path / "first"
    for name, data in files.items():
        (first / name).parent.mkdir(parents=True, exist_ok=True)
        (first / name).write_bytes(data)
    second = tmp_path / "second"
    for name, data in reversed(files.items()):
        (second / name).parent.mkdir(parents=True, exist_ok=True)
        (second / name).write_bytes(data)
        os.utime(second / name, (12345, 12345))
    (second / "lib" / "__pycache__").mkdir()
    (second / "lib" / "__pycache__" / "util.cpython-311.pyc").write_bytes(b"cache")
    packed = [pack(first, command="./run.sh"), pack(second, command="./run.sh")]
    as_tar = tmp_path / "bot.tgz"
    as_tar.write_bytes(tar_bytes(*((member(n), d) for n, d in files.items())))
    as_zip = tmp_path / "bot.zip"
    as_zip.write_bytes(zip_bytes(*reversed(files.items())))
    packed += [pack(as_tar, command="./run.sh"), pack(as_zip, command="./run.sh")]
    assert len({p.sha256 for p in packed}) == 1, [p.sha256 for p in packed]
    again = check("command", "./run.sh", packed[0].archive)
    assert again == packed[0]
    assert (again.files, again.unpacked_bytes) == (3, sum(len(d) for d in files.values()))


def test_unpack_writes_world_readable_files_and_an_executable_command(tmp_path: Path) -> None:
    source = tmp_path / "source"
    (source / "lib").mkdir(parents=True)
    (source / "run.sh").write_text("#!/bin/sh\n")  # not executable: the command is made so
    (source / "lib" / "data.txt").write_text("data")
    into = tmp_path / "bundle"
    unpack(pack(source, command="./run.sh arg"), into)
    modes = {
        p.relative_to(into).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in into.rglob("*")
    }
    assert modes == {"run.sh": 0o755, "lib": 0o755, "lib/data.txt": 0o644}
    assert (into / "lib" / "data.txt").read_text() == "data"
    with pytest.raises(SubmissionError, match="not empty"):
        unpack(pack(source, command="./run.sh"), into)


TAR_REFUSALS = [
    ((member("../evil.py"), b"x"), "member ../evil.py: a path outside the submission"),
    ((member("a/../../evil.py"), b"x"), "member a/../../evil.py: a path outside the submission"),
    ((member("/etc/cron.d/evil"), b"x"), "member /etc/cron.d/evil: an absolute path"),
    ((member("link", tarfile.SYMTYPE, "/etc/passwd"), b""), "member link: a symbolic link"),
    ((member("hard", tarfile.LNKTYPE, "run.sh"), b""), "member hard: a hard link"),
    ((member("dev", tarfile.CHRTYPE), b""), "member dev: a device or a fifo"),
    ((member("fifo", tarfile.FIFOTYPE), b""), "member fifo: a device or a fifo"),
    ((member("bad\x1bname"), b"x"), "member bad\\x1bname: a control character"),
]


@pytest.mark.parametrize(("bad", "message"), TAR_REFUSALS, ids=[m for (i, _), m in TAR_REFUSALS])
def test_a_tar_with_a_hostile_member_is_refused(
    bad: tuple[tarfile.TarInfo, bytes], message: str
) -> None:
    archive = tar_bytes((member("run.sh"), b"#!/bin/sh\n"), bad)
    assert refused(archive, entry="./run.sh").startswith(message)


ZIP_REFUSALS = [
    ("../evil.py", 0o100644, "member ../evil.py: a path outside the submission"),
    ("/abs.py", 0o100644, "member /abs.py: an absolute path"),
    ("C:/abs.py", 0o100644, "member C:/abs.py: an absolute path"),
    ("dir\\evil.py", 0o100644, "member dir\\\\evil.py: a backslash"),
    ("link", stat.S_IFLNK | 0o777, "member link: a symbolic link"),
    ("fifo", stat.S_IFIFO | 0o644, "member fifo: a device or a fifo"),
]


@pytest.mark.parametrize(
    ("name", "mode", "message"), ZIP_REFUSALS, ids=[m for _, _, m in ZIP_REFUSALS]
)
def test_a_zip_with_a_hostile_member_is_refused(name: str, mode: int, message: str) -> None:
    info = zipfile.ZipInfo(name)
    info.external_attr = mode << 16
    archive = zip_bytes(("run.sh", b"#!/bin/sh\n"), (info, b"/etc/passwd"))
    assert refused(archive, entry="./run.sh").startswith(message)


def test_a_gibibyte_member_is_refused_without_being_inflated() -> None:
    for archive in (gzip_bomb(), zip_bomb()):
        message = refused(archive)
        assert message == (
            f"member bomb.bin: the files unpack to more than {MAX_UNPACKED_BYTES} bytes (64 MiB)"
        )


@pytest.mark.parametrize(
    "kind",
    [tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.GNUTYPE_LONGNAME],
    ids=["pax", "global", "gnu"],
)
def test_a_gibibyte_header_is_refused_without_being_inflated(kind: bytes) -> None:
    """tarfile reads an extended header whole: the whole inflated stream is bounded too."""
    assert refused(gzip_bomb(kind)) == (
        f"the archive unpacks to more than {MAX_TAR_BYTES} bytes with its headers"
    )


def test_too_many_members_are_refused() -> None:
    many = [(member(f"f{i}"), b"") for i in range(MAX_MEMBERS + 1)]
    assert (
        refused(tar_bytes(*many))
        == f"member f{MAX_MEMBERS}: more than 2000 members (files and folders)"
    )
    zipped = zip_bytes(*((f"f{i}", b"") for i in range(MAX_MEMBERS + 1)))
    assert refused(zipped) == f"member f{MAX_MEMBERS}: more than 2000 members (files and folders)"


def test_an_upload_above_the_archive_limit_is_refused() -> None:
    assert refused(bytes(MAX_ARCHIVE_BYTES + 1)) == (
        f"the archive is {MAX_ARCHIVE_BYTES + 1} bytes, more than {MAX_ARCHIVE_BYTES} (3 MiB)"
    )


def test_files_that_pack_above_the_archive_limit_are_refused(tmp_path: Path) -> None:
    (tmp_path / "noise").write_bytes(os.urandom(MAX_ARCHIVE_BYTES))
    with pytest.raises(SubmissionError, match=r"^the packed submission is 31[0-9]{5} bytes, more"):
        pack(tmp_path, command="true")


def test_links_and_devices_in_a_folder_are_refused(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    (tmp_path / "secret").symlink_to("/etc/passwd")
    with pytest.raises(SubmissionError, match=r"^member secret: a symbolic link$"):
        pack(tmp_path, command="./run.sh")
    (tmp_path / "secret").unlink()
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(SubmissionError, match=r"^member pipe: a device, fifo or socket$"):
        pack(tmp_path, command="./run.sh")


@pytest.mark.parametrize(
    ("kind", "entry", "message"),
    [
        (
            "python",
            "missing.py:MyBot",
            "entry missing.py:MyBot: missing.py is not in the submission",
        ),
        (
            "python",
            "bot.py:1Bot",
            "entry bot.py:1Bot: the class part 1Bot is not a Python identifier",
        ),
        (
            "python",
            "bot.py:class",
            "entry bot.py:class: the class part class is not a Python identifier",
        ),
        ("python", "bot.py", "entry bot.py: expected FILE.py:Class"),
        (
            "command",
            "./missing.sh --fast",
            "command ./missing.sh --fast: ./missing.sh is not in the submission",
        ),
        ("command", "'unclosed", "command 'unclosed: No closing quotation"),
        ("shell", "x", "kind shell: expected one of python, command"),
        ("command", "a\nb", "entry a\\nb: expected one line"),
    ],
)
def test_an_entry_that_does_not_fit_its_files_is_refused(
    kind: str, entry: str, message: str
) -> None:
    archive = tar_bytes((member("bot.py"), BOT.encode()))
    assert refused(archive, kind, entry).startswith(message)


def test_commands_of_the_sandbox_and_python_entries_in_folders_are_taken(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(BOT)
    assert pack(tmp_path, command="java -jar bot.jar").kind == "command"  # a program on PATH
    assert pack(tmp_path, command="/usr/bin/python3 bot.py").kind == "command"
    python = pack(tmp_path, command="bot.py:MyBot")
    assert (python.kind, python.entry) == ("python", "bot.py:MyBot")
    with pytest.raises(SubmissionError, match="needs a command"):
        pack(tmp_path)


def test_a_submission_round_trips(tmp_path: Path) -> None:
    source = tmp_path / "mybot.py"
    source.write_text(BOT)
    submission = pack(source)
    assert isinstance(submission, Submission)
    into = tmp_path / "bundle"
    unpack(submission, into)
    assert (into / "mybot.py").read_text() == BOT
    assert check(submission.kind, submission.entry, submission.archive).sha256 == submission.sha256


def test_submissions_load_with_the_standard_library_alone() -> None:
    """The light install's `bot submit` packs with this module: nothing but the standard
    library (and the package's own empty folders) may load with it."""
    code = (
        "import sys; before = set(sys.modules)\n"
        "import domino_arena.server.hosting.spec.submissions\n"
        "print(sorted(m for m in set(sys.modules) - before\n"
        "             if m.split('.')[0] not in sys.stdlib_module_names))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(
        [
            "domino_arena",
            "domino_arena.server",
            "domino_arena.server.hosting",
            "domino_arena.server.hosting.spec",
            "domino_arena.server.hosting.spec.submissions",
        ]
    )
