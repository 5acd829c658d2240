"""Referee-signed match records: Ed25519 keys, signing a record handed out, checking one imported.

Why: ``domino-arena import`` takes record files from elsewhere, and a record's text can claim
anything the moves do not prove (a forfeit by timeout, a fault, an abort). A referee started
with ``serve --record-key FILE`` signs every record it hands out (``record``, ``match run
--record``): it appends one last line ::

    {"type": "signature", "alg": "ed25519", "key": KEY_ID, "sig": BASE64}

over the exact UTF-8 bytes of the lines before it (the record as stored, ending with a line
end). ``KEY_ID`` is the first 16 hex digits of the SHA-256 of the raw 32-byte public key, so a
line names the key that checks it. An arena that trusts that key (``import --trust-key
FILE.pub``) takes the record's claims as the referee's (docs/admin.md, "Signed records").

The SDK only reads the line's form (``sdk.match.records.split_signature``); this module, the
one user of ``cryptography``, is imported only by the commands that sign or check.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from domino_arena.sdk.match.records import SIGNATURE_TYPE, RecordError, split_signature

ALGORITHM: Final = "ed25519"
KEY_ID_HEX: Final = 16
"""Hex digits of a key id (the start of the SHA-256 of the raw public key)."""
MAX_KEY_FILE: Final = 16_384
"""A PEM key file is a few hundred bytes; a larger file is refused unread."""


class KeyFileError(ValueError):
    """A key file that cannot be used: the message names the file and what is wrong."""


class SignatureError(ValueError):
    """A signature line that does not authenticate its record: the message says why."""


def key_id(public: Ed25519PublicKey) -> str:
    """The id of ``public`` in signature lines: 16 hex digits of the SHA-256 of its raw bytes."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:KEY_ID_HEX]


def _pem(path: str, flag: str) -> bytes:
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_KEY_FILE + 1)
    except OSError as exc:
        raise KeyFileError(f"{flag}: cannot read {path}: {exc.strerror}") from None
    if len(data) > MAX_KEY_FILE:
        raise KeyFileError(f"{flag}: {path} is over {MAX_KEY_FILE:,} bytes: not a PEM key")
    return data


def load_private_key(path: str, flag: str = "--record-key") -> Ed25519PrivateKey:
    """Read an unencrypted PEM Ed25519 private key (``keys new`` writes one).

    Raises:
        KeyFileError: unreadable, not PEM, encrypted, or not Ed25519.
    """
    data = _pem(path, flag)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(
            f"{flag}: {path} is not an unencrypted PEM private key ({exc})"
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{flag}: {path} holds a {type(key).__name__}; expected Ed25519")
    return key


def load_public_key(path: str, flag: str = "--trust-key") -> Ed25519PublicKey:
    """Read a PEM Ed25519 public key (``keys new``'s ``.pub``).

    Raises:
        KeyFileError: unreadable, not PEM, or not Ed25519.
    """
    data = _pem(path, flag)
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(f"{flag}: {path} is not a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"{flag}: {path} holds a {type(key).__name__}; expected Ed25519")
    return key


def trusted_keys(paths: Iterable[str]) -> dict[str, Ed25519PublicKey]:
    """The public keys of ``paths`` by key id (``import --trust-key``).

    Raises:
        KeyFileError: a file that is no Ed25519 public key.
    """
    return {key_id(key): key for key in map(load_public_key, paths)}


def new_key_pair(prefix: str) -> tuple[Path, Path, str]:
    """Write a new key pair: ``PREFIX.key`` (PEM PKCS#8, mode 0600) and ``PREFIX.pub``; return
    both paths and the key id. Nothing is overwritten.

    Raises:
        KeyFileError: a file exists already, or cannot be written.
    """
    private_path, public_path = Path(f"{prefix}.key"), Path(f"{prefix}.pub")
    for path in (private_path, public_path):
        if path.exists():
            raise KeyFileError(f"--out: {path} exists; a key is never overwritten")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    try:
        descriptor = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(private_pem)
        public_path.write_bytes(public_pem)
    except OSError as exc:
        raise KeyFileError(f"--out: cannot write {exc.filename}: {exc.strerror}") from None
    return private_path, public_path, key_id(key.public_key())


class RecordSigner:
    """Signs the records a referee hands out with its private key (``serve --record-key``)."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self.key = key
        self.key_id = key_id(key.public_key())

    @classmethod
    def load(cls, path: str) -> RecordSigner:
        """The signer of the PEM private key in ``path`` (raises :class:`KeyFileError`)."""
        return cls(load_private_key(path))

    def __call__(self, record: str) -> str:
        """``record`` with its signature line; a record that carries one already (imported
        signed from another referee) is handed out as it came, with its own referee's."""
        try:
            _, signature = split_signature(record)
        except RecordError:
            signature = None
        if signature is not None:
            return record
        body = record if record.endswith("\n") else record + "\n"
        sig = base64.b64encode(self.key.sign(body.encode("utf-8"))).decode("ascii")
        line = {"type": SIGNATURE_TYPE, "alg": ALGORITHM, "key": self.key_id, "sig": sig}
        return body + json.dumps(line) + "\n"


def authenticated(
    body: str, signature: Mapping[str, str], trusted: Mapping[str, Ed25519PublicKey]
) -> bool:
    """Whether ``signature`` (a signature line's fields, ``split_signature``) authenticates
    ``body`` (the lines before it) with a key of ``trusted``; False when its key is not one.

    Raises:
        SignatureError: an unknown algorithm, or a trusted key's signature that does not match
            (the record was changed after it was signed): such a record is refused.
    """
    if signature["alg"] != ALGORITHM:
        raise SignatureError(f"signature: alg must be '{ALGORITHM}', got {signature['alg']!r}")
    key = trusted.get(signature["key"])
    if key is None:
        return False
    try:
        key.verify(base64.b64decode(signature["sig"], validate=True), body.encode("utf-8"))
    except (InvalidSignature, binascii.Error, ValueError):
        raise SignatureError(
            f"signature: does not match the record: it was changed after key "
            f"{signature['key']} signed it"
        ) from None
    return True
