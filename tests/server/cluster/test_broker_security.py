"""The broker's TLS and credentials (server/net/cluster/broker_security.py): the files are
checked before any connection, and a :class:`Broker` dials a ``nats-server`` that requires TLS
and a token or an nkey (tests/fakes/secure_nats.py), carries messages through it with the right
files, and is refused with one sentence naming the flag to fix otherwise; no message holds a
secret."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from domino_arena.server.net.cluster import broker_security
from domino_arena.server.net.cluster.broker import Broker
from domino_arena.server.net.cluster.broker_security import (
    BrokerConfigError,
    BrokerError,
    BrokerSecurity,
)
from tests.fakes.cluster import NATS_URL
from tests.fakes.secure_nats import Auth, SecureNats, secure_nats


@pytest.fixture(params=["token", "nkey"])
def broker(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SecureNats]:
    auth: Auth = request.param
    with secure_nats(tmp_path, auth) as running:
        yield running


def load(secure: SecureNats, url: str | None = None, **files: str | None) -> BrokerSecurity:
    """The security of a role dialling ``secure`` with its right files, but for ``files``
    (a flag's name without ``--nats-`` and ``_file``: None drops the flag)."""
    given: dict[str, str | None] = {
        "token_file" if secure.auth == "token" else "nkey_file": secure.file("credential"),
        "ca_file": secure.file("ca.pem"),
        "cert_file": secure.file("client.pem"),
        "key_file": secure.file("client.key"),
    }
    given.update(files)
    return broker_security.load(url or secure.url, **given)


def refused(url: str, security: BrokerSecurity) -> str:
    """Why a broker connection with ``security`` fails (it must)."""

    async def dial() -> str:
        broker = Broker(url, "test-node", security=security)
        with pytest.raises(BrokerError) as caught:
            await broker.connect()
        return str(caught.value)

    return asyncio.run(dial())


def secret_of(secure: SecureNats, name: str = "credential") -> str:
    return Path(secure.file(name)).read_text().strip()


def test_the_right_files_carry_messages_through_the_broker(broker: SecureNats) -> None:
    async def round_trip() -> bytes:
        sender = Broker(broker.url, "sender", security=load(broker))
        taker = Broker(broker.url, "taker", security=load(broker))
        await sender.connect()
        await taker.connect()
        got: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

        async def take(msg: object) -> None:
            got.set_result(msg.data)  # type: ignore[attr-defined]

        try:
            assert sender.connected and taker.connected
            await taker.subscribe("t.secure", take)
            await taker.flush()
            sender.post("t.secure", b"a move")
            try:
                return await asyncio.wait_for(got, 30)
            except TimeoutError:
                connected = (sender.connected, taker.connected)
                raise AssertionError(
                    f"no message in 30 s; connected {connected}; {broker.process}"
                ) from None
        finally:
            await sender.close()
            await taker.close()

    assert asyncio.run(round_trip()) == b"a move"


def test_a_client_without_credentials_is_told_which_flag_to_give(broker: SecureNats) -> None:
    security = load(broker, token_file=None, nkey_file=None)
    why = refused(broker.url, security)
    assert "requires authentication and none was given" in why, why
    assert broker.credential_flag in why, why


def test_wrong_credentials_are_refused_naming_their_file_not_their_secret(
    broker: SecureNats,
) -> None:
    key = "token_file" if broker.auth == "token" else "nkey_file"
    why = refused(broker.url, load(broker, **{key: broker.file("wrong-credential")}))
    assert f"refused the credentials of {broker.credential_flag} " in why, why
    assert broker.file("wrong-credential") in why, why
    assert secret_of(broker, "wrong-credential") not in why
    assert secret_of(broker) not in why


def test_a_client_without_tls_is_refused_naming_the_ca_flag(broker: SecureNats) -> None:
    """nats:// and no CA: the broker asks for TLS and nats-py dials it with the system's CAs,
    which never signed the test's certificate. A token is not even sent without TLS asked for."""
    plain = broker.url.replace("tls://", "nats://")
    if broker.auth == "token":
        with pytest.raises(BrokerConfigError, match="in the clear: dial the broker with a tls://"):
            broker_security.load(plain, token_file=broker.file("credential"))
        return
    why = refused(plain, broker_security.load(plain, nkey_file=broker.file("credential")))
    assert "is not trusted by the system's CAs" in why, why
    assert "--nats-tls-ca FILE" in why, why


def test_a_certificate_signed_by_another_ca_is_refused_naming_the_ca_file(
    broker: SecureNats,
) -> None:
    why = refused(broker.url, load(broker, ca_file=broker.file("other-ca.pem")))
    assert f"not trusted by the CA of --nats-tls-ca {broker.file('other-ca.pem')}" in why, why


def test_a_client_without_its_certificate_is_refused_by_a_mutual_tls_broker(
    broker: SecureNats,
) -> None:
    why = refused(broker.url, load(broker, cert_file=None, key_file=None))
    assert "--nats-tls-cert and --nats-tls-key" in why, why


def test_tls_asked_of_a_plaintext_broker_is_refused_before_any_credential() -> None:
    """The machine's NATS serves plaintext: nats-py would dial it in the clear."""
    url = NATS_URL.replace("nats://", "tls://")
    why = refused(url, BrokerSecurity(tls=broker_security.load(url).tls))
    assert "does not require TLS, and TLS was asked for" in why, why


# -- the files, checked before any connection ------------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "token").write_text("s3cret-token\n")
    (tmp_path / "empty").write_text("\n")
    (tmp_path / "not-pem").write_text("hello\n")
    (tmp_path / "not-seed").write_text("UABCDEF\n")
    (tmp_path / "garbled-seed").write_text("SUAAAAAAAAAAAAAAAA\n")
    return tmp_path


@pytest.mark.parametrize(
    ("url", "flags", "expected"),
    [
        ("http://127.0.0.1:4222", {}, "expected a nats://HOST:PORT or tls://HOST:PORT URL"),
        ("nats://user:pw@127.0.0.1:4222", {}, "put no credentials in the URL"),
        ("nats://127.0.0.1:99999", {}, "the port is not a number"),
        ("tls://127.0.0.1", {"token_file": "missing"}, "--nats-token-file: cannot read"),
        ("tls://127.0.0.1", {"token_file": "empty"}, "--nats-token-file: .*empty is empty"),
        ("nats://127.0.0.1", {"token_file": "token"}, "the token would cross the network"),
        (
            "tls://127.0.0.1",
            {"token_file": "token", "nkey_file": "not-seed"},
            "give one credential, not both",
        ),
        ("tls://127.0.0.1", {"cert_file": "not-pem"}, "go together: got only --nats-tls-cert"),
        ("tls://127.0.0.1", {"ca_file": "missing"}, "--nats-tls-ca: cannot read"),
        ("tls://127.0.0.1", {"ca_file": "not-pem"}, "--nats-tls-ca: .*not-pem holds no PEM"),
        (
            "tls://127.0.0.1",
            {"cert_file": "not-pem", "key_file": "not-pem"},
            "not a PEM certificate and its private key",
        ),
        ("nats://127.0.0.1", {"nkey_file": "missing"}, "--nats-nkey: cannot read"),
        ("nats://127.0.0.1", {"nkey_file": "not-seed"}, "is not an nkey user seed"),
        ("nats://127.0.0.1", {"nkey_file": "garbled-seed"}, "is not a valid nkey seed"),
    ],
)
def test_a_bad_file_or_combination_is_named_by_its_flag(
    files: Path, url: str, flags: dict[str, str], expected: str
) -> None:
    paths = {flag: str(files / name) for flag, name in flags.items()}
    with pytest.raises(BrokerConfigError, match=expected) as caught:
        broker_security.load(url, **paths)
    assert "s3cret-token" not in str(caught.value)


def test_the_token_is_kept_out_of_the_security_s_repr(files: Path) -> None:
    security = broker_security.load("tls://127.0.0.1", token_file=str(files / "token"))
    assert security.token == "s3cret-token"
    assert security.options()["token"] == "s3cret-token"
    assert "s3cret-token" not in repr(security)
    assert security.describe() == "TLS, token"
