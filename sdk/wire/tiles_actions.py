"""Tiles and actions <-> their wire form (``games.proto``), and the action of a bot's reply.

An action is malformed here exactly when its canonical text would not parse (``bid 3`` is well
formed, merely illegal; an end 9 is malformed). The tile decoders are shared by the other
converters of the family (observations, steps).

>>> from domino_arena.sdk.rules import Play, Tile
>>> message = action_to_proto(Play(Tile(6, 4), "E"))
>>> action_from_proto(message)
Play(tile=Tile(6, 4), end='E')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from domino_arena.sdk.match.bot_errors import BotError
from domino_arena.sdk.rules import (
    DEAL,
    DOUBLE_SIX,
    DRAW,
    NO_TRUMP,
    PASS,
    TRUMP_DOUBLES,
    Action,
    Bid,
    Deal,
    Discard,
    Draw,
    Pass,
    Play,
    Tile,
    Trump,
)
from domino_arena.sdk.rules.tiles import MAX_PIP
from domino_arena.v1 import games_pb2, referee_pb2

from .common import ConversionError, cached, memo

NUMBER: Final = f"a number 0-{MAX_PIP}"

TILE_MSG: Final = tuple(games_pb2.Tile(high=t.high, low=t.low) for t in DOUBLE_SIX)
"""``TILE_MSG[tile.index]``: the wire form of every tile, built once."""
TILE_AT: Final = {(t.high, t.low): t for t in DOUBLE_SIX}
"""The tile for a well-formed (high, low) pair; a swapped or out-of-range pair is absent."""
PAIR_AT: Final = {(a, b): (a, b) for a in range(MAX_PIP + 1) for b in range(MAX_PIP + 1)}
LAID_MSG: Final = {pair: games_pb2.LaidTile(inner=pair[0], outer=pair[1]) for pair in PAIR_AT}

_END_CODE: Final = {
    "W": games_pb2.LINE_END_W,
    "E": games_pb2.LINE_END_E,
    "N": games_pb2.LINE_END_N,
    "S": games_pb2.LINE_END_S,
}
_END_NAME: Final = {code: name for name, code in _END_CODE.items()}
_DIGITS: Final = tuple(str(n) for n in range(MAX_PIP + 1))

TRUMP_MSG: Final = {
    **{n: games_pb2.TrumpAction(suit=games_pb2.TRUMP_SUIT_NUMBER, number=n) for n in range(7)},
    TRUMP_DOUBLES: games_pb2.TrumpAction(suit=games_pb2.TRUMP_SUIT_DOUBLES),
    NO_TRUMP: games_pb2.TrumpAction(suit=games_pb2.TRUMP_SUIT_NONE),
}
_TRUMP_EXPECTED: Final = (
    "TRUMP_SUIT_NUMBER with a number 0-6, TRUMP_SUIT_DOUBLES or TRUMP_SUIT_NONE"
)


# -- actions --------------------------------------------------------------------------------------


def action_to_proto(action: Action) -> games_pb2.Action:
    """Return the wire form of ``action`` (a hidden discard has no tile).

    Raises:
        ConversionError: a value with no wire form, e.g. a play on an end named ``"X"``.
    """
    message = games_pb2.Action()
    message.CopyFrom(action_message(action))
    return message


_ACTIONS: dict[int, tuple[Action, games_pb2.Action]] = {}
_ACTIONS_BY_VALUE: dict[Action, games_pb2.Action] = {}


def action_message(action: Action) -> games_pb2.Action:
    return memo(_ACTIONS, action, _action_by_value)


def _action_by_value(action: Action) -> games_pb2.Action:
    """Some engines build fresh action objects per position; equal ones share one message."""
    return cached(_ACTIONS_BY_VALUE, action, _build_action)


def _build_action(action: Action) -> games_pb2.Action:
    try:
        return _encode_action(action)
    except ConversionError as exc:
        raise exc.under("action") from None


def _encode_action(action: Action) -> games_pb2.Action:
    if isinstance(action, Play):
        tile = TILE_MSG[action.tile.index]
        end = action.end
        if end is None:
            return games_pb2.Action(play=games_pb2.PlayAction(tile=tile))
        code = _END_CODE.get(end)
        if code is not None:
            return games_pb2.Action(play=games_pb2.PlayAction(tile=tile, end=code))
        if end in _DIGITS:
            play = games_pb2.PlayAction(tile=tile, end=games_pb2.LINE_END_NUMBER, number=int(end))
            return games_pb2.Action(play=play)
        raise ConversionError("play.end", repr(end), "W, E, N, S or (Doubles) a digit 0-6")
    if isinstance(action, Draw):
        return games_pb2.Action(draw=games_pb2.DrawAction())
    if isinstance(action, Pass):
        message = games_pb2.Action()
        getattr(message, "pass").SetInParent()  # ``pass`` is a Python keyword
        return message
    if isinstance(action, Bid):
        if not 0 <= action.value <= 0xFFFFFFFF:
            raise ConversionError("bid.value", str(action.value), "a whole number 0 or more")
        return games_pb2.Action(bid=games_pb2.BidAction(value=action.value))
    if isinstance(action, Discard):
        if action.tile is None:
            return games_pb2.Action(discard=games_pb2.DiscardAction())
        return games_pb2.Action(discard=games_pb2.DiscardAction(tile=TILE_MSG[action.tile.index]))
    if isinstance(action, Trump):
        return games_pb2.Action(trump=TRUMP_MSG[action.suit])
    if isinstance(action, Deal):
        return games_pb2.Action(deal=games_pb2.DealAction())
    raise ConversionError("", f"a {type(action).__name__}", "an action of the rules library")


def action_from_proto(message: games_pb2.Action, where: str = "action") -> Action:
    """Return the action ``message`` holds, as a bot sends it (a discard must name its tile).

    Args:
        where: the field path of ``message``, used in error messages.

    Raises:
        ConversionError: the message is malformed; the text names the field and what was
            expected, e.g. ``"action.play.tile: missing; expected the tile to play"``.
    """
    try:
        return decode_action(message, hidden=False)
    except ConversionError as exc:
        raise exc.under(where) from None


def bot_error_to_proto(error: BotError) -> referee_pb2.BotError:
    """Return the ``ActionReply.error`` a bot sends when its ``choose`` raised."""
    return referee_pb2.BotError(type=error.type, message=error.message)


def reply_action(reply: referee_pb2.ActionReply) -> Action | BotError | str:
    """Return the action of a bot's reply, the error it reports instead (its ``choose``
    raised: ``ActionReply.error``), or why it has neither: the words the referee sends back.

    An empty reply (what an older SDK sent when ``choose`` failed) is an answer, a malformed
    one, not a conversion error; so is a reply with both an action and an error.
    """
    if reply.HasField("error"):
        if reply.HasField("action"):
            return "ActionReply sets both action and error; expected one of them"
        return BotError(reply.error.type, reply.error.message)
    if not reply.HasField("action"):
        return "ActionReply.action is missing"
    try:
        return action_from_proto(reply.action)
    except ConversionError as exc:
        return str(exc)


_KINDS: Final = "one of play, draw, pass, bid, discard, trump, deal"
_SIMPLE: Final[dict[str, Action]] = {"draw": DRAW, "pass": PASS, "deal": DEAL}
_PLAY_AT: Final = {
    (tile.high, tile.low, code, 0): Play(tile, name)
    for tile in DOUBLE_SIX
    for code, name in ((games_pb2.LINE_END_UNSPECIFIED, None), *_END_NAME.items())
} | {
    (tile.high, tile.low, games_pb2.LINE_END_NUMBER, n): Play(tile, _DIGITS[n])
    for tile in DOUBLE_SIX
    for n in range(MAX_PIP + 1)
}
"""Every well-formed play by (high, low, end, number): decoding a play is one lookup."""


def decode_action(message: games_pb2.Action, hidden: bool) -> Action:
    """Decode ``message``; ``hidden`` allows another seat's discard without its tile."""
    kind = message.WhichOneof("kind")
    if kind == "play":
        play = message.play
        tile = play.tile
        found = _PLAY_AT.get((tile.high, tile.low, play.end, play.number))
        if found is not None and play.HasField("tile"):
            return found
        return _bad_play(play)
    if kind is None:
        raise ConversionError("", "missing", _KINDS)
    simple = _SIMPLE.get(kind)
    if simple is not None:
        return simple
    if kind == "bid":
        return Bid(message.bid.value)
    if kind == "discard":
        discard = message.discard
        if discard.HasField("tile"):
            try:
                return Discard(decode_tile(discard.tile))
            except ConversionError as exc:
                raise exc.under("discard.tile") from None
        if hidden:
            return Discard(None)
        raise ConversionError("discard.tile", "missing", "the tile to discard")
    assert kind == "trump"
    try:
        return Trump(decode_trump(message.trump))
    except ConversionError as exc:
        raise exc.under("trump") from None


def _bad_play(play: games_pb2.PlayAction) -> Action:
    """Raise the error that explains why ``play`` is not in ``_PLAY_AT``."""
    if not play.HasField("tile"):
        raise ConversionError("play.tile", "missing", "the tile to play")
    try:
        decode_tile(play.tile)
    except ConversionError as exc:
        raise exc.under("play.tile") from None
    end = play.end
    if end == games_pb2.LINE_END_NUMBER:
        raise ConversionError("play.number", str(play.number), f"{NUMBER}, the end's number")
    if end in _END_NAME or end == games_pb2.LINE_END_UNSPECIFIED:
        raise ConversionError(
            "play.number", f"{play.number} without LINE_END_NUMBER", "0 unless end is NUMBER"
        )
    raise ConversionError(
        "play.end",
        f"unknown value {end}",
        "LINE_END_UNSPECIFIED (the opening tile, Moon), LINE_END_W, LINE_END_E, LINE_END_N, "
        "LINE_END_S or LINE_END_NUMBER",
    )


def decode_trump(message: games_pb2.TrumpAction) -> int:
    suit = message.suit
    if suit == games_pb2.TRUMP_SUIT_NUMBER:
        if message.number > MAX_PIP:
            raise ConversionError("number", str(message.number), f"{NUMBER}, the trump suit")
        return message.number
    if suit == games_pb2.TRUMP_SUIT_DOUBLES or suit == games_pb2.TRUMP_SUIT_NONE:
        if message.number:
            raise ConversionError(
                "number", f"{message.number} without TRUMP_SUIT_NUMBER", "0 unless suit is NUMBER"
            )
        return TRUMP_DOUBLES if suit == games_pb2.TRUMP_SUIT_DOUBLES else NO_TRUMP
    problem = "missing" if suit == games_pb2.TRUMP_SUIT_UNSPECIFIED else f"unknown value {suit}"
    raise ConversionError("suit", problem, _TRUMP_EXPECTED)


# -- tiles ----------------------------------------------------------------------------------------


def decode_tile(message: games_pb2.Tile) -> Tile:
    tile = TILE_AT.get((message.high, message.low))
    if tile is None:
        raise _bad_tile(message.high, message.low)
    return tile


def _bad_tile(high: int, low: int) -> ConversionError:
    if high > MAX_PIP:
        return ConversionError("high", str(high), NUMBER)
    if low > MAX_PIP:
        return ConversionError("low", str(low), NUMBER)
    return ConversionError(
        "", f"high {high} below low {low}", f"the higher number in high: high {low}, low {high}"
    )


def decode_tiles(messages: Sequence[games_pb2.Tile], field: str) -> tuple[Tile, ...]:
    at = TILE_AT
    tiles = tuple([at.get((m.high, m.low)) for m in messages])
    if None in tiles:
        index = tiles.index(None)
        bad = messages[index]
        raise _bad_tile(bad.high, bad.low).under(f"{field}[{index}]")
    return tiles  # type: ignore[return-value]  # None was ruled out above


def decode_optional_tile(
    holder: games_pb2.DoublesView | games_pb2.MoonView, field: str
) -> Tile | None:
    if not holder.HasField(field):  # type: ignore[arg-type]  # the caller passes a Tile field
        return None
    try:
        return decode_tile(getattr(holder, field))
    except ConversionError as exc:
        raise exc.under(field) from None


def decode_pairs(messages: Sequence[games_pb2.LaidTile], field: str) -> tuple[tuple[int, int], ...]:
    at = PAIR_AT
    pairs = tuple([at.get((m.inner, m.outer)) for m in messages])
    if None in pairs:
        index = pairs.index(None)
        bad = messages[index]
        name, value = ("inner", bad.inner) if bad.inner > MAX_PIP else ("outer", bad.outer)
        raise ConversionError(f"{field}[{index}].{name}", str(value), NUMBER)
    return pairs  # type: ignore[return-value]  # None was ruled out above


def decode_numbers(values: Sequence[int], field: str) -> tuple[int, ...]:
    for index, value in enumerate(values):
        if value > MAX_PIP:
            raise ConversionError(f"{field}[{index}]", str(value), NUMBER)
    return tuple(values)


def decode_seat(value: int, players: int, field: str) -> int:
    if not 0 <= value < players:
        raise ConversionError(field, str(value), f"a seat 0-{players - 1}")
    return value
