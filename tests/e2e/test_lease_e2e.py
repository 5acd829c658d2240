"""Two ``serve`` processes on one SQLite file: the second exits 1 naming the first."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tests.fakes.processes import Process, command, served_port


def test_a_second_referee_on_the_same_database_exits_1_naming_the_first(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    first = Process(command("serve", "--port", "0", "--db", url), tmp_path)
    try:
        served_port(first)
        second = Process(command("serve", "--port", "0", "--db", url), tmp_path)
        code, output = second.finish()
        assert code == 1, output
        assert f"another referee (host {os.uname().nodename}, pid {first.popen.pid}) " in output
        assert output.endswith("; stop it or wait")
        first.popen.send_signal(signal.SIGTERM)
        first.wait_line("stopped")
        third = Process(command("serve", "--port", "0", "--db", url), tmp_path)
        try:
            served_port(third)  # the first released the lease at its clean shutdown
        finally:
            third.stop()
    finally:
        first.stop()
