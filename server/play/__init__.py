"""Running matches: the arena, the trio referee, tournaments, their scheduler, time control,
the spectator hub, and the roster interface the network layer implements."""
