"""How a gateway or a match host proves itself to NATS, and how it checks that it talks to the
right NATS: TLS and credentials, all read from files (docs/cluster.md, "A broker that requires
TLS and credentials").

No secret is ever taken on the command line (``ps`` shows it to every user of the machine) nor
in the broker's URL: a token comes from ``--nats-token-file``, an nkey seed from
``--nats-nkey`` (the seed never crosses the network: the broker sends a nonce and the client
signs it), the CA and the client certificate from ``--nats-tls-*``. :func:`load` reads and
checks every file before any connection, so a missing file, a bad seed or a bad combination is
reported at once and by its flag; :meth:`BrokerSecurity.check` compares what the broker says of
itself (its ``INFO`` line, read before any credential is sent) with what the options give, and
:meth:`BrokerSecurity.refusal` turns nats-py's words for a refused connection into one sentence
naming the flag to fix. Messages name files, never their contents.

TLS is wanted when the URL is ``tls://`` or any ``--nats-tls-*`` flag is given; a broker that
then does not require TLS is refused at start, since nats-py would otherwise talk to it in the
clear (it upgrades only when the broker asks). A token is refused without TLS: it would cross
the network readable by anyone on the path.
"""

from __future__ import annotations

import ssl
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Final

from domino_arena.sdk.client.tls import TlsConfigError, read_file, read_secret

SCHEMES: Final = ("nats", "tls")
"""The URL schemes of ``--nats``: ``tls`` asks for TLS."""
DEFAULT_PORT: Final = 4222
TOKEN_FLAG: Final = "--nats-token-file"
NKEY_FLAG: Final = "--nats-nkey"
CA_FLAG: Final = "--nats-tls-ca"
CERT_FLAG: Final = "--nats-tls-cert"
KEY_FLAG: Final = "--nats-tls-key"
USER_SEED_PREFIX: Final = "SU"
"""An nkey user's seed starts so (``nk -gen user``, ``nsc``): the broker's ``authorization``
lists the public key (``U...``) beside it."""


class BrokerError(Exception):
    """The broker cannot be reached or used at start: the message names the address, and the
    flag to fix when it is one's. (Here, beside the flags' checks, rather than in broker.py, so
    the command line catches it without loading nats-py.)"""


class BrokerConfigError(ValueError):
    """The broker's options cannot be used: the message names the flag and why."""


@dataclass(frozen=True, slots=True)
class BrokerSecurity:
    """What :class:`~domino_arena.server.net.cluster.broker.Broker` gives nats-py to dial
    the broker: :func:`load` makes one from the flags. The default: plaintext, no
    credentials (a broker on a private network, as before this existed)."""

    tls: ssl.SSLContext | None = None
    """TLS wanted (None: only if the broker requires it, checked with the system's roots)."""
    ca_file: str | None = None
    cert_file: str | None = None
    token_file: str | None = None
    token: str | None = field(default=None, repr=False)
    nkey_file: str | None = None
    nkey_public: str | None = None
    """The seed's public key (``U...``), not a secret: named when the broker refuses it."""

    @property
    def credential(self) -> str | None:
        """The flag and file of the credential given (None: none), for messages."""
        if self.token_file is not None:
            return f"{TOKEN_FLAG} {self.token_file}"
        if self.nkey_file is not None:
            return f"{NKEY_FLAG} {self.nkey_file} (public key {self.nkey_public})"
        return None

    def describe(self) -> str:
        """How this process dials the broker, for its start line (no secret in it)."""
        tls = "plaintext" if self.tls is None else "TLS"
        if self.cert_file is not None:
            tls = "mutual TLS"
        auth = "token" if self.token_file else "nkey" if self.nkey_file else "no credentials"
        return f"{tls}, {auth}"

    def options(self) -> dict[str, Any]:
        """The keyword arguments of nats-py's ``Client.connect`` for this security."""
        options: dict[str, Any] = {}
        if self.tls is not None:
            options["tls"] = self.tls
        if self.token is not None:
            options["token"] = self.token
        if self.nkey_file is not None:
            # A path, not the seed: nats-py reads it at each signature and drops it after.
            options["nkeys_seed"] = self.nkey_file
        return options

    def check(self, url: str, info: dict[str, Any]) -> None:
        """Refuse a broker that does not match the options, before any credential is sent.

        ``info`` is the broker's ``INFO`` (:func:`~domino_arena.server.net.cluster.broker.
        server_info`).

        Raises:
            BrokerConfigError: TLS wanted and the broker does not require it; the broker
                requires authentication and no credential is given.
        """
        if self.tls is not None and not info.get("tls_required"):
            raise BrokerConfigError(
                f"--nats: the broker at {url} does not require TLS, and TLS was asked for "
                f"(a tls:// URL or {CA_FLAG}/{CERT_FLAG}): its traffic and credentials would "
                "cross the network in the clear; configure TLS on the broker "
                "(docs/cluster.md) or dial it with nats:// and no --nats-tls-* flag"
            )
        if info.get("auth_required") and self.credential is None:
            kind = f"an nkey ({NKEY_FLAG} FILE)" if "nonce" in info else f"{TOKEN_FLAG} FILE"
            raise BrokerConfigError(
                f"--nats: the broker at {url} requires authentication and none was given: "
                f"give {kind}"
            )

    def refusal(self, url: str, exc: BaseException) -> str | None:
        """The sentence for a connection the broker refused for good (None: ``exc`` may pass,
        as a broker not up yet): refused credentials, or a failed TLS handshake."""
        text = str(exc)
        if "authoriz" in text.lower() or "authentication" in text.lower():
            if self.credential is None:  # an INFO without auth_required, then a refusal
                return f"--nats: the broker at {url} refused a client without credentials"
            return (
                f"--nats: the broker at {url} refused the credentials of {self.credential}: "
                "it does not list them in its authorization (check the broker's config, or "
                "the file)"
            )
        if isinstance(exc, ssl.SSLCertVerificationError):
            given = f"the CA of {CA_FLAG} {self.ca_file}" if self.ca_file else "the system's CAs"
            return (
                f"--nats: the broker's TLS certificate at {url} is not trusted by {given} "
                f"({exc.verify_message}): give the CA that signed it with {CA_FLAG} FILE"
            )
        if isinstance(exc, ssl.SSLError):
            hint = (
                f"; if it requires client certificates, give {CERT_FLAG} and {KEY_FLAG}"
                if self.cert_file is None
                else f"; check that its CA signed {CERT_FLAG} {self.cert_file}"
            )
            return f"--nats: the TLS handshake with the broker at {url} failed: {exc}{hint}"
        return None


PLAINTEXT: Final = BrokerSecurity()
"""No TLS unless the broker requires it, no credentials: the default."""


def split_url(url: str) -> tuple[str, str, int]:
    """The scheme, host and port of a ``--nats`` URL.

    Raises:
        BrokerConfigError: not nats:// or tls://, no host, a bad port, or credentials in it.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise BrokerConfigError(
            f"--nats: expected a nats://HOST:PORT or tls://HOST:PORT URL, got scheme "
            f"{parts.scheme or 'none'!r}"
        )
    if parts.username is not None or parts.password is not None:
        raise BrokerConfigError(
            "--nats: put no credentials in the URL (the command line and the environment are "
            f"readable by others): give them in a file with {TOKEN_FLAG} or {NKEY_FLAG}"
        )
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise BrokerConfigError(f"--nats: {url}: the port is not a number 1-65535") from None
    if not parts.hostname:
        raise BrokerConfigError(f"--nats: {url}: no host")
    return parts.scheme, parts.hostname, port


def load(
    url: str,
    *,
    token_file: str | None = None,
    nkey_file: str | None = None,
    ca_file: str | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
) -> BrokerSecurity:
    """Read and check the files the flags name, now (see the module).

    Raises:
        BrokerConfigError: a file that cannot be read or used, or a bad combination, named.
    """
    scheme, _, _ = split_url(url)
    if token_file is not None and nkey_file is not None:
        raise BrokerConfigError(f"{TOKEN_FLAG} and {NKEY_FLAG}: give one credential, not both")
    if (cert_file is None) != (key_file is None):
        given = CERT_FLAG if cert_file is not None else KEY_FLAG
        raise BrokerConfigError(f"{CERT_FLAG} and {KEY_FLAG} go together: got only {given}")
    wants_tls = scheme == "tls" or ca_file is not None or cert_file is not None
    if token_file is not None and not wants_tls:
        raise BrokerConfigError(
            f"{TOKEN_FLAG}: the token would cross the network in the clear: dial the broker "
            f"with a tls:// URL (and {CA_FLAG} FILE unless the system trusts its certificate)"
        )
    try:
        token = None if token_file is None else read_secret(token_file, TOKEN_FLAG)
        context = _tls(ca_file, cert_file, key_file) if wants_tls else None
        nkey_public = None if nkey_file is None else _nkey_public(nkey_file)
    except TlsConfigError as exc:
        raise BrokerConfigError(str(exc)) from None
    return BrokerSecurity(
        tls=context,
        ca_file=ca_file,
        cert_file=cert_file,
        token_file=token_file,
        token=token,
        nkey_file=nkey_file,
        nkey_public=nkey_public,
    )


def _tls(ca_file: str | None, cert_file: str | None, key_file: str | None) -> ssl.SSLContext:
    if ca_file is None:
        context = ssl.create_default_context()
    else:
        pem = read_file(ca_file, CA_FLAG).decode("ascii", "replace")
        try:
            context = ssl.create_default_context(cadata=pem)
        except ssl.SSLError:
            raise BrokerConfigError(f"{CA_FLAG}: {ca_file} holds no PEM certificate") from None
    if cert_file is not None and key_file is not None:
        read_file(cert_file, CERT_FLAG)  # a missing file named by its flag, not by ssl
        read_file(key_file, KEY_FLAG)
        try:
            context.load_cert_chain(cert_file, key_file)
        except ssl.SSLError as exc:
            raise BrokerConfigError(
                f"{CERT_FLAG} {cert_file} and {KEY_FLAG} {key_file}: not a PEM certificate "
                f"and its private key ({exc.reason or exc})"
            ) from None
    return context


def _nkey_public(path: str) -> str:
    """The public key of the user seed in ``path``; the seed itself is dropped here."""
    try:
        import nkeys  # noqa: PLC0415  # nats-py's own dependency for nkeys, needed by them alone
    except ImportError:
        raise BrokerConfigError(
            f"{NKEY_FLAG}: needs the nkeys package: pip install 'domino-arena[server]'"
        ) from None
    seed = read_file(path, NKEY_FLAG, 4096).strip()
    if not seed.startswith(USER_SEED_PREFIX.encode()):
        raise BrokerConfigError(
            f"{NKEY_FLAG}: {path} is not an nkey user seed (one line starting "
            f"{USER_SEED_PREFIX!r}, from `nk -gen user` or nsc)"
        )
    try:
        pair = nkeys.from_seed(bytearray(seed))
    except Exception:  # nkeys raises its own errors, and binascii's, for a garbled seed
        raise BrokerConfigError(f"{NKEY_FLAG}: {path} is not a valid nkey seed") from None
    public: str = pair.public_key.decode()
    pair.wipe()
    return public
