"""Hostile programs in a real bubblewrap sandbox: each is contained, and says so (docs/hosting.md).

Every test runs a small program inside ``sandboxed(...)`` that tries what a hostile submission
would (reach the network, read the referee's files, fork without end, allocate or write without
end, spin, ignore SIGTERM) and prints what happened as JSON; the test asserts it failed the way
the sandbox promises, with the sandbox's own output in the failure message.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

from domino_arena.server.hosting import sandbox
from domino_arena.server.hosting.sandbox import (
    INSTALL_HINT,
    SandboxUnavailableError,
    probe,
    python_command,
    sandboxed,
)
from domino_arena.server.hosting.spec.limits import SandboxLimits
from tests.fakes.sandboxed import Ran, bundle, in_namespace, inside, run, spawn, wait_gone

FAST = SandboxLimits(cpu_seconds=10)


def run_python(
    tmp_path: Path, code: str, limits: SandboxLimits = FAST, files: dict[str, str] | None = None
) -> tuple[Ran, dict[str, Any]]:
    """``code`` run by the sandbox's python3 as /bot/main.py; its last stdout line as JSON."""
    folder = bundle(tmp_path, {"main.py": textwrap.dedent(code), **(files or {})})
    ran = run(sandboxed(folder, ["python3", "main.py"], limits))
    lines = ran.stdout.strip().splitlines()
    try:
        return ran, json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        raise AssertionError(f"the sandboxed program printed no JSON:\n{ran.explain()}") from None


def test_the_probe_passes_here() -> None:
    probe()


def test_no_network_not_even_the_hosts_postgresql_or_dns(tmp_path: Path) -> None:
    with socket.create_connection(("127.0.0.1", 5432), timeout=2):
        pass  # the host's PostgreSQL is there, so a refusal inside means something
    ran, out = run_python(
        tmp_path,
        """
        import json, socket
        out = {}
        try:
            socket.create_connection(("127.0.0.1", 5432), timeout=1)
            out["tcp"] = "connected"
        except OSError as error:
            out["tcp"] = repr(error)
        try:
            out["dns"] = repr(socket.getaddrinfo("deb.debian.org", 443))
        except OSError as error:
            out["dns"] = "failed: " + repr(error)
        out["interfaces"] = [name for _, name in socket.if_nameindex()]
        print(json.dumps(out))
        """,
    )
    assert out["tcp"] != "connected", f"connected to the host's PostgreSQL:\n{ran.explain()}"
    assert out["dns"].startswith("failed"), f"resolved a public name: {out['dns']}"
    assert out["interfaces"] == ["lo"], f"interfaces other than a loopback: {out['interfaces']}"


def test_nothing_of_the_host_is_readable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", "admin-secret")
    database = tmp_path / "arena.sqlite3"
    database.write_text("referee secret")
    other = bundle(tmp_path / "other", {"secret.txt": "another submission's secret"})
    paths = [str(database), str(other / "secret.txt"), str(other), os.getcwd(), sys.prefix]
    paths += ["/proc/1/environ", "/etc/passwd", "/root", "/work"]
    _, out = run_python(
        tmp_path / "mine",
        """
        import json, os
        out = {}
        for path in json.load(open("paths.json")):
            try:
                with open(path, "rb") as f:
                    out[path] = f.read().decode("utf-8", "replace")
            except OSError as error:
                out[path] = type(error).__name__
        out["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        print(json.dumps(out))
        """,
        files={"paths.json": json.dumps(paths)},
    )
    pids = out.pop("pids")
    init = out.pop("/proc/1/environ")  # the sandbox's own init (bubblewrap), not the host's
    assert "secret" not in init and set(init.split("\0")) <= {"PWD=/", ""}, f"init: {init!r}"
    for path, seen in out.items():
        assert "secret" not in seen, f"{path} was readable in the sandbox: {seen!r}"
        assert seen in {"FileNotFoundError", "IsADirectoryError", ""}, f"{path}: {seen!r}"
    assert len(pids) <= 3, f"the sandbox sees processes other than its own: {pids}"


def test_the_environment_is_empty_of_the_referees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", "admin-secret")
    ran, out = run_python(tmp_path, "import json, os; print(json.dumps(dict(os.environ)))")
    assert "admin-secret" not in ran.stdout, ran.explain()
    assert set(out) <= {"PATH", "HOME", "LANG", "PYTHONPATH", "PWD"}, f"environment: {out}"
    assert out["HOME"] == "/tmp"


def test_the_system_and_the_submission_are_read_only(tmp_path: Path) -> None:
    ran, out = run_python(
        tmp_path,
        """
        import json, os
        out = {}
        for path in ["/bot/x", "/x", "/usr/x", "/etc/x", "/dev/x", "/opt/domino-arena/x"]:
            try:
                open(path, "w").close()
                out[path] = "written"
            except OSError as error:
                out[path] = type(error).__name__
        open("/tmp/scratch", "w").write("ok")
        out["scratch"] = open("/tmp/scratch").read()
        out["uid"] = os.getuid()
        print(json.dumps(out))
        """,
    )
    assert out.pop("scratch") == "ok", ran.explain()
    assert out.pop("uid") != 0, "the bot runs as root in its namespace"
    for path, result in out.items():
        assert result in {"OSError", "PermissionError"}, f"{path} was writable: {result}"


def test_no_nested_user_namespace(tmp_path: Path) -> None:
    folder = bundle(tmp_path, {})
    ran = run(sandboxed(folder, ["unshare", "--user", "--map-root-user", "true"], FAST))
    assert ran.returncode != 0, f"a nested user namespace was made:\n{ran.explain()}"


FORK_BOMB = """
import errno, json, os, signal, sys
children = 0
try:
    while children < 1000:
        if os.fork() == 0:
            signal.pause()
        children += 1
    out = {"children": children, "error": None}
except OSError as error:
    out = {"children": children, "error": errno.errorcode[error.errno]}
print(json.dumps(out), flush=True)
if sys.argv[1:] == ["stay"]:
    signal.pause()
"""


def test_a_fork_bomb_stops_at_the_process_limit_of_its_own_sandbox(tmp_path: Path) -> None:
    limits = SandboxLimits(processes=8, cpu_seconds=10)
    folder = bundle(tmp_path, {"bomb.py": FORK_BOMB})
    bomb = spawn(sandboxed(folder, ["python3", "bomb.py", "stay"], limits))
    try:
        assert bomb.stdout is not None
        held = json.loads(bomb.stdout.readline() or "{}")
        assert held.get("error") == "EAGAIN", f"forking never failed: {held}"
        assert held["children"] < limits.processes, f"{held['children']} children forked"
        # While the first bomb holds every process it may, another sandbox of the same host user
        # forks as many as its own limit allows, and ends by itself with all its children.
        ran = run(sandboxed(folder, ["python3", "bomb.py"], limits))
        assert ran.returncode == 0, f"the second sandbox did not end by itself:\n{ran.explain()}"
        second = json.loads(ran.stdout)
        assert second == held, f"the sandboxes share a process count: {second} != {held}"
    finally:
        os.killpg(bomb.pid, signal.SIGKILL)
        bomb.wait()


def test_memory_beyond_the_limit_cannot_be_allocated(tmp_path: Path) -> None:
    ran, out = run_python(
        tmp_path,
        """
        import json, mmap
        out = {}
        for name, size in [("10 GiB", 10 << 30), ("1 GiB", 1 << 30), ("256 MiB", 256 << 20)]:
            try:
                block = bytearray(size)
                out[name] = "allocated"
                del block
            except MemoryError:
                out[name] = "MemoryError"
        try:  # shared memory is not private data: the address space bounds it
            shared = mmap.mmap(-1, 5 << 30, flags=mmap.MAP_SHARED)
            out["5 GiB shared"] = "mapped"
        except OSError as error:
            out["5 GiB shared"] = type(error).__name__
        print(json.dumps(out))
        """,
    )
    assert out == {
        "10 GiB": "MemoryError",
        "1 GiB": "MemoryError",
        "256 MiB": "allocated",
        "5 GiB shared": "OSError",
    }, ran.explain()


def test_runtimes_that_reserve_address_space_start_under_the_default_limits(
    tmp_path: Path,
) -> None:
    """Node.js reserves about 1 GB of address space (Go 768 MB) and uses a fraction of it."""
    node = shutil.which("node")
    assert node is not None, "Node.js comes with the machine (.ci/run)"
    folder = bundle(tmp_path, {"bot.js": "console.log('started')\n"})
    ran = run(sandboxed(folder, ["node", "bot.js"], SandboxLimits(cpu_seconds=10)))
    assert ran.stdout == "started\n", ran.explain()


WRITE = """
import errno, json, os
fd = os.open("/tmp/fill", os.O_WRONLY | os.O_CREAT)
written, block = 0, b"x" * (1 << 20)
try:
    while written < (10 << 30):
        written += os.write(fd, block)
    error = None
except OSError as failed:
    error = errno.errorcode[failed.errno]
print(json.dumps({"written": written, "error": error}))
"""


def test_the_scratch_is_capped(tmp_path: Path) -> None:
    ran, out = run_python(tmp_path, WRITE, SandboxLimits(scratch_mb=8, file_mb=64))
    assert out["error"] == "ENOSPC", ran.explain()
    assert out["written"] <= 8 << 20, f"{out['written']} bytes written to an 8 MB scratch"


def test_a_file_is_capped(tmp_path: Path) -> None:
    ran, out = run_python(tmp_path, WRITE, SandboxLimits(scratch_mb=64, file_mb=4))
    assert out["error"] == "EFBIG", ran.explain()
    assert out["written"] == 4 << 20, f"{out['written']} bytes in a file capped at 4 MB"


def test_a_busy_loop_is_killed_by_the_cpu_limit(tmp_path: Path) -> None:
    folder = bundle(tmp_path, {"spin.py": "while True:\n    pass\n"})
    ran = run(sandboxed(folder, ["python3", "spin.py"], SandboxLimits(cpu_seconds=1)))
    assert ran.returncode == 128 + signal.SIGKILL, f"not killed by SIGKILL:\n{ran.explain()}"
    # Only RLIMIT_CPU's SIGKILL ends it (its wall time depends on the machine's load: nice 10)


STUBBORN = """
import os, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
for _ in range(3):
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.pause()
print("ready", flush=True)
signal.pause()
"""


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
def test_stopping_the_sandbox_ends_every_process_in_it(tmp_path: Path, signal_number: int) -> None:
    folder = bundle(tmp_path, {"stubborn.py": STUBBORN})
    process = spawn(sandboxed(folder, ["python3", "stubborn.py"], FAST))
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line == b"ready\n", f"the bot did not start: {line!r} {process.stderr!r}"
        pids = inside(process.pid)
        namespace = os.readlink(f"/proc/{pids[0]}/ns/pid")
        assert len(pids) >= 5, f"expected init, the bot and its 3 children: {pids}"
        os.killpg(process.pid, signal_number)  # what the bridge sends its child's group
        process.wait(timeout=10)
        assert wait_gone(pids) == [], "processes of the sandbox survived"
        assert in_namespace(namespace) == [], "processes of the sandbox survived"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_python_gets_the_sdk_and_protobuf_only(tmp_path: Path) -> None:
    ran, out = run_python(
        tmp_path,
        """
        import importlib, importlib.util, json, sys
        out = {"version": sys.version}
        for name in ["domino_arena.sdk", "domino_arena.sdk.bot", "domino_arena.sdk.wire",
                     "domino_arena.v1.referee_pb2", "google.protobuf.json_format",
                     "domino_arena.server", "domino_arena.bots", "sqlalchemy", "grpc", "trio",
                     "rich", "pip"]:
            try:
                importlib.import_module(name)
                out[name] = "imported"
            except ImportError as error:
                out[name] = type(error).__name__
        from google.protobuf.internal import api_implementation
        out["protobuf"] = api_implementation.Type()
        out["stdio"] = importlib.util.find_spec("domino_arena.sdk.stdio") is not None
        print(json.dumps(out))
        """,
    )
    assert out.pop("version") == sys.version, "not the referee's interpreter"
    assert out.pop("protobuf") == "upb", "protobuf's compiled backend is missing"
    assert out.pop("stdio") is True
    for name in ["domino_arena.sdk", "domino_arena.sdk.bot", "domino_arena.sdk.wire"]:
        assert out.pop(name) == "imported", ran.explain()
    for name in ["domino_arena.v1.referee_pb2", "google.protobuf.json_format"]:
        assert out.pop(name) == "imported", ran.explain()
    for name, result in out.items():
        assert result == "ModuleNotFoundError", f"{name} is importable in the sandbox"


def test_python_command_runs_the_stdio_host() -> None:
    assert python_command("mybot.py:MyBot") == [
        "python3",
        "-m",
        "domino_arena.sdk.stdio",
        "mybot.py:MyBot",
    ]


def test_probe_without_bubblewrap_says_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailableError) as raised:
        probe(bwrap=str(tmp_path / "missing" / "bwrap"))
    assert str(raised.value) == INSTALL_HINT
    with pytest.raises(SandboxUnavailableError):
        sandboxed(tmp_path, ["true"], FAST, bwrap=str(tmp_path / "missing" / "bwrap"))


def test_probe_without_user_namespaces_says_so_in_one_line() -> None:
    with tempfile.TemporaryDirectory(dir="/tmp") as folder:  # nobody reaches it, not tmp_path
        os.chmod(folder, 0o755)
        fake = Path(folder) / "bwrap"
        fake.write_text(
            "#!/bin/sh\necho 'bwrap: No permissions to create new namespace, likely because the"
            " kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
        )
        fake.chmod(0o755)
        with pytest.raises(SandboxUnavailableError) as raised:
            probe(bwrap=str(fake))
    message = str(raised.value)
    assert message.startswith("user namespaces are not available: bwrap: No permissions"), message
    assert "\n" not in message


def test_a_bundle_the_sandbox_user_can_reach_is_bound_directly(tmp_path: Path) -> None:
    """Only what nobody cannot reach is staged by root (one mount each); the rest is bound as is."""
    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        open_bundle = Path(folder) / "bot"
        open_bundle.mkdir(mode=0o755)
        os.chmod(folder, 0o755)
        (open_bundle / "main.py").write_text("print('reached')\n")
        child = sandboxed(open_bundle, ["python3", "main.py"], FAST)
        assert ("--ro-bind", str(open_bundle), "/bot") in zip(
            child.argv, child.argv[1:], child.argv[2:], strict=False
        ), child.argv
        ran = run(child)
        assert ran.stdout == "reached\n", ran.explain()
    private = bundle(tmp_path, {"main.py": "print('reached')\n"})  # under pytest's 0700 folder
    child = sandboxed(private, ["python3", "main.py"], FAST)
    bwrap = child.argv.index(shutil.which("bwrap") or "bwrap")
    assert str(private) in child.argv[:bwrap], "not staged by root"
    assert str(private) not in child.argv[bwrap:], "given to bubblewrap as nobody"
    assert run(child).stdout == "reached\n"


RUNNER = """
import json, subprocess, sys
child = subprocess.Popen(json.loads(sys.argv[1]), env={}, stdout=subprocess.PIPE)
print(child.pid, flush=True)
sys.stdout.write(child.stdout.readline().decode())
sys.stdout.flush()
sys.stdin.read()
"""


def test_a_runner_that_dies_takes_its_sandboxes_with_it(tmp_path: Path) -> None:
    """The runner SIGKILLed (no chance to stop anything): every process of its sandbox ends."""
    folder = bundle(tmp_path, {"stubborn.py": STUBBORN})
    child = sandboxed(folder, ["python3", "stubborn.py"], FAST)
    runner = subprocess.Popen(
        [sys.executable, "-c", RUNNER, json.dumps(child.argv)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert runner.stdout is not None
        sandbox = int(runner.stdout.readline())
        assert runner.stdout.readline() == b"ready\n", "the bot did not start"
        pids = inside(sandbox)
        assert len(pids) >= 5, f"expected init, the bot and its 3 children: {pids}"
        runner.kill()
        runner.wait()
        assert wait_gone([sandbox, *pids]) == [], "processes of the sandbox outlived the runner"
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()


def test_a_root_runner_without_cap_sys_admin_is_told_what_to_fix() -> None:
    """Root's staging of the interpreter nobody cannot read needs CAP_SYS_ADMIN; without it the
    probe says so in one line (run here with the capability out of the bounding set)."""
    setpriv = shutil.which("setpriv")
    assert setpriv is not None
    done = subprocess.run(
        [setpriv, "--bounding-set=-sys_admin", "--", sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        check=False,
    )
    staged = [host for host, _ in sandbox._python().binds if not sandbox._reachable(host)]
    if not staged:  # an interpreter nobody can read (here: pyenv's under /root) is what needs it
        assert done.stdout == "started\n", done.stdout + done.stderr
        return
    assert done.stdout.startswith("the sandbox cannot mount the files nobody may read: "), (
        done.stdout + done.stderr
    )
    assert done.stdout.count("\n") == 1


PROBE = """
from domino_arena.server.hosting.sandbox import SandboxUnavailableError, probe
try:
    probe()
    print("started")
except SandboxUnavailableError as error:
    print(error)
"""


def test_a_crash_leaves_no_core_dump(tmp_path: Path) -> None:
    """RLIMIT_CORE is 1: no core file, and no piped core handler of the host (see the module)."""
    ran, out = run_python(
        tmp_path,
        """
        import json, resource
        print(json.dumps({"core": resource.getrlimit(resource.RLIMIT_CORE)}))
        """,
    )
    assert out["core"] == [1, 1], ran.explain()
    folder = bundle(tmp_path / "crash", {})
    crashed = run(sandboxed(folder, ["python3", "-c", "import os; os.abort()"], FAST))
    assert crashed.returncode == 128 + signal.SIGABRT, crashed.explain()
