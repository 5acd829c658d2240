"""Domino Arena SDK: the rules library, the Bot interface, local play and the remote client.

>>> from domino_arena.sdk import Bot, run  # doctest: +SKIP

The names below are loaded on first use, so ``import domino_arena.sdk.rules`` (what the referee
and every simulation import) never pulls in gRPC or asyncio (docs/decisions.md: decision 3).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from .bot import (
        AsyncBot,
        Bot,
        Clock,
        FaultInfo,
        HandEndInfo,
        MatchEndInfo,
        MatchEvent,
        MatchStartInfo,
        TimeLimits,
        current_clock,
    )
    from .client import (
        AuthenticationError,
        ConnectionLostError,
        ProtocolError,
        RefereeError,
        TakenOverError,
    )
    from .runner import Backoff, BotStopped, run, run_async
    from .testing import ComplianceReport, Failure, check_bot

_EXPORTS: Final = {
    "AsyncBot": "bot",
    "Bot": "bot",
    "Clock": "bot",
    "FaultInfo": "bot",
    "HandEndInfo": "bot",
    "MatchEndInfo": "bot",
    "MatchEvent": "bot",
    "MatchStartInfo": "bot",
    "TimeLimits": "bot",
    "current_clock": "bot",
    "AuthenticationError": "client",
    "ConnectionLostError": "client",
    "ProtocolError": "client",
    "RefereeError": "client",
    "TakenOverError": "client",
    "Backoff": "runner",
    "BotStopped": "runner",
    "run": "runner",
    "run_async": "runner",
    "ComplianceReport": "testing",
    "Failure": "testing",
    "check_bot": "testing",
}
"""Each public name -> the submodule that defines it."""

__all__ = [
    "AsyncBot",
    "AuthenticationError",
    "Backoff",
    "Bot",
    "BotStopped",
    "Clock",
    "ComplianceReport",
    "ConnectionLostError",
    "Failure",
    "FaultInfo",
    "HandEndInfo",
    "MatchEndInfo",
    "MatchEvent",
    "MatchStartInfo",
    "ProtocolError",
    "RefereeError",
    "TakenOverError",
    "TimeLimits",
    "check_bot",
    "current_clock",
    "run",
    "run_async",
]


def __getattr__(name: str) -> Any:
    """Import the submodule that defines ``name`` when it is first asked for (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
