"""What a NATS header costs a cluster's message, against the same id as a subject token.

Usage (from the repository root)::

    python bench/nats_subject_bench.py [--messages N] [--rounds R] [--nats URL]

The cluster's host and gateway (server/net/cluster) each publish a move's message and read
the other's: before issue 34 each carried the bot stream's id and the sender's node in two
NATS headers, now in the subject (server/net/cluster/subjects.py). One process, two nats-py
connections to one NATS server: it publishes ``--messages`` 40-byte messages (yielding to
the loop every 100) on a subject its other connection subscribes to, whose callback reads the
stream id (from the headers, or the subject's last token), and reports the process's CPU per
message, publish and receive together, alternating the two ways ``--rounds`` times.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Sequence
from typing import Final

import nats
from nats.aio.msg import Msg

DEFAULT_NATS: Final = "nats://127.0.0.1:4222"
PAYLOAD: Final = b"x" * 40
HEADERS: Final = {"Da-Conn": "gw-a/0123456789ab/17", "Da-Node": "host-a"}


async def cpu_per_message(url: str, messages: int, *, headers: bool) -> float:
    """Microseconds of this process's CPU per message published and read back."""
    publisher, subscriber = await nats.connect(url), await nats.connect(url)
    prefix = f"bench{time.time_ns()}"
    done = asyncio.Event()
    seen: list[str] = []

    async def read(msg: Msg) -> None:
        if headers:
            seen.append((msg.headers or {}).get("Da-Conn", ""))
        else:
            seen.append(msg.subject.rpartition(".")[2])
        if len(seen) == messages:
            done.set()

    await subscriber.subscribe(f"{prefix}.>", cb=read)
    await subscriber.flush()
    plain = f"{prefix}.bot.alice"
    tokens = f"{prefix}.bot.alice.gw-a~2f0123456789ab~2f17.host-a.m"
    started = time.process_time()
    for i in range(messages):
        if headers:
            await publisher.publish(plain, PAYLOAD, headers=HEADERS)
        else:
            await publisher.publish(tokens, PAYLOAD)
        if i % 100 == 0:
            await asyncio.sleep(0)
    await done.wait()
    cpu = time.process_time() - started
    await publisher.close()
    await subscriber.close()
    return cpu / messages * 1e6


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000, metavar="N")
    parser.add_argument("--rounds", type=int, default=3, metavar="R")
    parser.add_argument("--nats", default=DEFAULT_NATS, metavar="URL")
    args = parser.parse_args(argv)
    if args.messages < 1 or args.rounds < 1:
        parser.error("--messages and --rounds must be 1 or more")
    for _ in range(args.rounds):
        for headers in (True, False):
            cost = asyncio.run(cpu_per_message(args.nats, args.messages, headers=headers))
            way = "two headers" if headers else "subject tokens"
            print(f"{way:>14}: {cost:5.1f} µs of CPU per message (publish + receive)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
