"""The errors the rules library raises.

Every error is a ``ValueError`` so callers that validate input can catch one type, and each
message names the action, the rule it breaks and what was expected instead.
"""

from __future__ import annotations


class RulesError(ValueError):
    """Base class of every error raised by the rules library."""


class InvalidActionError(RulesError):
    """Text or a value that is not a well-formed action or tile."""


class GameOptionError(RulesError):
    """An unknown game, an unknown option, or an option value the game refuses.

    Kept apart from :class:`InvalidActionError` because a bad option is a configuration mistake
    (a tournament file, a command line), found before any move is made.
    """


class IllegalActionError(RulesError):
    """A well-formed action that the rules do not allow in this state.

    Attributes:
        action: the text of the rejected action.
        rule: the rule that forbids it, e.g.
            ``"docs/rules.md 2.2: draw needs 3+ tiles in the stock"``.
        legal: the text of every legal action in that state.
    """

    def __init__(self, action: str, rule: str, legal: tuple[str, ...]) -> None:
        self.action = action
        self.rule = rule
        self.legal = legal
        shown = ", ".join(legal) if legal else "none"
        super().__init__(f"illegal action '{action}': {rule}; legal actions: {shown}")


class GameOverError(RulesError):
    """An action was applied to a game that has already ended."""


class PositionError(RulesError):
    """An explicit position that is inconsistent (a tile twice, a wrong hand size, ...)."""
