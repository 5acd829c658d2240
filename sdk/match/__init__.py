"""The match core: one pure state machine that runs a match for local play and the referee alike.

It owns a match's progress (whose decision is due, validating a reply, charging the clock it is
told about, substitution and strikes, forfeits, the record) and does no I/O (h11's lesson): the
synchronous local driver and the trio referee both drive it.
"""
