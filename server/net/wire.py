"""The protocol forms of the server's own types: time controls, deal modes and what spectators see.

:mod:`domino_arena.sdk.wire` translates the rules' types; these need the server's
(:class:`~domino_arena.server.play.timecontrol.TimeControl`, the spectator hub's items), which
the SDK must not import, so they are translated here, once, for every servicer.
"""

from __future__ import annotations

from domino_arena.sdk.wire import (
    game_to_proto,
    hand_result_to_proto,
    match_result_to_proto,
    spectator_table_to_proto,
    step_to_proto,
)
from domino_arena.server.play.roster import Roster
from domino_arena.server.play.scheduler import DealMode
from domino_arena.server.play.spectators import (
    LiveMatch,
    PublicHandEnd,
    PublicStep,
    WatchEnd,
    WatchStart,
)
from domino_arena.server.play.timecontrol import TimeControl
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


def spectator_message(
    match_id: str, item: WatchStart | PublicStep | PublicHandEnd | WatchEnd
) -> admin_pb.SpectatorMessage:
    """Return the message a spectator of ``match_id`` is sent for one of the hub's items."""
    if isinstance(item, PublicStep):
        message = admin_pb.SpectatorMessage(
            event=pb.Event(
                match_id=match_id,
                step=step_to_proto(item.entry),
                scores=item.scores,
                deal=item.deal,
            )
        )
        if item.table is not None:
            message.table.CopyFrom(spectator_table_to_proto(item.table))
        return message
    if isinstance(item, PublicHandEnd):
        return admin_pb.SpectatorMessage(
            hand_end=hand_result_to_proto(item.hand, item.scores, match_id)
        )
    if isinstance(item, WatchEnd):
        return admin_pb.SpectatorMessage(
            match_end=pb.MatchEnd(
                match_id=match_id, result=match_result_to_proto(item.result, item.sides)
            )
        )
    spec = item.spec
    return admin_pb.SpectatorMessage(
        start=admin_pb.WatchStart(
            match_id=spec.match_id,
            game=game_to_proto(spec.game),
            players=spec.bots,
            time_control=time_control_to_proto(spec.time_control),
            tournament_id=spec.tournament_id or "",
        )
    )


def live_match_to_proto(live: LiveMatch) -> admin_pb.LiveMatch:
    """Return a watchable match as ``ListLive`` lists it."""
    spec = live.spec
    message = admin_pb.LiveMatch(
        match_id=spec.match_id,
        game=game_to_proto(spec.game),
        players=spec.bots,
        tournament_id=spec.tournament_id or "",
        steps=live.steps,
        deal=live.deal,
        scores=live.scores,
        watchers=live.watchers,
    )
    message.started.FromDatetime(live.started)
    return message


def connected_bots(roster: Roster) -> list[admin_pb.ConnectedBot]:
    """Every connected bot: its name, the games it plays, the matches it is seated in now."""
    seated = roster.seated
    return [
        admin_pb.ConnectedBot(name=c.name, games=c.games, matches=seated[c.name])
        for c in roster.connections()
    ]
