"""TLS over real sockets on 127.0.0.1, with a CA made in the test (``trustme``).

A referee serving TLS refuses a plaintext client; a client that trusts the right CA connects
and plays (raw bots over TLS, the match run by the admin command line with ``--tls-ca``); a
client with another CA gets one clear sentence, from the CLI and from the SDK; with a client CA
(mutual TLS) a client without a certificate is refused and one with a certificate connects.
``serve`` names a TLS or token file it cannot use; tokens come from files.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import trustme

from domino_arena.bots import make_bot
from domino_arena.bots.__main__ import main as bots_main
from domino_arena.sdk import runner
from domino_arena.sdk.bot import Bot
from domino_arena.sdk.client import (
    ClientTls,
    Connection,
    Players,
    TlsConfigError,
    TlsHandshakeError,
)
from domino_arena.server.cli.main import main
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.net.grpc_server import ServerTls
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import admin_pb2_grpc
from tests.fakes.referee_server import ADMIN_TOKEN, WAIT, Referee


@dataclass(frozen=True, slots=True)
class Pki:
    """A CA, the referee's certificate and key, and a client's, as files in ``folder``."""

    ca: trustme.CA
    ca_file: Path
    cert_file: Path
    key_file: Path
    client_cert_file: Path
    client_key_file: Path
    other_ca_file: Path


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    ca = trustme.CA()
    server = ca.issue_cert("localhost", "127.0.0.1")
    client = ca.issue_cert("bot.example")
    files = {
        "ca.pem": ca.cert_pem.bytes(),
        "server.pem": b"".join(p.bytes() for p in server.cert_chain_pems),
        "server.key": server.private_key_pem.bytes(),
        "client.pem": b"".join(p.bytes() for p in client.cert_chain_pems),
        "client.key": client.private_key_pem.bytes(),
        "other-ca.pem": trustme.CA().cert_pem.bytes(),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return Pki(
        ca,
        tmp_path / "ca.pem",
        tmp_path / "server.pem",
        tmp_path / "server.key",
        tmp_path / "client.pem",
        tmp_path / "client.key",
        tmp_path / "other-ca.pem",
    )


@pytest.fixture
def storage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RatedStorage]:
    for name in ("DOMINO_ARENA_SERVER", "DOMINO_ARENA_TLS_CA", "DOMINO_ARENA_ADMIN_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    opened = RatedStorage(f"sqlite:///{tmp_path / 'tls.db'}")
    opened.open()
    yield opened
    opened.close()


def tls_referee(storage: RatedStorage, pki: Pki, *, mutual: bool = False) -> Referee:
    client_ca = str(pki.ca_file) if mutual else None
    tls = ServerTls.load(str(pki.cert_file), str(pki.key_file), client_ca)
    client = ClientTls.load(
        str(pki.ca_file),
        str(pki.client_cert_file) if mutual else None,
        str(pki.client_key_file) if mutual else None,
    )
    return Referee(storage, tls=tls, credentials=client.credentials())


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_plaintext_client_is_refused(
    capsys: pytest.CaptureFixture[str], storage: RatedStorage, pki: Pki
) -> None:
    referee = tls_referee(storage, pki)
    try:
        with grpc.insecure_channel(referee.address) as channel:
            with pytest.raises(grpc.RpcError) as refused:
                admin_pb2_grpc.AdminServiceStub(channel).ListConnected(
                    admin_pb.ListConnectedRequest(), timeout=WAIT
                )
            assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
        code, _, err = cli(
            capsys, "matches", "--server", referee.address, "--admin-token", ADMIN_TOKEN
        )
        assert code == 1
        assert err.startswith(f"domino-arena: error: cannot reach the referee at {referee.address}")
        assert "pass --tls or --tls-ca FILE" in err
    finally:
        referee.close()


def sdk_connection(referee: Referee, name: str, token: str, tls: ClientTls) -> Connection:
    def new_bot() -> Bot:
        return make_bot("greedy", 7)

    return Connection(Players(new_bot), server=referee.address, name=name, token=token, tls=tls)


def test_the_right_ca_connects_and_a_match_runs_over_tls(
    capsys: pytest.CaptureFixture[str], storage: RatedStorage, pki: Pki, tmp_path: Path
) -> None:
    alice, bob = storage.add_bot("alice"), storage.add_bot("bob")
    token_file = tmp_path / "admin-token"
    token_file.write_text(ADMIN_TOKEN + "\n")
    referee = tls_referee(storage, pki)
    try:
        referee.connect("bob", bob, games=("passing",))
        connection = sdk_connection(referee, "alice", alice, ClientTls.load(str(pki.ca_file)))
        args = ["match", "run", "passing", "--bots", "alice,bob", "--seed", "1"]
        args += ["--server", referee.address, "--tls-ca", str(pki.ca_file)]
        args += ["--admin-token-file", str(token_file)]

        async def play() -> int:
            serving = asyncio.create_task(connection.serve())
            try:
                async with asyncio.timeout(WAIT):
                    while connection.welcome is None and not serving.done():
                        await asyncio.sleep(0.01)
                assert connection.welcome is not None, serving
                return await asyncio.to_thread(main, args)
            finally:
                serving.cancel()
                await asyncio.gather(serving, return_exceptions=True)

        code = asyncio.run(play())
        out, err = capsys.readouterr()
        assert (code, err) == (0, "")
        assert "result: normal" in out
    finally:
        referee.close()


def test_a_wrong_ca_fails_with_a_clear_message(
    capsys: pytest.CaptureFixture[str], storage: RatedStorage, pki: Pki
) -> None:
    alice = storage.add_bot("alice")
    referee = tls_referee(storage, pki)
    expected = (
        f"TLS handshake with {referee.address} failed: the server's certificate is not "
        f"signed by the CA in {pki.other_ca_file}"
    )
    try:
        code, _, err = cli(
            capsys,
            "matches",
            "--server",
            referee.address,
            "--admin-token",
            ADMIN_TOKEN,
            "--tls-ca",
            str(pki.other_ca_file),
        )
        assert (code, err) == (1, f"domino-arena: error: {expected}\n")
        wrong = ClientTls.load(str(pki.other_ca_file))
        connection = sdk_connection(referee, "alice", alice, wrong)
        with pytest.raises(TlsHandshakeError) as failed:
            asyncio.run(connection.serve())
        assert str(failed.value) == expected
        assert not failed.value.retryable
    finally:
        referee.close()


def test_mutual_tls_refuses_a_client_without_a_certificate(
    capsys: pytest.CaptureFixture[str],
    storage: RatedStorage,
    pki: Pki,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    referee = tls_referee(storage, pki, mutual=True)
    monkeypatch.setenv("DOMINO_ARENA_TLS_CA", str(pki.ca_file))
    monkeypatch.setenv("DOMINO_ARENA_ADMIN_TOKEN", ADMIN_TOKEN)
    try:
        assert referee.connected() == {}  # the fake's own channel has a client certificate
        code, _, err = cli(capsys, "matches", "--server", referee.address)
        assert code == 1
        assert err == (
            f"domino-arena: error: TLS handshake with {referee.address} failed: the server "
            "closed the connection (it may require a client certificate: --tls-client-cert "
            "and --tls-client-key)\n"
        )
        with_cert = ["--tls-client-cert", str(pki.client_cert_file)]
        with_cert += ["--tls-client-key", str(pki.client_key_file)]
        code, _, err = cli(capsys, "matches", "--server", referee.address, *with_cert)
        assert (code, err) == (0, ""), err
    finally:
        referee.close()


@pytest.mark.parametrize(
    ("files", "words"),
    [
        (("missing.pem", "server.key"), "--tls-cert: cannot read {d}/missing.pem: No such file"),
        (("server.pem", "missing.key"), "--tls-key: cannot read {d}/missing.key: No such file"),
        (("server.pem", "other.key"), "--tls-key: the key in {d}/other.key does not match"),
        (("server.key", "server.key"), "--tls-cert: {d}/server.key holds no certificate (PEM)"),
        (("server.pem", "server.pem"), "--tls-key: {d}/server.pem holds no private key (PEM)"),
        (("server.pem", "ca.pem"), "--tls-key: {d}/ca.pem holds no private key (PEM)"),
    ],
)
def test_serve_names_a_tls_file_it_cannot_use(
    capsys: pytest.CaptureFixture[str],
    pki: Pki,
    tmp_path: Path,
    files: tuple[str, str],
    words: str,
) -> None:
    (tmp_path / "other.key").write_bytes(pki.ca.issue_cert("localhost").private_key_pem.bytes())
    cert, key = (str(tmp_path / name) for name in files)
    code, out, err = cli(
        capsys, "serve", "--port", "0", "--tls-cert", cert, "--tls-key", key,
        "--db", f"sqlite:///{tmp_path / 'never.db'}",
    )  # fmt: skip
    assert (code, out) == (2, "")
    assert err.startswith("domino-arena: error: " + words.format(d=tmp_path)), err
    assert err.count("\n") == 1
    assert not (tmp_path / "never.db").exists()


def test_serve_and_bots_read_their_tokens_and_cas_from_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pki: Pki
) -> None:
    missing = str(tmp_path / "nope")
    code, _, err = cli(capsys, "serve", "--port", "0", "--admin-token-file", missing)
    assert code == 2
    assert f"--admin-token-file: cannot read {missing}: No such file" in err
    (tmp_path / "empty").write_text("\n")
    code, _, err = cli(capsys, "bot", "run", "alice", "--token-file", str(tmp_path / "empty"))
    assert (code, err) == (2, f"domino-arena: error: --token-file: {tmp_path}/empty is empty\n")
    code, _, err = cli(capsys, "bot", "run", "alice", "--token", "t", "--tls-ca", missing)
    assert code == 2
    assert f"--tls-ca: cannot read {missing}: No such file" in err
    assert bots_main(["alice", "--token", "t", "--tls-ca", missing]) == 1
    assert f"--tls-ca: cannot read {missing}" in capsys.readouterr().err
    code, _, err = cli(capsys, "matches", "--admin-token-file", str(pki.ca_file))
    assert code != 0  # a token read from the file (the CA's first line): refused or unreachable


def test_the_sdk_reads_its_token_and_ca_from_files_before_dialling(tmp_path: Path) -> None:
    def new_bot() -> Bot:
        return make_bot("greedy", 1)

    with pytest.raises(runner.BotStopped, match=r"token=\.\.\. or token_file=\.\.\., not both"):
        runner.run(new_bot, name="alice", token="t", token_file="f", log_level=None)
    missing = tmp_path / "nope"
    with pytest.raises(runner.BotStopped) as stopped:
        runner.run(new_bot, name="alice", token_file=str(missing), log_level=None)
    assert isinstance(stopped.value.error, TlsConfigError)
    assert f"bot 'alice' not started: token file: cannot read {missing}" in str(stopped.value)
    with pytest.raises(runner.BotStopped) as stopped:
        runner.run(new_bot, name="alice", token="t", tls_ca=str(missing), log_level=None)
    assert isinstance(stopped.value.error, TlsConfigError)
    assert f"--tls-ca: cannot read {missing}" in str(stopped.value)
    (tmp_path / "not.pem").write_text("hello")
    with pytest.raises(TlsConfigError, match="is not a PEM file"):
        ClientTls.load(str(tmp_path / "not.pem"))
    with pytest.raises(TlsConfigError, match="go together"):
        ClientTls.load(None, str(tmp_path / "not.pem"), None)
