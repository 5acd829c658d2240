"""The sandbox a hosted bot runs in: Debian's bubblewrap, rlimits, nothing of the referee's.

docs/hosting.md ("The sandbox"): untrusted code never runs
unsandboxed. :func:`sandboxed` turns a submission's command into a :class:`ChildCommand` whose
process is a bubblewrap sandbox with its own user, pid, network, ipc and uts namespaces (no
network at all: only a loopback that is down), a read-only system (``/usr`` and the few ``/etc``
files the dynamic linker reads), the submission read-only at ``/bot`` (its working directory), a
private tmpfs ``/tmp`` (also ``HOME``) capped at ``scratch_mb``, an empty environment but ``PATH``,
``HOME``, ``LANG`` and ``PYTHONPATH``, the limits applied inside by ``prlimit`` (so they hold for
every process of the bot), at nice 10, killed with the runner (``--die-with-parent``).

Python bots get the referee's own interpreter read-only (its site-packages hidden) and a
``PYTHONPATH`` holding only ``domino_arena.sdk``, ``domino_arena.v1`` and ``google.protobuf``:
never the server, the database drivers or the venv's other packages.

When the runner is root, two things need care. RLIMIT_NPROC never binds a process whose real
uid is root, so the sandbox runs as uid/gid 65534 (nobody) and bubblewrap makes a user namespace
of its own, in which the process count is kept apart from every other sandbox. And nobody may not
be able to reach the files to mount (the interpreter of a pyenv under ``/root``, a submission
unpacked in a private data directory; bubblewrap 0.8 resolves even ``--ro-bind-fd`` sources by
path), so the command first enters a private mount namespace as root, binds each source nobody
cannot reach onto an empty mount point of a root-owned staging directory, then drops to nobody
(``setpriv``) and execs bubblewrap. The uid switch is thus part of the command (``run_as`` stays
None): one process from the spawner's point of view, whose group the bridge stops.

Memory is bounded twice (``SandboxLimits.memory_mb``): private memory by RLIMIT_DATA, the
address space at eight times as much by RLIMIT_AS, since Go, Node.js and the JVM reserve far
more address space than they use.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import shutil
import site
import stat
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from domino_arena.sdk.stdio.child import ChildCommand

from .spec.limits import ADDRESS_SPACE_FACTOR, DEFAULT_LIMITS, SandboxLimits

SANDBOX_UID: Final = 65534
"""nobody: the uid (and gid) a sandbox runs as when the runner is root."""
BOT_DIR: Final = "/bot"
OPT_DIR: Final = "/opt/domino-arena"
PYTHONPATH_DIR: Final = f"{OPT_DIR}/python"
BIN_DIR: Final = f"{OPT_DIR}/bin"
NICENESS: Final = 10
PYTHON_PACKAGES: Final = ("domino_arena.sdk", "domino_arena.v1", "google.protobuf", "google._upb")
"""What a sandboxed Python may import besides the standard library (``google._upb`` is
protobuf's compiled backend, optional)."""
ETC_FILES: Final = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
)
TOP_LEVEL_LINKS: Final = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_PATH: Final = "/usr/local/bin:/usr/bin:/bin"
STAGE_NAME: Final = "domino-arena-sandbox"
STAGE_DIR: Final = Path("/tmp") / STAGE_NAME
"""Root's empty mount points. Under /tmp, not $TMPDIR: nobody must reach them."""
INSTALL_HINT: Final = "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"

# The root-only prelude (a POSIX sh script; its arguments, never its text, carry the paths):
# bind each source onto its staging mount point in the private mount namespace, then exec the rest.
_STAGE_SCRIPT: Final = (
    'm=$1; shift; while [ "$1" != -- ]; do "$m" --bind -- "$1" "$2" || exit 125; shift 2; done; '
    'shift; exec "$@"'
)


class SandboxUnavailableError(RuntimeError):
    """The sandbox cannot run here; ``str()`` is one line: what is missing and how to fix it."""


@dataclass(frozen=True, slots=True)
class _Tools:
    bwrap: str
    prlimit: str
    nice: str
    sh: str
    unshare: str | None  # the root-only ones
    setpriv: str | None
    mount: str | None


def _which(name: str) -> str | None:
    found = shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin")
    return os.path.realpath(found) if found else None


def _tools(bwrap: str | None) -> _Tools:
    bwrap_path = bwrap if bwrap is not None else shutil.which("bwrap")
    if not bwrap_path or not os.access(bwrap_path, os.X_OK) or os.path.isdir(bwrap_path):
        raise SandboxUnavailableError(INSTALL_HINT)
    root = os.geteuid() == 0
    names = ("prlimit", "nice", "sh", "unshare", "setpriv", "mount")
    found = {name: _which(name) for name in names}
    needed = ("prlimit", "nice", "sh", *(("unshare", "setpriv", "mount") if root else ()))
    for name in needed:
        if found[name] is None:
            package = "coreutils" if name == "nice" else "dash" if name == "sh" else "util-linux"
            raise SandboxUnavailableError(
                f"{name} is not installed (the sandbox needs it): apt-get install {package}"
            )
    return _Tools(
        bwrap=bwrap_path,
        prlimit=found["prlimit"] or "",
        nice=found["nice"] or "",
        sh=found["sh"] or "",
        unshare=found["unshare"],
        setpriv=found["setpriv"],
        mount=found["mount"],
    )


@dataclass(frozen=True, slots=True)
class _Python:
    executable: str  # the real interpreter file
    binds: tuple[tuple[str, str], ...]  # (source on the host, destination in the sandbox)
    hidden: tuple[str, ...]  # site-packages of the interpreter's prefix, shown empty


@functools.cache
def _python() -> _Python:
    """The referee's interpreter and the package folders a sandboxed bot may import."""
    prefix = os.path.realpath(sys.base_prefix)
    executable = os.path.realpath(sys.executable)
    if not executable.startswith(prefix + os.sep):
        raise SandboxUnavailableError(
            f"the interpreter {executable} is outside its prefix {prefix}: "
            "run the referee with a Python whose executable is in its installation"
        )
    under_usr = prefix == "/usr" or prefix.startswith("/usr/")  # already in the system
    binds = [] if under_usr else [(prefix, prefix)]
    for name in PYTHON_PACKAGES:
        spec = importlib.util.find_spec(name)
        locations = list(spec.submodule_search_locations or []) if spec else []
        if not locations:
            if name == "google._upb":
                continue
            raise SandboxUnavailableError(f"the package {name} is not installed")
        binds.append((os.path.realpath(locations[0]), f"{PYTHONPATH_DIR}/{name.replace('.', '/')}"))
    hidden = tuple(
        sorted({os.path.realpath(p) for p in site.getsitepackages([prefix]) if os.path.isdir(p)})
    )
    return _Python(executable=executable, binds=tuple(binds), hidden=hidden)


def _stage_dir(count: int) -> Path:
    """A root-owned folder of empty mount points (``0``..``count-1``), made once, never written."""
    stage = STAGE_DIR
    for folder in (stage, *(stage / str(i) for i in range(count))):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o755)
        info = folder.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
            raise SandboxUnavailableError(
                f"{folder} is not a folder only root may write: remove it so the sandbox remakes it"
            )
    return stage


def _reachable(path: str) -> bool:
    """Whether any user may list ``path``: it and every folder above it open to others."""
    folder = Path(path)
    if not folder.stat().st_mode & stat.S_IROTH:
        return False
    return all(part.stat().st_mode & stat.S_IXOTH for part in (folder, *folder.parents))


def _as_nobody(
    tools: _Tools, sources: list[tuple[str, str]]
) -> tuple[list[str], list[tuple[str, str]]]:
    """The prelude of a root runner's sandbox, and the sources as nobody will find them.

    The prelude switches to nobody (setpriv). Sources nobody cannot reach are first bound, as
    root in a private mount namespace, onto the staging directory's mount points (see the
    module); when every source is reachable, that step (about 6 ms a bind) is left out.
    """
    switch = [
        tools.setpriv or "",
        f"--reuid={SANDBOX_UID}",
        f"--regid={SANDBOX_UID}",
        "--clear-groups",
        "--",
    ]
    hidden = [i for i, (host, _) in enumerate(sources) if not _reachable(host)]
    if not hidden:
        return switch, sources
    stage = _stage_dir(len(hidden))
    points = {i: str(stage / str(number)) for number, i in enumerate(hidden)}
    prelude = [
        tools.unshare or "",
        "--mount",
        "--propagation",
        "private",
        "--",
        tools.sh,
        "-c",
        _STAGE_SCRIPT,
        STAGE_NAME,
        tools.mount or "",
        *(path for i in hidden for path in (sources[i][0], points[i])),
        "--",
        *switch,
    ]
    return prelude, [(points.get(i, host), inside) for i, (host, inside) in enumerate(sources)]


def _system_args() -> list[str]:
    """The read-only system: /usr, the top-level links (or folders) into it, a few /etc files."""
    args = ["--ro-bind", "/usr", "/usr"]
    for path in TOP_LEVEL_LINKS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in ETC_FILES:
        args += ["--ro-bind-try", path, path]
    return args


def _limit_args(tools: _Tools, limits: SandboxLimits) -> list[str]:
    mib = 1 << 20
    return [
        tools.prlimit,
        f"--data={limits.memory_mb * mib}",
        f"--as={limits.memory_mb * ADDRESS_SPACE_FACTOR * mib}",
        f"--cpu={limits.cpu_seconds}",
        f"--nproc={limits.processes}",
        f"--nofile={limits.open_files}",
        f"--fsize={limits.file_mb * mib}",
        # 1, not 0: the kernel runs a piped core handler (apport, systemd-coredump: root on
        # the host) whatever RLIMIT_CORE is, except 1; and 1 byte is too small for a core file
        "--core=1",
        "--",
        tools.nice,
        "-n",
        str(NICENESS),
        "--",
    ]


def sandboxed(
    bundle: Path,
    command: Sequence[str],
    limits: SandboxLimits = DEFAULT_LIMITS,
    *,
    bwrap: str | None = None,
) -> ChildCommand:
    """``command`` run inside a sandbox around the unpacked submission ``bundle`` (see the module).

    ``bwrap`` is the bubblewrap binary (default: ``bwrap`` on PATH); raises
    SandboxUnavailableError if a tool is missing. :func:`probe` says whether it can run.
    """
    if not command:
        raise ValueError("sandboxed: the command is empty")
    tools = _tools(bwrap)
    python = _python()
    sources = [(os.path.realpath(bundle), BOT_DIR), *python.binds]
    prelude: list[str] = []
    if os.geteuid() == 0:
        prelude, sources = _as_nobody(tools, sources)
    args = [
        tools.bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",  # no nested namespace, so no unbounded tmpfs of the bot's own
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "bot",
        "--clearenv",
        "--setenv",
        "PATH",
        f"{BIN_DIR}:{SYSTEM_PATH}",
        "--setenv",
        "HOME",
        "/tmp",
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--setenv",
        "PYTHONPATH",
        PYTHONPATH_DIR,
        *_system_args(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--remount-ro",
        "/dev",
        "--size",
        str(limits.scratch_mb << 20),
        "--tmpfs",
        "/tmp",
    ]
    for host, inside in sources:
        args += ["--ro-bind", host, inside]
    for folder in python.hidden:
        args += ["--perms", "0555", "--size", "4096", "--tmpfs", folder, "--remount-ro", folder]
    args += ["--symlink", python.executable, f"{BIN_DIR}/python3", "--chdir", BOT_DIR]
    args += ["--remount-ro", "/", "--"]  # bubblewrap's root is a tmpfs: no size cap, so no writes
    argv = (*prelude, *args, *_limit_args(tools, limits), *command)
    return ChildCommand(argv=argv, cwd="/", env={}, run_as=None)


def python_command(entry: str) -> list[str]:
    """The command of a Python submission (``"mybot.py:MyBot"``): the sdk's stdio host."""
    return ["python3", "-m", "domino_arena.sdk.stdio", entry]


def probe(bwrap: str | None = None) -> None:
    """Raise SandboxUnavailableError unless a sandbox starts here (bubblewrap, user namespaces).

    Runs ``true`` in a real sandbox, so what it checks is what the runner will use.
    """
    try:
        limit = int(Path("/proc/sys/user/max_user_namespaces").read_text())
    except (OSError, ValueError):
        limit = -1
    tools = _tools(bwrap)
    if limit == 0:
        raise SandboxUnavailableError(
            "user namespaces are not available: user.max_user_namespaces is 0 "
            "(sysctl -w user.max_user_namespaces=15000)"
        )
    with tempfile.TemporaryDirectory(prefix="domino-arena-probe-") as empty:
        os.chmod(empty, 0o755)
        child = sandboxed(Path(empty), ["true"], DEFAULT_LIMITS, bwrap=tools.bwrap)
        try:
            done = subprocess.run(
                child.argv,
                cwd=child.cwd,
                env=dict(child.env or {}),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise SandboxUnavailableError(f"the sandbox does not start: {error}") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"]
        reason = lines[-1][:200].encode("unicode_escape").decode("ascii")
        if reason.startswith(("unshare:", "mount:")):  # root's staging of what nobody can't read
            raise SandboxUnavailableError(
                f"the sandbox cannot mount the files nobody may read: {reason} (make "
                f"{sys.base_prefix} and the submissions readable by all, or give the runner "
                "CAP_SYS_ADMIN)"
            )
        raise SandboxUnavailableError(
            f"user namespaces are not available: {reason} (exit {done.returncode}; "
            "allow unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1)"
        )
