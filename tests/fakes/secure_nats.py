"""A ``nats-server`` of the test's own that requires TLS and credentials, as a deployment's
should (docs/cluster.md, "A broker that requires TLS and credentials").

:func:`secure_nats` makes a CA with ``trustme`` (the broker's certificate for 127.0.0.1 and
localhost, a client certificate for the arena's roles), a credential (a token, or an nkey user
seed whose public key the broker lists) and a wrong one of the same kind, writes them and the
broker's config as files under the test's directory, starts the broker on a reserved port and
yields once it logs that it is ready (an output line, not a timer). The broker verifies client
certificates when ``verify_clients`` is set (mutual TLS).

A token and nkey users cannot share one ``authorization`` block, so each broker takes one kind;
the tests run both.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

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


def _credentials(auth: Auth) -> tuple[str, str, str]:
    """The broker's ``authorization`` block, the right credential and a wrong one."""
    if auth == "token":
        right, wrong = secrets.token_hex(16), secrets.token_hex(16)
        return f'authorization {{ token: "{right}" }}', right, wrong
    right_seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER).decode()
    wrong_seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER).decode()
    pair = nkeys.from_seed(bytearray(right_seed.encode()))
    public = pair.public_key.decode()
    return f'authorization {{ users: [ {{ nkey: "{public}" }} ] }}', right_seed, wrong_seed


@contextmanager
def secure_nats(cwd: Path, auth: Auth, *, verify_clients: bool = True) -> Iterator[SecureNats]:
    """A broker that requires TLS and ``auth`` for the block (see the module)."""
    folder = cwd / f"nats-{auth}"
    folder.mkdir()
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("arena.example")
    authorization, right, wrong = _credentials(auth)
    files = {
        "ca.pem": ca.cert_pem.bytes(),
        "other-ca.pem": trustme.CA().cert_pem.bytes(),
        "server.pem": b"".join(pem.bytes() for pem in server.cert_chain_pems),
        "server.key": server.private_key_pem.bytes(),
        "client.pem": b"".join(pem.bytes() for pem in client.cert_chain_pems),
        "client.key": client.private_key_pem.bytes(),
        "credential": f"{right}\n".encode(),
        "wrong-credential": f"{wrong}\n".encode(),
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    with reserved_port() as port:
        verify = "true" if verify_clients else "false"
        (folder / "nats.conf").write_text(
            f"listen: 127.0.0.1:{port}\n"
            f"tls {{\n  cert_file: server.pem\n  key_file: server.key\n  ca_file: ca.pem\n"
            f"  verify: {verify}\n  timeout: 5\n}}\n"
            f"{authorization}\n"
        )
        process = Process([nats_binary(), "--config", "nats.conf"], folder, wait=WAIT)
        try:
            process.wait_line("Server is ready")
            yield SecureNats(port, auth, folder, process)
        finally:
            process.stop()
