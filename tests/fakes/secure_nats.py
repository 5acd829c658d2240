"""A ``nats-server`` of the test's own that requires TLS and credentials, as a deployment's
should (docs/cluster.md, "A broker that requires TLS and credentials").

:func:`secure_nats` makes a CA with ``trustme`` (the broker's certificate for 127.0.0.1 and
localhost, a client certificate for the arena's roles), a credential (a token, or an nkey user
seed whose public key the broker lists) and a wrong one of the same kind, writes them and the
broker's config as files under the test's directory, starts the broker on a reserved port and
yields once it logs that it is ready (an output line, not a timer). The broker verifies client
certificates when ``verify_clients`` is set (mutual TLS).

The broker's config is the project's own example, deploy/nats/secure.conf (nkeys), with the
test's files and port put in; a token and nkey users cannot share one ``authorization``
block, so a token broker takes that file's commented-out token line instead. The tests run both.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import nkeys
import trustme

from tests.fakes.cluster import WAIT, nats_binary
from tests.fakes.processes import Process, reserved_port

Auth = Literal["token", "nkey"]


@dataclass(frozen=True, slots=True)
class SecureNats:
    """A running broker that requires TLS and ``auth``, and the files to dial it."""

    port: int
    auth: Auth
    folder: Path
    process: Process

    @property
    def url(self) -> str:
        return f"tls://127.0.0.1:{self.port}"

    def file(self, name: str) -> str:
        """The path of one of the broker's files: ``ca.pem``, ``other-ca.pem``,
        ``client.pem``, ``client.key``, ``credential``, ``wrong-credential``."""
        return str(self.folder / name)

    @property
    def credential_flag(self) -> str:
        return "--nats-token-file" if self.auth == "token" else "--nats-nkey"

    def flags(self, credential: str = "credential", ca: str = "ca.pem") -> list[str]:
        """The ``serve`` flags beside ``--nats`` of a role that dials this broker with the
        files named."""
        return [
            self.credential_flag,
            self.file(credential),
            "--nats-tls-ca",
            self.file(ca),
            "--nats-tls-cert",
            self.file("client.pem"),
            "--nats-tls-key",
            self.file("client.key"),
        ]


EXAMPLE: Final = Path(__file__).resolve().parents[2] / "deploy" / "nats" / "secure.conf"
"""The project's example config of a broker that requires TLS and an nkey."""
TLS_DIR: Final = "/etc/nats-tls/"
"""Where the example reads its certificates."""


def _credentials(auth: Auth) -> tuple[dict[str, str], str, str]:
    """The broker's environment (the example's variables), the right credential and a wrong
    one."""
    if auth == "token":
        # Starting with a letter: the broker reads $ARENA_TOKEN as a config value, and one
        # that starts with a digit is parsed as a number (deploy/nats/secure.conf says so).
        right, wrong = "arena" + secrets.token_hex(16), "arena" + secrets.token_hex(16)
        return {"ARENA_TOKEN": right}, right, wrong
    right_seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER).decode()
    wrong_seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER).decode()
    pair = nkeys.from_seed(bytearray(right_seed.encode()))
    return {"ARENA_NKEY": pair.public_key.decode()}, right_seed, wrong_seed


def config(folder: Path, port: int, auth: Auth, verify_clients: bool) -> str:
    """The example config, its certificates in ``folder``, listening on ``port`` of
    127.0.0.1 with no monitoring port, with ``auth``."""
    text = EXAMPLE.read_text(encoding="utf-8")
    edits = {
        "listen: 0.0.0.0:4222": f"listen: 127.0.0.1:{port}",
        "http: 127.0.0.1:8222": "",
        TLS_DIR: f"{folder}/",
    }
    if not verify_clients:
        edits["verify: true"] = "verify: false"
    if auth == "token":
        users = text[text.index("authorization {\n") :]
        edits[users] = "authorization { token: $ARENA_TOKEN }\n"
    for old, new in edits.items():
        assert old in text, f"{EXAMPLE} has no {old!r} any more"
        text = text.replace(old, new)
    return text


@contextmanager
def secure_nats(cwd: Path, auth: Auth, *, verify_clients: bool = True) -> Iterator[SecureNats]:
    """A broker that requires TLS and ``auth`` for the block (see the module)."""
    folder = cwd / f"nats-{auth}"
    folder.mkdir()
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("arena.example")
    env, right, wrong = _credentials(auth)
    files = {
        "ca.pem": ca.cert_pem.bytes(),
        "ca.crt": ca.cert_pem.bytes(),  # the broker's names (the example's)
        "other-ca.pem": trustme.CA().cert_pem.bytes(),
        "tls.crt": b"".join(pem.bytes() for pem in server.cert_chain_pems),
        "tls.key": server.private_key_pem.bytes(),
        "client.pem": b"".join(pem.bytes() for pem in client.cert_chain_pems),
        "client.key": client.private_key_pem.bytes(),
        "credential": f"{right}\n".encode(),
        "wrong-credential": f"{wrong}\n".encode(),
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    with reserved_port() as port:
        (folder / "nats.conf").write_text(config(folder, port, auth, verify_clients))
        args = [nats_binary(), "--config", "nats.conf"]
        process = Process(args, folder, env, wait=WAIT)
        try:
            process.wait_line("Server is ready")
            yield SecureNats(port, auth, folder, process)
        finally:
            process.stop()
