"""The network edge: gRPC servicers, the lobby of connected bots and the remote seats.

This is the only server package that speaks gRPC; everything it learns from a client is checked
here before it reaches the play layer.
"""
