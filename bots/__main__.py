"""Run a house bot against a referee: ``python -m domino_arena.bots NAME --server HOST:PORT``.

``--bot`` takes a house bot's name or a bot of your own, ``mybot.py:MyBot`` (the round robin
runs every entrant this way, each as its own process).

The same as ``domino-arena bot run NAME ...``, without loading the referee's code: only the
SDK and the house bots. The token comes from ``--token-file``, ``--token`` (which ``ps`` shows)
or ``$DOMINO_ARENA_TOKEN``; ``--tls``, ``--tls-ca`` (or ``$DOMINO_ARENA_TLS_CA``) and the client
certificate options dial a referee that serves TLS.

``--from-stdin``: the referee's address and the token are read from standard input, one line
each, once the bot is loaded: a parent that starts its bots before its referee listens (the
round robin does) hands them over when it knows the port, and the bots' start-up overlaps the
referee's.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Sequence

from domino_arena.sdk import runner
from domino_arena.sdk.client import client_tls
from domino_arena.sdk.rules import GAMES

from . import HOUSE_BOTS, UnknownBotError, player_factory


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m domino_arena.bots",
        description="Connect a house bot to a referee as the bot NAME and play every match it "
        "is seated in, until Ctrl-C or SIGTERM.",
    )
    parser.add_argument("name", metavar="NAME", help="the bot's name, as created by 'bot add'")
    parser.add_argument(
        "--server",
        metavar="HOST:PORT",
        help=f"default: ${runner.SERVER_ENV}, else {runner.DEFAULT_SERVER}",
    )
    parser.add_argument(
        "--token",
        metavar="T",
        help=f"default: ${runner.TOKEN_ENV} (a token on the command line shows in 'ps')",
    )
    parser.add_argument("--token-file", metavar="FILE", help="read the token from FILE")
    parser.add_argument(
        "--from-stdin",
        action="store_true",
        help="once the bot is loaded, read HOST:PORT and then the token from standard input "
        "(one line each), instead of --server and the token options",
    )
    tls = parser.add_argument_group("TLS (when the referee serves it)")
    tls.add_argument("--tls", action="store_true", help="dial with TLS (the system's roots)")
    tls.add_argument(
        "--tls-ca",
        metavar="FILE",
        help=f"the CA that signed the referee's certificate; implies --tls "
        f"(default ${runner.TLS_CA_ENV})",
    )
    tls.add_argument("--tls-client-cert", metavar="FILE", help="mutual TLS: this bot's cert")
    tls.add_argument("--tls-client-key", metavar="FILE", help="mutual TLS: this bot's key")
    parser.add_argument(
        "--bot",
        default="greedy",
        metavar="BOT",
        help=f"a house bot ({', '.join(sorted(HOUSE_BOTS))}) or MODULE:NAME, e.g. mybot.py:MyBot "
        "(default greedy)",
    )
    parser.add_argument("--games", metavar="G1,G2", help=f"default: {','.join(sorted(GAMES))}")
    parser.add_argument(
        "--seed",
        type=int,
        metavar="S",
        help="seed of the house bot when the referee sends no seed of its own for a match "
        "(default: random)",
    )
    parser.add_argument(
        "--samples",
        type=int,
        metavar="N",
        help="search only: a fixed budget of N sampled deals per move, no clock (reproducible)",
    )
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else secrets.randbelow(10**9)
    try:
        new_bot = player_factory(args.bot, seed, samples=args.samples)
    except UnknownBotError as exc:
        parser.error(f"--bot: {exc} (or MODULE:NAME for a bot of your own)")
    except ValueError as exc:
        parser.error(f"--{exc}" if str(exc).startswith("samples") else f"--bot: {exc}")
    except (ImportError, AttributeError, OSError) as exc:
        parser.error(f"--bot: cannot load {args.bot}: {exc}")

    if args.from_stdin:
        if args.server or args.token or args.token_file:
            parser.error("--from-stdin reads the address and the token: give neither")
        args.server, args.token = sys.stdin.readline().strip(), sys.stdin.readline().strip()
        if not args.server or not args.token:
            parser.error("--from-stdin: expected HOST:PORT and the token, one line each")
    games = None if args.games is None else [g for g in args.games.split(",") if g]
    try:
        channel = client_tls(args.tls, args.tls_ca, args.tls_client_cert, args.tls_client_key)
        runner.run(
            new_bot,
            server=args.server,
            name=args.name,
            token=args.token,
            token_file=args.token_file,
            games=games,
            tls=channel or False,
        )
    except (runner.BotStopped, ValueError) as exc:  # one line each (sdk/runner.py)
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
