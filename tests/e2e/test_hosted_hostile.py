"""Hostile submissions, hosted for real (issue 30, docs/hosting.md).

Each test stores a real submission, lets a runner host it in a real bubblewrap sandbox and plays
it through the real referee against a raw bot, while two other raw bots play a match of their
own: once on a single referee running its own runner, once on a cluster (a match host, a
gateway and a runner, each its own process). Each asserts that the bot is contained (what it
tried failed, and the kept log says so), that its seat is faulted with a clear reason where it
misbehaved, and that the other match carried on unharmed: played to its end with no fault
charged to anybody.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

import pytest

from domino_arena.server.store import hosted
from domino_arena.server.store.bots import create_bot
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.hosted import HostedArena, python_bot
from tests.fakes.hosted_cluster import ClusterHostedArena
from tests.fakes.referee_server import ALL_GAMES, first_legal

OPPONENT: Final = "opponent"
PEERS: Final = ("peer-a", "peer-b")
SECRET: Final = "the-referee-secret-0f9e"
"""An environment variable of the referee's process that no sandbox may see."""

pytestmark = pytest.mark.skipif(
    not Path("/usr/bin/bwrap").exists(), reason="bubblewrap is not installed"
)


@pytest.fixture(scope="module", params=["single referee", "cluster"])
def arena(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[HostedArena]:
    """A single referee running its own runner, or a cluster's host, gateway and runner."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DOMINO_ARENA_TEST_SECRET", SECRET)  # the referee's (or runner's) own
        folder = tmp_path_factory.mktemp("hosted")
        arena = HostedArena(folder) if request.param != "cluster" else ClusterHostedArena(folder)
        try:
            engine = arena.storage.engine
            for name in (OPPONENT, *PEERS):
                token = create_bot(engine, name).token
                arena.referee.connect(name, token, first_legal, ALL_GAMES)
            yield arena
        finally:
            arena.close()


def beside_a_peer_match(
    arena: HostedArena, play: Callable[[], admin_pb.RunMatchResponse]
) -> admin_pb.RunMatchResponse:
    """Run ``play`` while the peers play a match of theirs; assert theirs was unharmed."""
    peer: list[admin_pb.RunMatchResponse] = []
    thread = threading.Thread(
        target=lambda: peer.append(arena.match(*PEERS, move_ms=1_000, seed=5)), daemon=True
    )
    thread.start()
    played = play()
    thread.join()
    assert peer, "the peers' match did not end"
    result = peer[0].result
    assert result.termination in (pb.TERMINATION_NORMAL, pb.TERMINATION_ADJUDICATED), result
    assert result.faulted_seat == -1, f"a peer was faulted beside a hostile bot: {result}"
    return played


def faulted(response: admin_pb.RunMatchResponse, kind: pb.FaultKind.ValueType) -> str:
    """Assert seat 0 (the hosted bot) forfeited with a fault of ``kind``; return the detail."""
    result = response.result
    assert result.termination == pb.TERMINATION_FORFEIT, result
    assert result.faulted_seat == 0 and result.fault == kind, result
    return result.detail


def test_a_fork_bomb_is_held_to_its_process_limit_and_stopped(arena: HostedArena) -> None:
    arena.host(
        "forker",
        python_bot(
            """
            refused = 0
            for _ in range(10_000):
                try:
                    if os.fork() == 0:
                        signal.pause()
                except OSError:
                    refused += 1
            print(f"forks refused: {refused}", file=sys.stderr, flush=True)
            while True:
                try:
                    os.fork()
                except OSError:
                    pass
            """
        ),
    )
    played = beside_a_peer_match(arena, lambda: arena.match("forker", OPPONENT, move_ms=1_500))
    assert "move" in faulted(played, pb.FAULT_KIND_TIMEOUT)
    log = arena.log(played.match_id, "forker")
    refused = int(log.text.split("forks refused: ")[1].split()[0])
    assert refused > 9_000, log.text  # the limit (32 processes) refused all but a few
    arena.wait_no_sandbox()  # the idle stop killed the whole pid namespace


def test_ten_gigabytes_are_refused_as_a_memory_error_of_the_bot(arena: HostedArena) -> None:
    arena.host("glutton", python_bot("block = bytearray(10 * 1024**3)\nreturn None"))
    played = beside_a_peer_match(arena, lambda: arena.match("glutton", OPPONENT))
    assert "MemoryError" in faulted(played, pb.FAULT_KIND_BOT_ERROR)


def test_a_busy_loop_that_ignores_the_clock_times_out(arena: HostedArena) -> None:
    arena.host("spinner", python_bot("while True:\n    pass"))
    played = beside_a_peer_match(arena, lambda: arena.match("spinner", OPPONENT, move_ms=300))
    faulted(played, pb.FAULT_KIND_TIMEOUT)


def test_no_network_reaches_postgresql_the_referee_or_a_public_name(arena: HostedArena) -> None:
    port = arena.referee.port
    arena.host(
        "dialer",
        python_bot(
            f"""
            for where in (("127.0.0.1", 5432), ("127.0.0.1", {port})):
                try:
                    socket.create_connection(where, timeout=2).close()
                    print(f"CONNECTED {{where}}", file=sys.stderr)
                except OSError as error:
                    print(f"refused {{where}}: {{type(error).__name__}}", file=sys.stderr)
            try:
                socket.getaddrinfo("example.com", 443)
                print("RESOLVED example.com", file=sys.stderr)
            except OSError as error:
                print(f"no name: {{type(error).__name__}}", file=sys.stderr)
            return observation.legal_actions[0]
            """
        ),
    )
    played = beside_a_peer_match(arena, lambda: arena.match("dialer", OPPONENT))
    assert played.result.faulted_seat == -1, played.result
    text = arena.log(played.match_id, "dialer").text
    assert "CONNECTED" not in text and "RESOLVED" not in text, text
    assert text.count("refused (") >= 2 and "no name:" in text, text


def test_nothing_of_the_referee_or_of_other_bots_is_readable(arena: HostedArena) -> None:
    arena.host("neighbour", python_bot("return observation.legal_actions[0]"))
    arena.match("neighbour", OPPONENT)  # its files are unpacked for its sandbox
    bundles = sorted(str(p) for p in (arena.workdir / "bundles").glob("*"))
    assert bundles
    targets = [str(arena.database), *bundles, str(arena.workdir)]
    arena.host(
        "snoop",
        python_bot(
            f"""
            for path in {targets!r}:
                try:
                    with open(path, "rb") as opened:
                        opened.read(1)
                    print(f"READ {{path}}", file=sys.stderr)
                except OSError as error:
                    print(f"denied {{type(error).__name__}}", file=sys.stderr)
            with open("/proc/1/environ", "rb") as init:  # its own pid namespace's first process
                seen = init.read().decode(errors="replace")
            print("init secret" if {SECRET!r} in seen else "init clean", file=sys.stderr)
            others = [p for p in os.listdir("/proc") if p.isdigit()]
            print(f"pids {{sorted(map(int, others))}}", file=sys.stderr)
            print(f"env {{sorted(os.environ)}}", file=sys.stderr)
            print("secret" if any({SECRET!r} in v for v in os.environ.values()) else "clean",
                  file=sys.stderr)
            return observation.legal_actions[0]
            """
        ),
    )
    played = beside_a_peer_match(arena, lambda: arena.match("snoop", OPPONENT))
    text = arena.log(played.match_id, "snoop").text
    assert "READ" not in text and text.count("denied") >= len(targets), text
    pids = eval(text.split("pids ")[1].splitlines()[0])  # a list of ints the bot printed
    assert max(pids) < 10, f"the bot sees processes outside its sandbox: {pids}"
    assert "init clean" in text and "init secret" not in text, text
    assert "\nclean" in text and "DOMINO_ARENA" not in text, text


def test_a_full_scratch_and_a_gigabyte_of_stderr_are_bounded(arena: HostedArena) -> None:
    arena.host(
        "writer",
        python_bot(
            """
            written = 0
            chunk = b"x" * (1 << 20)
            try:  # files of 8 MiB (under the file size limit) until the scratch is full
                for number in range(10 * 1024 // 8):
                    with open(f"/tmp/fill{number}", "wb") as out:
                        for _ in range(8):
                            out.write(chunk)
                            written += len(chunk)
            except OSError as error:
                print(f"scratch stopped at {written >> 20} MiB: {type(error).__name__}",
                      file=sys.stderr, flush=True)
            for name in os.listdir("/tmp"):
                os.remove(f"/tmp/{name}")
            if not getattr(self, "flooded", False):  # one gigabyte, at its first move only
                self.flooded = True
                line = b"y" * 65535 + b"\\n"
                for _ in range(16 * 1024):
                    os.write(2, line)
            return observation.legal_actions[0]
            """
        ),
    )
    played = beside_a_peer_match(arena, lambda: arena.match("writer", OPPONENT, move_ms=60_000))
    log = arena.log(played.match_id, "writer")
    assert "scratch stopped at" in log.text, log.text[:500]
    stopped_at = int(log.text.split("scratch stopped at ")[1].split()[0])
    assert 32 <= stopped_at <= 64, log.text[:500]  # the 64 MiB scratch, less what Python holds
    assert len(log.text.encode()) < 66 * 1024
    assert "more bytes of stderr not kept" in log.text


def test_a_bot_that_ignores_sigterm_is_killed_when_idle(arena: HostedArena) -> None:
    arena.host(
        "stubborn",
        python_bot(
            "return observation.legal_actions[0]",
            header="signal.signal(signal.SIGTERM, signal.SIG_IGN)",
        ),
    )
    first = beside_a_peer_match(arena, lambda: arena.match("stubborn", OPPONENT))
    assert first.result.faulted_seat == -1, first.result
    arena.wait_no_sandbox()  # SIGTERM ignored: SIGKILL after the grace
    again = arena.match("stubborn", OPPONENT)  # started anew for the next match
    assert again.result.faulted_seat == -1, again.result


@pytest.mark.parametrize(
    ("name", "answer", "reason"),
    [
        ("garbler", "print('this is not json', flush=True)", "not JSON"),
        ("stranger", "print('{\"greeting\": 1}', flush=True)", "BotMessage"),
        ("flooder", "sys.stdout.write('z' * (100 * 1024 * 1024)); sys.stdout.flush()", "longer"),
    ],
)
def test_stdio_lines_that_are_not_messages_fault_the_seat(
    arena: HostedArena, name: str, answer: str, reason: str
) -> None:
    script = (
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    message = json.loads(line)\n"
        "    if 'request' in message:\n"
        f"        {answer}\n"
    )
    arena.host(name, {"bot.py": script}, command="python3 bot.py")
    played = beside_a_peer_match(arena, lambda: arena.match(name, OPPONENT))
    result = played.result
    assert result.termination == pb.TERMINATION_FORFEIT and result.faulted_seat == 0, result
    assert result.fault in (pb.FAULT_KIND_MALFORMED, pb.FAULT_KIND_DISCONNECTED), result
    assert reason in arena.log(played.match_id, name).text


def test_a_version_that_crashes_three_matches_in_a_row_is_suspended(arena: HostedArena) -> None:
    number = arena.host("crasher", python_bot("os._exit(3)"))
    for _ in range(hosted.SUSPEND_AFTER_CRASHES):
        played = arena.match("crasher", OPPONENT)
        assert played.result.faulted_seat == 0, played.result
        assert "exit code 3" in arena.log(played.match_id, "crasher").text
    suspended = arena.wait_status("crasher", number, "suspended")
    assert "crash" in suspended.report
    arena.wait_connected("crasher", connected=False)


def test_the_validator_rejects_a_failing_version_with_its_report(arena: HostedArena) -> None:
    rejected = arena.submit("broken", python_bot("raise ValueError('no idea')"), accepted=None)
    version = arena.wait_status("broken", rejected, "rejected")
    assert "ValueError" in version.report and "no idea" in version.report
    good = arena.submit("broken", python_bot("return observation.legal_actions[0]"), accepted=None)
    arena.wait_status("broken", good, "accepted")
    arena.wait_connected("broken")
