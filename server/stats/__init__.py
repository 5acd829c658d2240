"""Statistics over stored matches that the organizers read: the repeat-deal check (memorizing
bots). Pure: they take rows and return numbers, with no I/O."""
