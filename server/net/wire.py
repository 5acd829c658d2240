"""The protocol forms of the server's own settings: time controls, deal modes, live views,
hosted bots' sandbox limits.

:mod:`domino_arena.sdk.wire` translates the rules' types; these need the server's
(:class:`~domino_arena.server.play.timecontrol.TimeControl`, the scheduler's deal modes), which
the SDK must not import, so they are translated here, once, for every servicer and for the
command line's client. This module imports nothing of the server extra (no database, no trio):
the light install's client commands use it (docs/admin.md: the light install). What spectators and
the admin see of live matches is in :mod:`.live_wire`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from domino_arena.server.play.timecontrol import TimeControl
from domino_arena.server.store.live_views import (
    LIVE_VIEW_NONE,
    LIVE_VIEW_PUBLIC,
    LIVE_VIEW_SIGNED_IN,
)
from domino_arena.server.tournaments.scheduler import DealMode
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import referee_pb2 as pb


def time_control_to_proto(time_control: TimeControl) -> pb.TimeControl:
    """Return the protocol form of ``time_control`` (whole milliseconds)."""
    move_ms, bank_ms, grace_ms = time_control.to_ms()
    return pb.TimeControl(move_ms=move_ms, bank_ms=bank_ms, grace_ms=grace_ms)


def time_control_from_proto(message: pb.TimeControl) -> TimeControl:
    """Return the time control of ``message``; a zero field takes the default.

    Raises:
        ValueError: a field the time control refuses (its message names it).
    """
    return TimeControl.from_ms(message.move_ms, message.bank_ms, message.grace_ms)


_DEAL_MODES: dict[DealMode, admin_pb.DealMode.ValueType] = {
    DealMode.DUPLICATE: admin_pb.DEAL_MODE_DUPLICATE,
    DealMode.SPREAD: admin_pb.DEAL_MODE_SPREAD,
    DealMode.FRESH: admin_pb.DEAL_MODE_FRESH,
}
_DEAL_MODES_BACK: dict[admin_pb.DealMode.ValueType, DealMode] = {
    value: mode for mode, value in _DEAL_MODES.items()
}


def deal_mode_to_proto(mode: DealMode) -> admin_pb.DealMode.ValueType:
    """Return the protocol value of a deal mode."""
    return _DEAL_MODES[mode]


def deal_mode_from_proto(value: admin_pb.DealMode.ValueType) -> DealMode | None:
    """Return the deal mode of a protocol value (unspecified: duplicate); None if undefined."""
    if value == admin_pb.DEAL_MODE_UNSPECIFIED:
        return DealMode.DUPLICATE
    return _DEAL_MODES_BACK.get(value)


_LIVE_VIEWS: dict[str, admin_pb.LiveView.ValueType] = {
    LIVE_VIEW_PUBLIC: admin_pb.LIVE_VIEW_PUBLIC,
    LIVE_VIEW_SIGNED_IN: admin_pb.LIVE_VIEW_SIGNED_IN,
    LIVE_VIEW_NONE: admin_pb.LIVE_VIEW_NONE,
}
_LIVE_VIEWS_BACK: dict[admin_pb.LiveView.ValueType, str] = {
    value: view for view, value in _LIVE_VIEWS.items()
}


def live_view_to_proto(view: str | None) -> admin_pb.LiveView.ValueType:
    """Return the protocol value of a stored live view (None, a tournament's "the course's":
    unspecified)."""
    return admin_pb.LIVE_VIEW_UNSPECIFIED if view is None else _LIVE_VIEWS[view]


def live_view_from_proto(
    value: admin_pb.LiveView.ValueType, field: str = "live_view"
) -> str | None:
    """Return the stored live view of a protocol value; None for unspecified (what that means
    is the message's: a course's public, a tournament's its course's, an update's unchanged).

    Raises:
        ValueError: a value the protocol does not define (the message names ``field``).
    """
    if value == admin_pb.LIVE_VIEW_UNSPECIFIED:
        return None
    view = _LIVE_VIEWS_BACK.get(value)
    if view is None:
        raise ValueError(
            f"{field}: unknown value {int(value)}; expected LIVE_VIEW_PUBLIC, "
            "LIVE_VIEW_SIGNED_IN or LIVE_VIEW_NONE"
        )
    return view


HOSTING_LIMIT_FIELDS: Final = (
    "memory_mb",
    "cpu_seconds",
    "processes",
    "open_files",
    "file_mb",
    "scratch_mb",
    "log_kb",
)
"""The fields of ``HostingLimits``: the names of ``server/hosting/spec/limits.py``'s limits."""


def hosting_limits_to_proto(limits: Mapping[str, int] | None) -> admin_pb.HostingLimits:
    """The limits set (a course's or a tournament's; None or {}: none) as a message (0: unset)."""
    return admin_pb.HostingLimits(**{k: v for k, v in (limits or {}).items() if v})


def hosting_limits_from_proto(message: admin_pb.HostingLimits) -> dict[str, int]:
    """The limits a message sets (its non-zero fields), unchecked
    (``server/store/hosted_settings.check_limits`` checks them)."""
    return {name: getattr(message, name) for name in HOSTING_LIMIT_FIELDS if getattr(message, name)}
