"""The cluster transport: gateways and match hosts of one arena talking over NATS (issue 15).

The shape is Lichess's lila / lila-ws split (docs/cluster.md): a *gateway* holds the bots'
``Play`` streams (authentication, the per-stream limits, batching: the gRPC bot service and the
lobby, unchanged) and a *match host* runs the matches, the tournaments and the ladders. They
share no memory; NATS carries what one hands the other:

- :mod:`.subjects`: the subjects and headers (the contract between the two roles);
- :mod:`.broker`: one NATS connection per process, with a publisher that never blocks;
- :mod:`.presence`: who is connected through which gateway (announced, refreshed, expired);
- :mod:`.gateway`: the gateway's relay between its lobby and the broker;
- :mod:`.hosting`: the host's view of every gateway's bots (the arena's roster and the links
  its remote seats write to).

``domino-arena serve`` alone uses none of this: one process, the in-process lobby.
"""
