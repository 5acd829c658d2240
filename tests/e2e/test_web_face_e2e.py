"""The web face beside a referee command: ``serve`` and ``round-robin`` start it as a child
process on a socket they bound, it dies with them, and a newcomer's ``round-robin --web`` ends
with a page of the standings and every game replayable."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from domino_arena.server.cli import main_job, web_face
from domino_arena.server.cli.arguments import CliError
from domino_arena.server.ladder.ratings_store import RatedStorage
from tests.fakes.processes import Process, command, served_port


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200, url
        return json.loads(response.read())


def get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200, url
        text: str = response.read().decode("utf-8")
        return text


def web_url(process: Process) -> str:
    line = process.wait_line("web face on http://")
    return line.split("web face on ", 1)[1].split()[0]


def web_children(parent: int) -> list[int]:
    """The ``domino-arena web`` processes whose parent is ``parent``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"web" in cmdline and b"--socket-fd" in cmdline:
            found.append(int(entry.name))
    return found


def wait_gone(pid: int) -> None:
    """Wait (by pidfd, no polling) for ``pid`` to exit; fail after 30 s."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        ready, _, _ = select.select([fd], [], [], 30)
        assert ready, f"process {pid} still runs"
    finally:
        os.close(fd)


def test_serve_starts_the_web_face_and_it_dies_with_the_referee_even_on_sigkill(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    referee = Process(command("serve", "--port", "0", "--db", url, "--web-port", "0"), tmp_path)
    try:
        served_port(referee)
        site = web_url(referee)
        assert "Domino Arena" in get_text(site)
        assert get_json(site + "api/tournaments")["tournaments"] == []
        (child,) = web_children(referee.popen.pid)
        referee.popen.send_signal(signal.SIGKILL)
        referee.popen.wait(30)
        wait_gone(child)  # its lifeline pipe read end-of-file
    finally:
        referee.stop()
    port = int(site.rsplit(":", 1)[1].strip("/"))
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", port))  # nobody holds the web face's port any more


def test_serve_no_web_serves_no_pages(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    referee = Process(command("serve", "--port", "0", "--db", url, "--no-web"), tmp_path)
    try:
        served_port(referee)
        assert web_children(referee.popen.pid) == []
        assert not any("web face" in line for line in referee.lines)
    finally:
        referee.stop()


def test_a_web_port_asked_for_and_taken_is_one_clear_error(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        url = f"sqlite:///{tmp_path / 'arena.db'}"
        args = command("serve", "--port", "0", "--db", url, "--web-port", str(port))
        code, output = Process(args, tmp_path).finish()
    assert code == 2, output
    assert f"--web-host/--web-port: cannot listen on 127.0.0.1:{port}: " in output


def test_web_port_and_no_web_together_are_refused(tmp_path: Path) -> None:
    args = command("serve", "--port", "0", "--no-web", "--web-port", "0")
    code, output = Process(args, tmp_path).finish()
    assert code == 2
    assert "--web-port and --no-web contradict each other" in output


def test_the_default_port_taken_means_no_web_face_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        monkeypatch.setattr(web_face, "DEFAULT_PORT", holder.getsockname()[1])
        sock, why = web_face.bind_default("127.0.0.1", None)
        assert sock is None
        assert why is not None and "is taken (give --web-port PORT" in why
        with pytest.raises(CliError, match="--web-host/--web-port: cannot listen"):
            web_face.bind_default("127.0.0.1", holder.getsockname()[1])


def test_round_robin_web_ends_in_a_site_with_the_standings_and_every_game_replayable(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'rr.db'}"
    args = command(
        "round-robin",
        "--games",
        "straight,doubles",
        "--bots",
        "greedy-1,random-1",
        "--games-per-pairing",
        "1",
        "--db",
        db,
        "--web",
        "--web-port",
        "0",
    )
    job = Process(args, tmp_path, wait=240)
    try:
        site = web_url(job)
        job.wait_line("stays up on")
        storage = RatedStorage(db)
        storage.open()
        try:
            stored = storage.matches(1000, records=False)
            ratings = {game: storage.ratings(game) for game in ("straight", "doubles")}
        finally:
            storage.close()
        assert len(stored) == 4
        for game, rated in ratings.items():
            page = get_json(f"{site}api/games/{game}/standings")
            shown = {row["bot"]: (row["games"], round(row["rating"], 6)) for row in page["rows"]}
            assert shown == {b: (r.games, round(r.rating, 6)) for b, r in rated.items()}
            assert "greedy-1" in get_text(f"{site}games/{game}/standings")
        listed = get_json(f"{site}api/matches?per_page=100")["matches"]
        assert {m["id"] for m in listed} == {m.id for m in stored}
        for match in listed:
            replay = get_json(f"{site}api/matches/{match['id']}")
            assert replay["no_replay"] is None, replay["no_replay"]
            assert replay["replay"]["step"] == replay["replay"]["total"] > 0
        (child,) = web_children(job.popen.pid)
        # The web face yields the CPU to the referee and the bots while they play.
        wanted = min(19, os.getpriority(os.PRIO_PROCESS, job.popen.pid) + main_job.WEB_NICENESS)
        assert os.getpriority(os.PRIO_PROCESS, child) == wanted
        job.popen.send_signal(signal.SIGINT)
        code, output = job.finish()
        assert code == 0, output
        wait_gone(child)
    finally:
        job.stop()
