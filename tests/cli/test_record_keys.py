"""Record signing keys and the signature line (server/play/record_signing.py, server/cli/keys.py).

Real keys made by ``keys new``, real records of real games: a signature checks only the bytes it
was made over; the SDK's reader reads a signed record as the unsigned one and refuses a
signature line without its form; a bad key file stops ``serve`` and ``import`` with one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from domino_arena.bots import make_bot
from domino_arena.sdk.local import play_game
from domino_arena.sdk.match.records import (
    RecordError,
    parse_record,
    record_lines,
    split_signature,
)
from domino_arena.sdk.rules import make_game
from domino_arena.server.play.record_signing import (
    RecordSigner,
    SignatureError,
    authenticated,
    key_id,
    load_public_key,
    trusted_keys,
)
from tests.cli.harness import run


def a_record() -> str:
    game = make_game("passing", players=2)
    record = play_game(game, [make_bot("greedy", 1), make_bot("greedy", 2)], seed=5).record
    return "".join(line + "\n" for line in record_lines(record))


@pytest.fixture
def keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    code, out, err = run(capsys, "keys", "new", "--out", str(tmp_path / "ref"))
    assert (code, err) == (0, "")
    public = load_public_key(str(tmp_path / "ref.pub"))
    assert out.startswith(f"key {key_id(public)}: private {tmp_path / 'ref.key'}")
    return tmp_path / "ref"


def test_a_signed_record_reads_as_the_unsigned_one_and_checks_only_with_its_key(
    keys: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = a_record()
    sign = RecordSigner.load(f"{keys}.key")
    signed = sign(text)
    assert signed.startswith(text) and signed.count("\n") == text.count("\n") + 1
    assert sign(signed) == signed  # a signed record is handed out as it is, never re-signed
    assert parse_record(signed) == parse_record(text)
    body, signature = split_signature(signed)
    assert body == text and signature is not None
    assert signature["key"] == sign.key_id
    trusted = trusted_keys([f"{keys}.pub"])
    assert authenticated(body, signature, trusted)
    run(capsys, "keys", "new", "--out", str(tmp_path / "other"))
    assert not authenticated(body, signature, trusted_keys([str(tmp_path / "other.pub")]))
    with pytest.raises(SignatureError, match="it was changed after key"):
        authenticated(body.replace('"seed": 5', '"seed": 6'), signature, trusted)
    with pytest.raises(SignatureError, match="alg must be 'ed25519', got 'rsa'"):
        authenticated(body, {**signature, "alg": "rsa"}, trusted)
    assert split_signature(text) == (text, None)


def test_a_signature_line_without_its_form_is_refused_by_the_reader() -> None:
    text = a_record()
    line = json.dumps({"type": "signature", "alg": "ed25519", "key": "k", "sig": 5})
    with pytest.raises(RecordError) as refused:
        parse_record(text + line + "\n")
    assert str(refused.value) == (
        f"line {text.count(chr(10)) + 1}: a signature line holds exactly 'alg', 'key' and 'sig' "
        "(strings)"
    )


def test_a_bad_key_file_stops_serve_and_import_with_one_line(
    keys: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    missing = str(tmp_path / "missing.key")
    code, out, err = run(capsys, "serve", "--port", "0", "--db", db, "--record-key", missing)
    assert (code, out) == (2, "")
    assert (
        err
        == f"domino-arena: error: --record-key: cannot read {missing}: No such file or directory\n"
    )
    code, _, err = run(capsys, "serve", "--port", "0", "--db", db, "--record-key", f"{keys}.pub")
    assert code == 2 and err.startswith(
        f"domino-arena: error: --record-key: {keys}.pub is not an unencrypted PEM private key"
    )
    assert err.count("\n") == 1
    record = tmp_path / "r.jsonl"
    record.write_text(a_record())
    code, _, err = run(capsys, "import", str(record), "--db", db, "--trust-key", f"{keys}.key")
    assert code == 2 and err.startswith(
        f"domino-arena: error: --trust-key: {keys}.key is not a PEM public key"
    )
    assert err.count("\n") == 1
