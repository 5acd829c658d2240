"""End to end: a referee signs the records it hands out; another arena trusts them by its key.

A real ``domino-arena serve --record-key`` (a subprocess on a fresh SQLite file, its key made
by ``domino-arena keys new``) plays a match between an SDK bot (``bot run``, its own process)
and a raw gRPC bot that answers every request with an illegal action, under the forfeit
policy: the raw bot forfeits. ``domino-arena record`` exports the signed record; ``replay``
still checks it (the SDK reads past the signature line). ``domino-arena import`` into another
database (server/cli/import_records.py) stores the forfeit, rated, only with ``--trust-key``
of that referee's public key: unsigned, signed by a key not trusted, or changed after signing,
it is refused and moves no rating.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import grpc
import pytest

from domino_arena.sdk.match.records import split_signature
from domino_arena.server.ladder.ratings_store import RatedStorage
from domino_arena.server.play.record_signing import authenticated, trusted_keys
from domino_arena.v1 import games_pb2
from domino_arena.v1 import referee_pb2 as pb
from tests.fakes.processes import Process, command, served_port
from tests.fakes.referee_server import RawBot

ADMIN_TOKEN: Final = "e2e-signing-token"


def illegal(bot: RawBot, request: pb.ActionRequest) -> None:
    bot.reply(request, games_pb2.Action(bid=games_pb2.BidAction(value=4)))


@dataclass
class Signed:
    folder: Path
    record: Path
    """The forfeit's record as ``domino-arena record`` exported it (signed)."""
    public: Path
    match_id: str
    address: str

    def run(self, *args: str) -> tuple[int, str]:
        return Process(command(*args), self.folder, wait=300).finish()


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Signed]:
    folder = tmp_path_factory.mktemp("signed-e2e")
    code, output = Process(
        command("keys", "new", "--out", str(folder / "referee")), folder
    ).finish()
    assert code == 0, output
    db = f"sqlite:///{folder / 'referee.db'}"
    tokens: dict[str, str] = {}
    for name in ("steady", "wrong"):
        code, output = Process(command("bot", "add", name, "--db", db), folder).finish()
        assert code == 0, output
        tokens[name] = output.splitlines()[-1]
    server = Process(
        command(
            "serve", "--port", "0", "--db", db, "--admin-token", ADMIN_TOKEN, "--no-web",
            "--record-key", str(folder / "referee.key"),
        ),
        folder,
    )  # fmt: skip
    processes = [server]
    try:
        port = served_port(server)
        address = f"127.0.0.1:{port}"
        steady = Process(
            command(
                "bot", "run", "steady", "--server", address, "--token", tokens["steady"],
                "--bot", "greedy",
            ),
            folder,
        )  # fmt: skip
        processes.append(steady)
        server.wait_line("bot connected: name=steady", context=[steady])
        with grpc.insecure_channel(address) as channel:
            wrong = RawBot(channel, illegal)
            wrong.hello("wrong", tokens["wrong"], ("passing",))
            wrong.wait_kind("welcome")
            try:
                code, output = Process(
                    command(
                        "match", "run", "passing", "--bots", "steady,wrong", "--fault-policy",
                        "forfeit", "--seed", "3", "--server", address, "--admin-token",
                        ADMIN_TOKEN, "--json",
                    ),
                    folder,
                    wait=300,
                ).finish()  # fmt: skip
            finally:
                wrong.close()
        assert code == 0, output
        match_id = json.loads(output)["match_id"]
        record = folder / "forfeit.jsonl"
        code, output = Process(
            command(
                "record", match_id, "-o", str(record), "--server", address, "--admin-token",
                ADMIN_TOKEN,
            ),
            folder,
        ).finish()  # fmt: skip
        assert code == 0, output
        yield Signed(folder, record, folder / "referee.pub", match_id, address)
    finally:
        for process in processes:
            process.stop()


def test_keys_new_writes_a_private_key_only_its_owner_reads(signed: Signed) -> None:
    private = signed.folder / "referee.key"
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o600
    assert signed.public.read_text().startswith("-----BEGIN PUBLIC KEY-----")
    code, output = signed.run("keys", "new", "--out", str(signed.folder / "referee"))
    assert code == 2
    assert output.strip() == (
        f"domino-arena: error: --out: {private} exists; a key is never overwritten"
    )


def test_the_referee_signs_the_record_it_hands_out_and_replay_still_reads_it(
    signed: Signed,
) -> None:
    text = signed.record.read_text(encoding="utf-8")
    body, signature = split_signature(text)
    assert signature is not None and signature["alg"] == "ed25519"
    assert len(signature["key"]) == 16
    result = json.loads(body.splitlines()[-1])
    assert result["termination"] == "forfeit"
    code, output = signed.run("replay", str(signed.record))
    assert code == 0, output
    assert "OK" in output


def imported(signed: Signed, name: str, record: Path, *flags: str) -> tuple[int, str, RatedStorage]:
    db = f"sqlite:///{signed.folder / name}"
    code, output = signed.run("import", str(record), "--db", db, "--rated", "--create-bots", *flags)
    storage = RatedStorage(db)
    storage.open()
    return code, output, storage


def test_a_signed_forfeit_moves_ratings_only_with_the_referees_key_trusted(
    signed: Signed,
) -> None:
    code, output, storage = imported(
        signed, "trusting.db", signed.record, "--trust-key", str(signed.public)
    )
    try:
        assert code == 0, output
        assert "1 imported (1 signed by a trusted key)" in output
        stored = storage.match(signed.match_id)
        assert stored is not None and stored.termination == "forfeit" and stored.rated
        assert sorted(storage.ratings("passing")) == ["steady", "wrong"]
        ratings = storage.ratings("passing")
        assert ratings["steady"].rating > ratings["wrong"].rating
    finally:
        storage.close()
    code, output, storage = imported(signed, "untrusting.db", signed.record)
    try:
        assert code == 1
        (refused,) = [line for line in output.splitlines() if line.startswith("REFUSED")]
        assert "claims ended by 'forfeit' (seat 1, illegal)" in refused
        assert "is not trusted here" in refused and "--trust-key" in refused
        assert storage.matches() == [] and storage.pools() == []
        assert storage.bot_names() == []  # no bot made for a refused record
    finally:
        storage.close()


def test_a_record_changed_after_signing_or_signed_by_another_key_is_refused(
    signed: Signed,
) -> None:
    text = signed.record.read_text(encoding="utf-8")
    lines = text.splitlines()
    step = json.loads(lines[1])
    step["think_ms"] = 12345.5  # not checked by the replay: only the signature sees it
    tampered = signed.folder / "tampered.jsonl"
    tampered.write_text("\n".join([lines[0], json.dumps(step), *lines[2:]]) + "\n")
    code, output = signed.run("keys", "new", "--out", str(signed.folder / "other"))
    assert code == 0, output
    for name, record, key in (
        ("tampered.db", tampered, signed.public),
        ("other-key.db", signed.record, signed.folder / "other.pub"),
    ):
        code, output, storage = imported(signed, name, record, "--trust-key", str(key))
        try:
            assert code == 1, output
            assert storage.matches() == [] and storage.pools() == []
        finally:
            storage.close()
        (refused,) = [line for line in output.splitlines() if line.startswith("REFUSED")]
        if name == "tampered.db":
            assert "signature: does not match the record: it was changed after key" in refused
        else:
            assert "is not trusted here" in refused


def test_a_practice_match_record_is_signed_too(signed: Signed) -> None:
    record = signed.folder / "practice.jsonl"
    code, output = signed.run(
        "practice", "steady", "passing", "--against", "random", "--record", str(record),
        "--server", signed.address, "--admin-token", ADMIN_TOKEN,
    )  # fmt: skip
    assert code == 0, output
    body, signature = split_signature(record.read_text(encoding="utf-8"))
    assert signature is not None
    trusted = trusted_keys([str(signed.public)])
    assert authenticated(body, signature, trusted)
