"""``serve --role gateway|host`` against a broker that requires TLS and credentials
(tests/fakes/secure_nats.py), as a deployment mistyping a flag meets it: the role exits at
once, before serving, with status 1 for a broker that refuses it and 2 for flags that cannot
be used, and one line naming the flag to fix; no secret appears in its output. The cluster
playing through such a broker is tests/e2e/test_cluster.py's.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from tests.fakes.cluster import WAIT
from tests.fakes.processes import command
from tests.fakes.secure_nats import Auth, SecureNats, secure_nats

GIVE_UP: Final = WAIT
"""Seconds before a role that should have given up is deemed hung (the test then fails)."""


def serve(tmp_path: Path, role: str, *flags: str) -> subprocess.CompletedProcess[str]:
    """Run a role with ``flags`` until it exits (it must)."""
    args = ["serve", "--role", role, "--port", "0", "--cluster", f"t-{uuid.uuid4().hex[:12]}"]
    args += ["--db", f"sqlite:///{tmp_path / 'arena.db'}", *flags]
    return subprocess.run(
        command(*args), cwd=tmp_path, capture_output=True, text=True, timeout=GIVE_UP, check=False
    )


def secret(broker: SecureNats, name: str) -> str:
    return Path(broker.file(name)).read_text().strip()


@pytest.fixture(params=["token", "nkey"])
def broker(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SecureNats]:
    auth: Auth = request.param
    with secure_nats(tmp_path, auth) as running:
        yield running


@pytest.mark.parametrize("role", ["host", "gateway"])
def test_a_role_with_wrong_credentials_exits_1_naming_the_file(
    tmp_path: Path, broker: SecureNats, role: str
) -> None:
    done = serve(tmp_path, role, "--nats", broker.url, *broker.flags("wrong-credential"))
    assert done.returncode == 1, (done.stdout, done.stderr)
    expected = f"refused the credentials of {broker.credential_flag} "
    assert expected in done.stderr, done.stderr
    assert broker.file("wrong-credential") in done.stderr, done.stderr
    for name in ("credential", "wrong-credential"):
        assert secret(broker, name) not in done.stdout + done.stderr
    assert "serving on" not in done.stdout


def test_a_role_without_credentials_is_told_which_flag_gives_them(
    tmp_path: Path, broker: SecureNats
) -> None:
    flags = broker.flags()[2:]  # the TLS files alone
    done = serve(tmp_path, "gateway", "--nats", broker.url, *flags)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "requires authentication and none was given" in done.stderr, done.stderr
    assert broker.credential_flag in done.stderr, done.stderr


def test_a_role_dialling_without_tls_is_refused(tmp_path: Path, broker: SecureNats) -> None:
    """nats:// and no --nats-tls-*: a token is not sent at all (status 2, a bad flag); an
    nkey meets the broker's TLS and its certificate, which the system's CAs never signed."""
    plain = broker.url.replace("tls://", "nats://")
    done = serve(tmp_path, "host", "--nats", plain, *broker.flags()[:2])
    if broker.auth == "token":
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert "--nats-token-file: the token would cross the network in the clear" in done.stderr
    else:
        assert done.returncode == 1, (done.stdout, done.stderr)
        assert "is not trusted by the system's CAs" in done.stderr, done.stderr
        assert "--nats-tls-ca FILE" in done.stderr, done.stderr
    assert secret(broker, "credential") not in done.stdout + done.stderr


def test_credentials_in_the_url_or_broker_flags_without_a_role_are_refused(
    tmp_path: Path,
) -> None:
    done = serve(tmp_path, "host", "--nats", "nats://arena:hunter2@127.0.0.1:4222")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "--nats: put no credentials in the URL" in done.stderr, done.stderr
    assert "hunter2" not in done.stdout + done.stderr
    done = serve(tmp_path, "all", "--nats-tls-ca", str(tmp_path / "ca.pem"))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "--nats-tls-ca: a broker's, for a cluster role" in done.stderr, done.stderr
