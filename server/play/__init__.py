"""Running matches: the arena, the trio referee, the continuous ladder's runner, time control,
the spectator hub, and the roster interface the network layer implements. A tournament's life
is ``server/tournaments/lifecycle``'s; its games are played here (``Arena.play``)."""
