"""The bots' launcher (bots/launcher.py): one interpreter start, one forked process per bot, each
with its own standard input and log, each reaped and reported with its exit status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest

from domino_arena.bots.launcher import SpecError, parse_specs


def test_each_bot_is_its_own_process_with_its_own_input_log_and_status() -> None:
    logs = [tempfile.TemporaryFile("w+") for _ in range(2)]  # noqa: SIM115
    pipes = [os.pipe() for _ in range(2)]
    specs = [
        {"argv": ["alice", "--from-stdin"], "stdin": pipes[0][0], "log": logs[0].fileno()},
        {
            "argv": ["bob", "--from-stdin", "--games", "chess"],
            "stdin": pipes[1][0],
            "log": logs[1].fileno(),
        },
    ]
    passed = [read_end for read_end, _ in pipes] + [log.fileno() for log in logs]
    launcher = subprocess.Popen(
        [sys.executable, "-m", "domino_arena.bots.launcher", json.dumps(specs)],
        stdout=subprocess.PIPE,
        text=True,
        pass_fds=passed,
    )
    for read_end, _ in pipes:
        os.close(read_end)
    os.write(pipes[0][1], b"127.0.0.1:1\n")  # no token: alice stops at once
    os.write(pipes[1][1], b"127.0.0.1:1\nsecret\n")  # an unknown game: bob stops at once
    for _, write_end in pipes:
        os.close(write_end)
    out, _ = launcher.communicate(timeout=60)
    assert launcher.returncode == 0
    lines = [line.split() for line in out.splitlines()]
    started = {int(index): int(pid) for word, index, pid in lines if word == "started"}
    exited = {int(pid): int(code) for word, pid, code in lines if word == "exited"}
    assert set(started) == {0, 1} and len(set(started.values())) == 2
    assert launcher.pid not in started.values()
    assert exited == {started[0]: 2, started[1]: 1}
    texts = []
    for log in logs:
        log.seek(0)
        texts.append(log.read())
        log.close()
    assert "--from-stdin: expected HOST:PORT and the token, one line each" in texts[0]
    assert "chess" in texts[1] and "alice" not in texts[1]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{", "not JSON"),
        ("[]", "expected a non-empty JSON list of bots"),
        ('[{"argv": ["a"], "stdin": 0}]', "bot 0: expected"),
        ('[{"argv": "a", "stdin": 0, "log": 1}]', "bot 0: expected"),
    ],
)
def test_bad_specs_are_refused_with_the_reason(text: str, words: str) -> None:
    with pytest.raises(SpecError, match=words):
        parse_specs(text)
    done = subprocess.run(
        [sys.executable, "-m", "domino_arena.bots.launcher", text],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and words in done.stderr
