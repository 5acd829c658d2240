"""The container settings hosted bots need (deploy/compose.yaml's referee), tried with bubblewrap.

No Docker daemon runs here, so what Docker would apply to the referee is applied by hand: the
seccomp profile compose gives it (deploy/seccomp-bubblewrap.json, loaded with libseccomp as
Docker loads a profile for a process without capabilities), the image's user, no capability and
no_new_privs; then real bubblewrap builds a sandbox like the runner's (its own user, pid, net,
ipc, uts and mount namespaces, a new /proc, a tmpfs, rlimits through prlimit). Each call the
profile opens beyond Docker's default is needed, and a /proc with a masked file (Docker's
default, which ``systempaths=unconfined`` undoes) stops bubblewrap. AppArmor's share (Docker's
docker-default denies mounts) needs a host with AppArmor: not tried here (docs/deploy.md).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any, Final

import pytest

ROOT: Final = Path(__file__).resolve().parents[2]
PROFILE: Final = ROOT / "deploy" / "seccomp-bubblewrap.json"
SYSTEM_PYTHON: Final = "/usr/bin/python3"
"""Debian's Python, which has libseccomp's binding (python3-seccomp); the venv has none."""
IMAGE_UID: Final = 10001
OPENED: Final = ("clone", "unshare", "mount", "umount2", "pivot_root")
DOCKER_MASKED: Final = ("/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug")
"""Files Docker hides in every container's /proc (a bind of /dev/null over each)."""

LOADER: Final = """
import json, os, sys, seccomp
profile, uid, *command = sys.argv[1:]
data = json.load(open(profile))
rules = seccomp.SyscallFilter(defaction=seccomp.ERRNO(data["defaultErrnoRet"]))
ops = {"SCMP_CMP_" + n: getattr(seccomp, n) for n in ("EQ", "NE", "LT", "LE", "GT", "GE")}
ops["SCMP_CMP_MASKED_EQ"] = seccomp.MASKED_EQ
for rule in data["syscalls"]:
    includes, excludes = rule.get("includes", {}), rule.get("excludes", {})
    if includes.get("caps") or "amd64" not in includes.get("arches", ["amd64"]):
        continue  # kept for a capability this process lacks, or another architecture
    if "amd64" in excludes.get("arches", []):
        continue
    if rule["action"] == "SCMP_ACT_ALLOW":
        action = seccomp.ALLOW
    else:
        action = seccomp.ERRNO(rule["errnoRet"])
    args = []
    for a in rule.get("args") or []:
        extra = [a.get("valueTwo", 0)] if a["op"] == "SCMP_CMP_MASKED_EQ" else []
        args.append(seccomp.Arg(a["index"], ops[a["op"]], a["value"], *extra))
    for name in rule["names"]:
        try:
            rules.add_rule(action, name, *args)
        except (RuntimeError, ValueError, OSError):
            pass  # a call this libseccomp or architecture does not know
if os.getuid() == 0:
    os.setgroups([])
    os.setgid(int(uid))
    os.setuid(int(uid))
rules.load()  # sets no_new_privs first, as Docker does
os.execvp(command[0], command)
"""


def sandbox_command() -> list[str]:
    """bubblewrap as the runner uses it: every namespace, a read-only system, a new /proc, a
    tmpfs scratch, rlimits set inside with prlimit."""
    return [
        "bwrap",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--chdir",
        "/tmp",
        "prlimit",
        "--as=536870912",
        "--nofile=64",
        "--",
        "sh",
        "-c",
        "echo sandboxed",
    ]


@cache
def missing() -> str:
    """Why these tests cannot run here ("" when they can)."""
    if shutil.which("bwrap") is None or shutil.which("prlimit") is None:
        return "bubblewrap or prlimit is not installed"
    if not Path(SYSTEM_PYTHON).is_file():
        return f"{SYSTEM_PYTHON} is missing"
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import seccomp"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        return "libseccomp's Python binding is missing (apt-get install python3-seccomp)"
    bare = subprocess.run(sandbox_command(), capture_output=True, text=True, check=False)
    if bare.returncode != 0:
        return f"bubblewrap does not work here at all: {bare.stderr.strip()}"
    return ""


@pytest.fixture(autouse=True)
def _runnable() -> None:
    if reason := missing():
        pytest.skip(reason)


def under(profile: Path, *, wrap: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """The sandbox command under ``profile``, as the image's user when run as root; ``wrap``
    runs before it (it ends by executing its arguments)."""
    command = [*wrap, SYSTEM_PYTHON, "-c", LOADER, str(profile), str(IMAGE_UID)]
    return subprocess.run(
        [*command, *sandbox_command()], capture_output=True, text=True, timeout=60, check=False
    )


def profile_without(name: str, into: Path) -> Path:
    data: dict[str, Any] = json.loads(PROFILE.read_text(encoding="utf-8"))
    (opened,) = [rule for rule in data["syscalls"] if "comment" in rule and not rule.get("args")]
    assert name in opened["names"]
    opened["names"].remove(name)
    path = into / f"without-{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_bubblewrap_builds_its_sandbox_under_the_referees_profile() -> None:
    done = under(PROFILE)
    assert (done.returncode, done.stdout) == (0, "sandboxed\n"), done.stderr


@pytest.mark.parametrize("name", OPENED)
def test_each_call_the_profile_opens_is_one_bubblewrap_needs(name: str, tmp_path: Path) -> None:
    done = under(profile_without(name, tmp_path))
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.startswith("bwrap: "), done.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="hiding a file of /proc needs root")
def test_a_proc_with_a_hidden_file_stops_bubblewrap() -> None:
    """What ``systempaths=unconfined`` is for: the kernel refuses a new /proc in a user
    namespace while the container's own has a file covered ("mount too revealing")."""
    hidden = next((path for path in DOCKER_MASKED if Path(path).exists()), None)
    if hidden is None:
        pytest.skip(f"none of {DOCKER_MASKED} exists on this kernel")
    hide = f'mount --bind /dev/null {hidden} && exec "$@"'
    done = under(
        PROFILE, wrap=("unshare", "--mount", "--propagation", "private", "sh", "-c", hide, "sh")
    )
    assert done.returncode != 0
    assert "Can't mount proc" in done.stderr, done.stderr
