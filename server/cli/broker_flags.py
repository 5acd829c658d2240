"""The flags of a cluster role's broker beyond its URL: TLS and credentials, each a file
(``serve --nats-*``; docs/cluster.md, "A broker that requires TLS and credentials").

Each flag has an environment variable for its default, as ``--nats`` has ``$DOMINO_ARENA_NATS``:
a pod's manifest sets paths there, to files mounted from its Secrets (deploy/k8s/cluster).
The values are paths, never secrets.
"""

from __future__ import annotations

import argparse
import os
from typing import Final

from domino_arena.server.cli.arguments import CliError
from domino_arena.server.net.cluster import broker_security
from domino_arena.server.net.cluster.broker_security import BrokerConfigError, BrokerSecurity

ENV_PREFIX: Final = "DOMINO_ARENA_NATS_"
FLAGS: Final = {
    broker_security.TOKEN_FLAG: (
        "TOKEN_FILE",
        "authenticate with the token in FILE (its first line); needs TLS",
    ),
    broker_security.NKEY_FLAG: (
        "NKEY",
        "authenticate with the nkey user seed in FILE (SU...; the broker lists its public key)",
    ),
    broker_security.CA_FLAG: (
        "TLS_CA",
        "dial the broker with TLS, trusting the CA in FILE (PEM; default with a tls:// URL: "
        "the system's CAs)",
    ),
    broker_security.CERT_FLAG: (
        "TLS_CERT",
        "present this client certificate (PEM) to a broker that verifies them, with "
        f"{broker_security.KEY_FLAG}",
    ),
    broker_security.KEY_FLAG: ("TLS_KEY", "the client certificate's private key (PEM)"),
}
"""Each flag: the end of its environment variable's name, and its help."""


def broker_arguments(group: argparse._ArgumentGroup) -> None:
    """Add the flags to the cluster's group of ``serve``: read by :func:`security_of`."""
    for flag, (env, text) in FLAGS.items():
        group.add_argument(
            flag,
            default=os.environ.get(ENV_PREFIX + env) or None,
            metavar="FILE",
            help=f"{text} (default ${ENV_PREFIX}{env})",
        )


def security_of(args: argparse.Namespace, url: str) -> BrokerSecurity:
    """The broker's TLS and credentials as the flags give them, the files read now.

    Raises:
        CliError: a file that cannot be used or a bad combination, naming the flag.
    """
    try:
        return broker_security.load(
            url,
            token_file=args.nats_token_file,
            nkey_file=args.nats_nkey,
            ca_file=args.nats_tls_ca,
            cert_file=args.nats_tls_cert,
            key_file=args.nats_tls_key,
        )
    except BrokerConfigError as exc:
        raise CliError(str(exc)) from None


def given(args: argparse.Namespace) -> list[str]:
    """The flags given (a single referee, with no broker, refuses them)."""
    return [flag for flag in FLAGS if getattr(args, flag[2:].replace("-", "_")) is not None]
