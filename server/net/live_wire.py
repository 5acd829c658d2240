"""The protocol forms of live matches: what spectators are sent, ``ListLive`` and
``ListConnected`` (the spectator hub's items and the roster, translated once for every servicer).

Apart from :mod:`.wire` because the hub and the roster belong to the referee: the command line's
client imports :mod:`.wire` on the light install, never this.
"""

from __future__ import annotations

from domino_arena.sdk.wire import (
    game_to_proto,
    hand_result_to_proto,
    match_result_to_proto,
    spectator_table_to_proto,
    step_to_proto,
)
from domino_arena.server.names import is_person
from domino_arena.server.net.wire import (
    live_view_from_proto,
    live_view_to_proto,
    time_control_to_proto,
)
from domino_arena.server.play.roster import Roster
from domino_arena.server.play.spectators import (
    LiveMatch,
    PublicHandEnd,
    PublicStep,
    WatchEnd,
    WatchStart,
)
from domino_arena.server.store.live_views import LIVE_VIEW_NONE, LIVE_VIEW_PUBLIC
from domino_arena.v1 import admin_pb2 as admin_pb
from domino_arena.v1 import referee_pb2 as pb


def live_view_of_proto(value: admin_pb.LiveView.ValueType) -> str:
    """The live view a live match's message says (unspecified: public, as from a referee
    before live views; an undefined value: none, shown to nobody)."""
    try:
        return live_view_from_proto(value) or LIVE_VIEW_PUBLIC
    except ValueError:
        return LIVE_VIEW_NONE


def spectator_message(
    match_id: str,
    item: WatchStart | PublicStep | PublicHandEnd | WatchEnd,
    *,
    live_view: str = LIVE_VIEW_PUBLIC,
) -> admin_pb.SpectatorMessage:
    """Return the message a spectator of ``match_id`` is sent for one of the hub's items
    (``live_view``: the match's, said in its start)."""
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
            course=spec.course,
            live_view=live_view_to_proto(live_view),
            people=[is_person(name) for name in spec.bots],
        )
    )


def live_match_to_proto(live: LiveMatch, live_view: str = LIVE_VIEW_PUBLIC) -> admin_pb.LiveMatch:
    """Return a watchable match as ``ListLive`` lists it, with its live view."""
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
        course=spec.course,
        live_view=live_view_to_proto(live_view),
        people=[is_person(name) for name in spec.bots],
    )
    message.started.FromDatetime(live.started)
    return message


def connected_bots(roster: Roster) -> list[admin_pb.ConnectedBot]:
    """Every connected bot: its name, the games it plays, the matches it is seated in now (a
    person's seat is no bot: docs/people.md)."""
    seated = roster.seated
    return [
        admin_pb.ConnectedBot(name=c.name, games=c.games, matches=seated[c.name])
        for c in roster.connections()
        if not is_person(c.name)
    ]
