"""The stdio protocol: a bot in any language plays over stdin/stdout (docs/writing-a-bot.md).

Light install only: the standard library, protobuf and grpcio (DESIGN.md decision 19).
"""
