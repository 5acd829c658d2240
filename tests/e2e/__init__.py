"""End-to-end tests: the referee and its bots as separate processes over real gRPC."""
