"""TLS for the bot's and the admin client's channels, and secrets read from files.

:class:`ClientTls` holds what a client needs to dial a referee that serves TLS: the CA that
signed the referee's certificate (None: the system's roots) and, for mutual TLS, the client's
own certificate and key. :meth:`ClientTls.load` reads the files once, so a missing one is
reported before any connection; :func:`handshake_error` turns grpc's words for a failed
handshake into one sentence naming the server and the CA file. :func:`read_secret` reads a
token from a file, so no secret has to appear on a command line (where ``ps`` shows it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import grpc

from .errors import RefereeError

TLS_CA_ENV: Final = "DOMINO_ARENA_TLS_CA"
"""Environment variable read for the CA file when none is given (it implies TLS)."""

MAX_SECRET_BYTES: Final = 4096
"""A token file longer than this is refused (a token is a few dozen characters)."""


class TlsConfigError(ValueError):
    """A TLS or secret file that cannot be used: the message names the file and why."""


class TlsHandshakeError(RefereeError):
    """The TLS handshake with the referee failed: a wrong CA, or TLS against plaintext.

    Not retried: dialling again with the same files fails the same way.
    """

    retryable = False

    def __str__(self) -> str:
        return self.message


def read_file(path: str, what: str, limit: int | None = None) -> bytes:
    """The bytes of ``path``, or :class:`TlsConfigError` naming it as ``what``."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise TlsConfigError(f"{what}: cannot read {path}: {reason}") from None
    if limit is not None and len(data) > limit:
        raise TlsConfigError(f"{what}: {path} is {len(data)} bytes, more than {limit}")
    return data


def read_secret(path: str, what: str) -> str:
    """The token in the file ``path`` (its first line, without surrounding blanks).

    Raises:
        TlsConfigError: the file cannot be read, is too long, not text, or holds no token.
    """
    data = read_file(path, what, MAX_SECRET_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TlsConfigError(f"{what}: {path} is not UTF-8 text") from None
    lines = text.strip().splitlines()
    token = lines[0].strip() if lines else ""
    if not token:
        raise TlsConfigError(f"{what}: {path} is empty")
    return token


def _pem(path: str, what: str) -> bytes:
    data = read_file(path, what)
    if b"-----BEGIN " not in data:
        raise TlsConfigError(f"{what}: {path} is not a PEM file (no '-----BEGIN' line)")
    return data


@dataclass(frozen=True, slots=True)
class ClientTls:
    """How a client dials a referee with TLS; :meth:`load` builds one from files."""

    root_certificates: bytes | None = None
    """The CA's PEM; None: the system's roots."""
    ca_file: str | None = None
    """Where the CA came from (named in the errors)."""
    private_key: bytes | None = None
    certificate_chain: bytes | None = None
    """Mutual TLS: the client's own key and certificate (both or neither)."""

    @classmethod
    def load(
        cls,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
    ) -> ClientTls:
        """Read the files now (a missing one fails before any connection).

        Raises:
            TlsConfigError: a file cannot be read or is not PEM; one of cert/key without the
                other.
        """
        if (cert_file is None) != (key_file is None):
            raise TlsConfigError(
                "--tls-client-cert and --tls-client-key go together: got only "
                + ("--tls-client-cert" if cert_file is not None else "--tls-client-key")
            )
        return cls(
            root_certificates=None if ca_file is None else _pem(ca_file, "--tls-ca"),
            ca_file=ca_file,
            private_key=None if key_file is None else _pem(key_file, "--tls-client-key"),
            certificate_chain=None if cert_file is None else _pem(cert_file, "--tls-client-cert"),
        )

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            root_certificates=self.root_certificates,
            private_key=self.private_key,
            certificate_chain=self.certificate_chain,
        )


def client_tls(
    tls: bool = False,
    ca_file: str | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
) -> ClientTls | None:
    """The TLS a client asked for, or None for plaintext.

    A CA file (``ca_file``, else ``$DOMINO_ARENA_TLS_CA``) or a client certificate implies TLS;
    ``tls`` alone uses the system's roots.

    Raises:
        TlsConfigError: see :meth:`ClientTls.load`.
    """
    ca = ca_file or os.environ.get(TLS_CA_ENV) or None
    if not (tls or ca or cert_file or key_file):
        return None
    return ClientTls.load(ca, cert_file, key_file)


def handshake_error(server: str, tls: ClientTls | None, details: str) -> str | None:
    """A clear sentence for a connection that failed for TLS's sake, or None if it did not.

    ``details`` are grpc's (an UNAVAILABLE status's): a failed certificate check, a referee
    that does not speak TLS, or one that refused the client's (missing) certificate.
    """
    lowered = details.lower()
    if tls is None:
        return None
    prefix = f"TLS handshake with {server} failed: "
    if "certificate_verify_failed" in lowered:
        where = f"the CA in {tls.ca_file}" if tls.ca_file else "a CA of the system's roots"
        return prefix + f"the server's certificate is not signed by {where}"
    if "wrong_version_number" in lowered or "packet_length_too_long" in lowered:
        return prefix + "the server does not speak TLS (is it serving in plaintext?)"
    if "handshake" in lowered or "ssl" in lowered or "tsi_" in lowered:
        return prefix + _bounded(details)
    if "socket closed" in lowered and tls.certificate_chain is None:
        return (
            prefix + "the server closed the connection (it may require a client certificate: "
            "--tls-client-cert and --tls-client-key)"
        )
    return None


def plaintext_hint(details: str) -> str:
    """What to add to an unreachable-referee error when the client dialled in plaintext."""
    if "socket closed" in details.lower():
        return " (if the referee serves TLS, pass --tls or --tls-ca FILE)"
    return ""


def _bounded(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
