"""Running matches: the arena, the trio referee, tournaments, their scheduler, time control."""
