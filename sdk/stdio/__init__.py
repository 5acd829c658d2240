"""The stdio protocol: a bot in any language plays over stdin and stdout, one JSON object a
line, the proto's own messages in protobuf's JSON mapping (docs/writing-a-bot.md, "Any
language: the stdio protocol").

- :mod:`.codec`: the lines, their bounds and :class:`~.codec.StdioProtocolError`;
- :mod:`.child`: starting and stopping a bot's process (:class:`~.child.ChildCommand`);
- :mod:`.exec_bot`: :class:`~.exec_bot.ExecBot`, a child process as a local
  :class:`~domino_arena.sdk.bot.Bot` (local play, the compliance check);
- :mod:`.relay`: the bridge from a referee's gRPC stream to a child (``bot run --exec``, the
  hosted runner);
- :mod:`.host` (``python -m domino_arena.sdk.stdio FILE.py:Class``): a Python Bot on the
  child's side.

Nothing is imported here, so ``python -m domino_arena.sdk.stdio`` loads neither gRPC nor the
bridge (it runs in the sandbox, where there is no gRPC).
"""
