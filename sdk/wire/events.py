"""Steps (one action of one seat) <-> ``Step``, and the ``Event`` that tells a seat of one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from domino_arena.sdk.rules import CHANCE, Action, LogEntry
from domino_arena.v1 import games_pb2, referee_pb2

from .common import ConversionError, _varint, field_bytes, memo
from .tiles_actions import action_message, decode_action

# -- steps ----------------------------------------------------------------------------------------


def step_to_proto(entry: LogEntry) -> games_pb2.Step:
    """Return the wire form of one step (pass it through ``public_entry`` first for a seat)."""
    message = games_pb2.Step()
    message.CopyFrom(step_message(entry))
    return message


_STEPS: dict[int, tuple[LogEntry, games_pb2.Step]] = {}


def step_message(entry: LogEntry) -> games_pb2.Step:
    return memo(_STEPS, entry, _build_step)


def _build_step(entry: LogEntry) -> games_pb2.Step:
    try:
        action = action_message(entry.action)
    except ConversionError as exc:
        raise exc.under("step") from None
    return games_pb2.Step(seat=entry.seat, action=action)


def event_to_proto(
    entry: LogEntry, scores: Sequence[int], deal: int, match_id: str = ""
) -> referee_pb2.Event:
    """Return the ``Event`` of one step (already as its seat may see it, see ``public_entry``);
    ``scores`` and ``deal`` are those after the step. Carried inside another message, an event
    leaves ``match_id`` empty.
    """
    event = referee_pb2.Event(match_id=match_id, scores=scores, deal=deal)
    builder = _EVENT_STEP_BUILDERS.get(entry.seat)
    if builder is None:  # no game has such a seat; the step is still what it is
        event.step.CopyFrom(_build_step(entry))
        return event
    by_action = _EVENT_STEP_FIELD.setdefault(entry.seat, {})
    event.MergeFromString(memo(by_action, entry.action, builder))
    return event


class EventEncoder:
    """Builds the ``Event`` of each step once for all the seats of a match that see it alike.

    The referee tells every seat of a step in turn, with the same step and scores objects
    unless the step is hidden from some (``public_entry``), so the encoder keeps the last event
    it built and hands it out again while the same objects come. Identity, not equality: an
    equal step of another match or move never matches, so sharing one encoder is always safe.
    A kept event must only ever be copied into the messages that carry it, never changed.
    """

    __slots__ = ("__weakref__", "_last")  # weakly held: a match keeps it while its seats live

    def __init__(self) -> None:
        self._last: tuple[LogEntry, Sequence[int], int, referee_pb2.Event, bytes] | None = None

    def encode(self, step: LogEntry, scores: Sequence[int], deal: int) -> referee_pb2.Event:
        """Return the event of ``step`` (see :func:`event_to_proto`), shared while it repeats."""
        return self._encoded(step, scores, deal)[3]

    def encode_entry(self, step: LogEntry, scores: Sequence[int], deal: int) -> bytes:
        """Return :meth:`encode`'s event as one entry of ``ActionRequest.events`` on the wire
        (its tag, its length, its bytes), serialized once for every seat that sees it alike.

        A seat's request takes all of its entries joined in one ``MergeFromString`` (one
        parse, where adding the messages one by one copies each); :func:`events_of_entries`
        turns them back into messages for the other messages that carry events.
        """
        return self._encoded(step, scores, deal)[4]

    def _encoded(
        self, step: LogEntry, scores: Sequence[int], deal: int
    ) -> tuple[LogEntry, Sequence[int], int, referee_pb2.Event, bytes]:
        last = self._last
        if last is not None and last[0] is step and last[1] is scores and last[2] == deal:
            return last
        event = event_to_proto(step, scores, deal)
        payload = event.SerializeToString()
        last = self._last = (
            step,
            scores,
            deal,
            event,
            _REQUEST_EVENT_TAG + _varint(len(payload)) + payload,
        )
        return last


_REQUEST_EVENT_TAG: Final = _varint(referee_pb2.ActionRequest.EVENTS_FIELD_NUMBER << 3 | 2)


def events_of_entries(entries: Sequence[bytes]) -> Sequence[referee_pb2.Event]:
    """Return the events of :meth:`EventEncoder.encode_entry`'s ``entries``, in order."""
    return referee_pb2.ActionRequest.FromString(b"".join(entries)).events


_EVENT_STEP_FIELD: dict[int, dict[int, tuple[Action, bytes]]] = {}
"""Seat -> action (by identity) -> ``Event.step`` (field 2) bytes. A step's log entry is new
each time, but its action is one of the objects the engine hands out move after move."""


def _event_step_builder(seat: int) -> Callable[[Action], bytes]:
    def build(action: Action) -> bytes:
        return field_bytes(2, _build_step(LogEntry(seat, action)))

    return build


_EVENT_STEP_BUILDERS: Final = {seat: _event_step_builder(seat) for seat in range(CHANCE, 4)}


def step_from_proto(message: games_pb2.Step, where: str = "step") -> LogEntry:
    """Return the step ``message`` holds; another seat's discard may lack its tile.

    Raises:
        ConversionError: the seat is below ``CHANCE`` or the action is missing or malformed.
    """
    try:
        return decode_step(message)
    except ConversionError as exc:
        raise exc.under(where) from None


def decode_step(message: games_pb2.Step) -> LogEntry:
    if message.seat < CHANCE:
        raise ConversionError("seat", str(message.seat), "a seat 0 or more, or -1 for the deal")
    if not message.HasField("action"):
        raise ConversionError("action", "missing", "the action taken")
    try:
        return LogEntry(message.seat, decode_action(message.action, hidden=True))
    except ConversionError as exc:
        raise exc.under("action") from None
