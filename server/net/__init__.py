"""The network edge: the gRPC server, its servicers, the lobby of connected bots, remote seats.

This is the only server package that speaks gRPC; everything it learns from a client is checked
here before it reaches the play layer, which it serves through the play layer's own interfaces
(``server/play/roster.py``).
"""
