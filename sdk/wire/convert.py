"""The one translation layer between the rules library's values and the wire (``games.proto``).

The referee and the SDK client both speak through here, so a bot sees exactly the rules
library's own types (:class:`~.rules.Observation` with its legal actions, :class:`~.rules.Action`)
and the referee validates exactly what the bot sent. Every function comes in a ``*_to_proto`` /
``*_from_proto`` pair and the pairs round-trip: ``observation_from_proto(observation_to_proto(o))
== o`` for every observation of every game.

Decoding is strict: a message the rules library cannot represent faithfully (a missing ``oneof``,
a tile number above 6, an enum value this version does not know, a play without a tile, ...)
raises :class:`ConversionError` naming the field path and what was expected, which the referee
sends back to the bot word for word. An action is malformed here exactly when its canonical text
would not parse (``bid 3`` is well formed, merely illegal; an end 9 is malformed).

>>> from domino_arena.sdk.rules import Play, Tile
>>> message = action_to_proto(Play(Tile(6, 4), "E"))
>>> action_from_proto(message)
Play(tile=Tile(6, 4), end='E')

Encoding runs on every move of the referee, so the messages of tiles, actions, steps and games
are built once and copied into place (``extend`` copies), never rebuilt field by field.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, TypeVar

from google.protobuf.message import Message

from domino_arena.sdk.rules import (
    CHANCE,
    DEAL,
    DOUBLE_SIX,
    DRAW,
    NO_TRUMP,
    PASS,
    TERMINAL,
    TRUMP_DOUBLES,
    Action,
    Bid,
    Deal,
    Discard,
    DoublesGame,
    DoublesObservation,
    Draw,
    Game,
    HandEnd,
    HandResult,
    LogEntry,
    MoonGame,
    MoonObservation,
    Observation,
    Outcome,
    Pass,
    PassingGame,
    PassingObservation,
    Play,
    RulesError,
    StraightGame,
    StraightLayout,
    StraightObservation,
    Tile,
    Trick,
    Trump,
)
from domino_arena.sdk.rules.moon import BID_VALUES, Phase
from domino_arena.sdk.rules.passing import TARGET_RULES
from domino_arena.sdk.rules.tiles import MAX_PIP
from domino_arena.v1 import games_pb2, referee_pb2

__all__ = [
    "ConversionError",
    "action_from_proto",
    "action_to_proto",
    "event_to_proto",
    "game_from_proto",
    "game_to_proto",
    "hand_end_from_kind",
    "hand_end_kind",
    "hand_result_from_proto",
    "hand_result_to_proto",
    "observation_from_proto",
    "observation_to_proto",
    "outcome_from_proto",
    "step_from_proto",
    "step_to_proto",
]


class ConversionError(ValueError):
    """A message (or value) that has no faithful counterpart on the other side.

    Attributes:
        field: the path of the offending field, e.g. ``"action.play.tile"``.
        problem: what is there, e.g. ``"missing"`` or ``"9"``.
        expected: what would have been accepted.
    """

    def __init__(self, field: str, problem: str, expected: str) -> None:
        self.field = field
        self.problem = problem
        self.expected = expected
        where = f"{field}: " if field else ""
        super().__init__(f"{where}{problem}; expected {expected}")

    def under(self, prefix: str) -> ConversionError:
        """Return this error with its field path placed under ``prefix``."""
        field = f"{prefix}.{self.field}" if self.field else prefix
        return ConversionError(field, self.problem, self.expected)


# -- small shared tables --------------------------------------------------------------------------

_GAME_NAMES: Final = "one of moon, passing, straight, doubles"
_NUMBER: Final = f"a number 0-{MAX_PIP}"

_TILE_MSG: Final = tuple(games_pb2.Tile(high=t.high, low=t.low) for t in DOUBLE_SIX)
"""``_TILE_MSG[tile.index]``: the wire form of every tile, built once."""
_TILE_AT: Final = {(t.high, t.low): t for t in DOUBLE_SIX}
"""The tile for a well-formed (high, low) pair; a swapped or out-of-range pair is absent."""
_PAIR_AT: Final = {(a, b): (a, b) for a in range(MAX_PIP + 1) for b in range(MAX_PIP + 1)}
_LAID_MSG: Final = {pair: games_pb2.LaidTile(inner=pair[0], outer=pair[1]) for pair in _PAIR_AT}

_END_CODE: Final = {
    "W": games_pb2.LINE_END_W,
    "E": games_pb2.LINE_END_E,
    "N": games_pb2.LINE_END_N,
    "S": games_pb2.LINE_END_S,
}
_END_NAME: Final = {code: name for name, code in _END_CODE.items()}
_DIGITS: Final = tuple(str(n) for n in range(MAX_PIP + 1))

_TRUMP_MSG: Final = {
    **{n: games_pb2.TrumpAction(suit=games_pb2.TRUMP_SUIT_NUMBER, number=n) for n in range(7)},
    TRUMP_DOUBLES: games_pb2.TrumpAction(suit=games_pb2.TRUMP_SUIT_DOUBLES),
    NO_TRUMP: games_pb2.TrumpAction(suit=games_pb2.TRUMP_SUIT_NONE),
}
_TRUMP_EXPECTED: Final = (
    "TRUMP_SUIT_NUMBER with a number 0-6, TRUMP_SUIT_DOUBLES or TRUMP_SUIT_NONE"
)

_PHASE_CODE: Final = {
    Phase.BIDDING: games_pb2.MOON_PHASE_BIDDING,
    Phase.DISCARD: games_pb2.MOON_PHASE_DISCARD,
    Phase.TRUMP: games_pb2.MOON_PHASE_TRUMP,
    Phase.PLAYING: games_pb2.MOON_PHASE_PLAYING,
    Phase.DEAL: games_pb2.MOON_PHASE_DEAL,
    Phase.OVER: games_pb2.MOON_PHASE_OVER,
}
_PHASE_OF: Final = {code: phase for phase, code in _PHASE_CODE.items()}
_MOON_PLAY_MSG: Final = {
    (seat, tile): games_pb2.MoonPlay(seat=seat, tile=_TILE_MSG[tile.index])
    for seat in range(MoonGame().num_players)
    for tile in DOUBLE_SIX
}

_TARGET_RULE_CODE: Final = {
    "gamerules": games_pb2.TARGET_RULE_GAMERULES,
    "pagat": games_pb2.TARGET_RULE_PAGAT,
}
_TARGET_RULE_OF: Final = {
    games_pb2.TARGET_RULE_UNSPECIFIED: TARGET_RULES[0],
    **{code: rule for rule, code in _TARGET_RULE_CODE.items()},
}

_HAND_END_KIND: Final = {
    HandEnd.DOMINO: referee_pb2.HAND_END_KIND_DOMINO,
    HandEnd.BLOCKED: referee_pb2.HAND_END_KIND_BLOCKED,
    HandEnd.PASSED_OUT: referee_pb2.HAND_END_KIND_PASSED_OUT,
    HandEnd.TRICKS: referee_pb2.HAND_END_KIND_TRICKS,
    HandEnd.VOID: referee_pb2.HAND_END_KIND_VOID,
    HandEnd.TARGET: referee_pb2.HAND_END_KIND_TARGET,
}
_HAND_END_OF: Final[dict[int, HandEnd]] = {int(code): end for end, code in _HAND_END_KIND.items()}

K = TypeVar("K")
M = TypeVar("M")


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, message: Message) -> bytes:
    """Return the wire bytes of ``message`` as field ``number`` of the message holding it.

    Filling a repeated message field from such bytes (one ``MergeFromString`` of them all,
    joined) is several times faster than copying the messages in one by one, and encoding runs
    on every move of the referee.
    """
    payload = message.SerializeToString()
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


_CACHE_LIMIT: Final = 8192
"""Entries a message cache keeps before it starts over, so it never grows without bound."""


def _cached(cache: dict[K, M], key: K, build: Callable[[K], M]) -> M:
    """Return the message built for ``key`` (by equality), building it once."""
    message = cache.get(key)
    if message is None:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        message = cache[key] = build(key)
    return message


def _memo(cache: dict[int, tuple[K, M]], value: K, build: Callable[[K], M]) -> M:
    """Return the message built for the object ``value`` (by identity), building it once.

    The engines hand out the same action, log entry and trick objects move after move, and
    hashing a dataclass costs about as much as building a small message, so these caches key
    on ``id``.
    The entry keeps ``value`` alive, so its id cannot be reused while the entry exists.
    """
    hit = cache.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    message = build(value)
    cache[id(value)] = (value, message)
    return message


# -- games ----------------------------------------------------------------------------------------


def game_to_proto(game: Game) -> games_pb2.GameConfig:
    """Return the wire form of ``game`` with all its options.

    Raises:
        ConversionError: ``game`` is not one of the four registered games.
    """
    message = games_pb2.GameConfig()
    message.CopyFrom(_game_message(game))
    return message


_GAMES: dict[Game, games_pb2.GameConfig] = {}


def _game_message(game: Game) -> games_pb2.GameConfig:
    return _cached(_GAMES, game, _build_game)


def _build_game(game: Game) -> games_pb2.GameConfig:
    if isinstance(game, PassingGame):
        return games_pb2.GameConfig(
            passing=games_pb2.PassingOptions(
                players=game.players,
                partnerships=game.partnerships,
                target_rule=_TARGET_RULE_CODE[game.target_rule],
            )
        )
    if isinstance(game, StraightGame):
        return games_pb2.GameConfig(
            straight=games_pb2.StraightOptions(players=game.players, partnerships=game.partnerships)
        )
    if isinstance(game, DoublesGame):
        return games_pb2.GameConfig(doubles=games_pb2.DoublesOptions(players=game.players))
    if isinstance(game, MoonGame):
        return games_pb2.GameConfig(moon=games_pb2.MoonOptions(deal_limit=game.deal_limit))
    raise ConversionError("game", f"a {type(game).__name__}", _GAME_NAMES)


def game_from_proto(message: games_pb2.GameConfig, where: str = "game") -> Game:
    """Return the game ``message`` configures.

    Args:
        where: the field path of ``message``, used in error messages.

    Raises:
        ConversionError: no game is set, or an option the game refuses.
    """
    try:
        return _game(message)
    except ConversionError as exc:
        raise exc.under(where) from None


def _game(message: games_pb2.GameConfig) -> Game:
    which = message.WhichOneof("game")
    if which is None:
        raise ConversionError("", "missing", _GAME_NAMES)
    if which == "moon":
        return MoonGame(deal_limit=message.moon.deal_limit)
    if which == "doubles":
        players = _players(message.doubles.players, DoublesGame.HAND_SIZES, "doubles.players")
        return DoublesGame(players=players)
    options = message.passing if which == "passing" else message.straight
    cls = PassingGame if which == "passing" else StraightGame
    players = _players(options.players, cls.HAND_SIZES, f"{which}.players")
    if options.partnerships and players != 4:
        raise ConversionError(
            f"{which}.partnerships", f"true with {players} players", "partnerships only with 4"
        )
    if isinstance(options, games_pb2.StraightOptions):
        return StraightGame(players=players, partnerships=options.partnerships)
    rule = _TARGET_RULE_OF.get(options.target_rule)
    if rule is None:
        raise ConversionError(
            "passing.target_rule",
            f"unknown value {options.target_rule}",
            "TARGET_RULE_GAMERULES or TARGET_RULE_PAGAT",
        )
    try:
        return PassingGame(players=players, partnerships=options.partnerships, target_rule=rule)
    except RulesError as exc:
        raise ConversionError("passing", str(exc), "options the Passing Game accepts") from None


def _players(value: int, allowed: dict[int, int], field: str) -> int:
    if value not in allowed:
        shown = "missing" if value == 0 else str(value)
        counts = ", ".join(str(n) for n in sorted(allowed))
        raise ConversionError(field, shown, f"a number of players: {counts}")
    return value


# -- actions --------------------------------------------------------------------------------------


def action_to_proto(action: Action) -> games_pb2.Action:
    """Return the wire form of ``action`` (a hidden discard has no tile).

    Raises:
        ConversionError: a value with no wire form, e.g. a play on an end named ``"X"``.
    """
    message = games_pb2.Action()
    message.CopyFrom(_action_message(action))
    return message


_ACTIONS: dict[int, tuple[Action, games_pb2.Action]] = {}
_ACTIONS_BY_VALUE: dict[Action, games_pb2.Action] = {}


def _action_message(action: Action) -> games_pb2.Action:
    return _memo(_ACTIONS, action, _action_by_value)


def _action_by_value(action: Action) -> games_pb2.Action:
    """Some engines build fresh action objects per position; equal ones share one message."""
    return _cached(_ACTIONS_BY_VALUE, action, _build_action)


def _build_action(action: Action) -> games_pb2.Action:
    try:
        return _encode_action(action)
    except ConversionError as exc:
        raise exc.under("action") from None


def _encode_action(action: Action) -> games_pb2.Action:
    if isinstance(action, Play):
        tile = _TILE_MSG[action.tile.index]
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
        return games_pb2.Action(discard=games_pb2.DiscardAction(tile=_TILE_MSG[action.tile.index]))
    if isinstance(action, Trump):
        return games_pb2.Action(trump=_TRUMP_MSG[action.suit])
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
        return _action(message, hidden=False)
    except ConversionError as exc:
        raise exc.under(where) from None


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


def _action(message: games_pb2.Action, hidden: bool) -> Action:
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
                return Discard(_tile(discard.tile))
            except ConversionError as exc:
                raise exc.under("discard.tile") from None
        if hidden:
            return Discard(None)
        raise ConversionError("discard.tile", "missing", "the tile to discard")
    assert kind == "trump"
    try:
        return Trump(_trump(message.trump))
    except ConversionError as exc:
        raise exc.under("trump") from None


def _bad_play(play: games_pb2.PlayAction) -> Action:
    """Raise the error that explains why ``play`` is not in ``_PLAY_AT``."""
    if not play.HasField("tile"):
        raise ConversionError("play.tile", "missing", "the tile to play")
    try:
        _tile(play.tile)
    except ConversionError as exc:
        raise exc.under("play.tile") from None
    end = play.end
    if end == games_pb2.LINE_END_NUMBER:
        raise ConversionError("play.number", str(play.number), f"{_NUMBER}, the end's number")
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


def _trump(message: games_pb2.TrumpAction) -> int:
    suit = message.suit
    if suit == games_pb2.TRUMP_SUIT_NUMBER:
        if message.number > MAX_PIP:
            raise ConversionError("number", str(message.number), f"{_NUMBER}, the trump suit")
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


def _tile(message: games_pb2.Tile) -> Tile:
    tile = _TILE_AT.get((message.high, message.low))
    if tile is None:
        raise _bad_tile(message.high, message.low)
    return tile


def _bad_tile(high: int, low: int) -> ConversionError:
    if high > MAX_PIP:
        return ConversionError("high", str(high), _NUMBER)
    if low > MAX_PIP:
        return ConversionError("low", str(low), _NUMBER)
    return ConversionError(
        "", f"high {high} below low {low}", f"the higher number in high: high {low}, low {high}"
    )


def _tiles(messages: Sequence[games_pb2.Tile], field: str) -> tuple[Tile, ...]:
    at = _TILE_AT
    tiles = tuple([at.get((m.high, m.low)) for m in messages])
    if None in tiles:
        index = tiles.index(None)
        bad = messages[index]
        raise _bad_tile(bad.high, bad.low).under(f"{field}[{index}]")
    return tiles  # type: ignore[return-value]  # None was ruled out above


def _optional_tile(holder: games_pb2.DoublesView | games_pb2.MoonView, field: str) -> Tile | None:
    if not holder.HasField(field):  # type: ignore[arg-type]  # the caller passes a Tile field
        return None
    try:
        return _tile(getattr(holder, field))
    except ConversionError as exc:
        raise exc.under(field) from None


def _pairs(messages: Sequence[games_pb2.LaidTile], field: str) -> tuple[tuple[int, int], ...]:
    at = _PAIR_AT
    pairs = tuple([at.get((m.inner, m.outer)) for m in messages])
    if None in pairs:
        index = pairs.index(None)
        bad = messages[index]
        name, value = ("inner", bad.inner) if bad.inner > MAX_PIP else ("outer", bad.outer)
        raise ConversionError(f"{field}[{index}].{name}", str(value), _NUMBER)
    return pairs  # type: ignore[return-value]  # None was ruled out above


def _numbers(values: Sequence[int], field: str) -> tuple[int, ...]:
    for index, value in enumerate(values):
        if value > MAX_PIP:
            raise ConversionError(f"{field}[{index}]", str(value), _NUMBER)
    return tuple(values)


def _seat(value: int, players: int, field: str) -> int:
    if not 0 <= value < players:
        raise ConversionError(field, str(value), f"a seat 0-{players - 1}")
    return value


# -- steps ----------------------------------------------------------------------------------------


def step_to_proto(entry: LogEntry) -> games_pb2.Step:
    """Return the wire form of one step (pass it through ``public_entry`` first for a seat)."""
    message = games_pb2.Step()
    message.CopyFrom(_step_message(entry))
    return message


_STEPS: dict[int, tuple[LogEntry, games_pb2.Step]] = {}


def _step_message(entry: LogEntry) -> games_pb2.Step:
    return _memo(_STEPS, entry, _build_step)


def _build_step(entry: LogEntry) -> games_pb2.Step:
    try:
        action = _action_message(entry.action)
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
    event.MergeFromString(_memo(by_action, entry.action, builder))
    return event


_EVENT_STEP_FIELD: dict[int, dict[int, tuple[Action, bytes]]] = {}
"""Seat -> action (by identity) -> ``Event.step`` (field 2) bytes. A step's log entry is new
each time, but its action is one of the objects the engine hands out move after move."""


def _event_step_builder(seat: int) -> Callable[[Action], bytes]:
    def build(action: Action) -> bytes:
        return _field(2, _build_step(LogEntry(seat, action)))

    return build


_EVENT_STEP_BUILDERS: Final = {seat: _event_step_builder(seat) for seat in range(CHANCE, 4)}


def step_from_proto(message: games_pb2.Step, where: str = "step") -> LogEntry:
    """Return the step ``message`` holds; another seat's discard may lack its tile.

    Raises:
        ConversionError: the seat is below ``CHANCE`` or the action is missing or malformed.
    """
    try:
        return _step(message)
    except ConversionError as exc:
        raise exc.under(where) from None


def _step(message: games_pb2.Step) -> LogEntry:
    if message.seat < CHANCE:
        raise ConversionError("seat", str(message.seat), "a seat 0 or more, or -1 for the deal")
    if not message.HasField("action"):
        raise ConversionError("action", "missing", "the action taken")
    try:
        return LogEntry(message.seat, _action(message.action, hidden=True))
    except ConversionError as exc:
        raise exc.under("action") from None


# -- observations ---------------------------------------------------------------------------------


def observation_to_proto(
    observation: Observation, *, history: bool = True
) -> games_pb2.Observation:
    """Return the wire form of ``observation``, legal actions and public history included.

    With ``history=False`` the ``history`` field is left empty: an ActionRequest's observation,
    whose receiver keeps the history from the events (protocol version 2).

    Raises:
        ConversionError: ``observation`` is not one of the four games' observation types.
    """
    writer = _VIEW_WRITERS.get(type(observation))
    if writer is None:
        raise ConversionError(
            "observation",
            f"a {type(observation).__name__}",
            "the observation of moon, passing, straight or doubles",
        )
    message = games_pb2.Observation(
        seat=observation.seat,
        current_seat=observation.current_seat,
        hand_sizes=observation.hand_sizes,
        scores=observation.scores,
        deal=observation.deal,
    )
    parts = [_cached(_GAME_FIELD, observation.game, _game_field)]
    parts += [_memo(_LEGAL_FIELD, action, _legal_field) for action in observation.legal_actions]
    parts += [_HAND_FIELD[tile.index] for tile in observation.hand]
    if history:
        parts += [_memo(_HISTORY_FIELD, entry, _history_field) for entry in observation.history]
    message.MergeFromString(b"".join(parts))
    writer(observation, message)
    return message


_GAME_FIELD: dict[Game, bytes] = {}
_LEGAL_FIELD: dict[int, tuple[Action, bytes]] = {}
_HISTORY_FIELD: dict[int, tuple[LogEntry, bytes]] = {}
_HAND_FIELD: Final = tuple(_field(5, tile) for tile in _TILE_MSG)
"""``Observation.hand`` (field 5) entries, by tile index."""
_PLACED_FIELD: Final = tuple(_field(3, tile) for tile in _TILE_MSG)
"""``DoublesView.placed`` (field 3) entries, by tile index."""
_LINE_FIELD: Final = {pair: _field(3, laid) for pair, laid in _LAID_MSG.items()}
"""``PassingView.line`` and ``StraightView.line`` (field 3) entries."""
_ARM_FIELD: Final = {pair: _field(1, laid) for pair, laid in _LAID_MSG.items()}
"""``StraightArm.tiles`` (field 1) entries."""


def _game_field(game: Game) -> bytes:
    return _field(1, _game_message(game))


def _legal_field(action: Action) -> bytes:
    return _field(4, _action_message(action))


def _history_field(entry: LogEntry) -> bytes:
    return _field(9, _step_message(entry))


def _write_passing(observation: Observation, message: games_pb2.Observation) -> None:
    assert isinstance(observation, PassingObservation)
    view = message.passing
    view.SetInParent()
    view.boneyard_size = observation.boneyard_size
    view.starter = observation.opener
    view.MergeFromString(b"".join([_LINE_FIELD[pair] for pair in observation.line]))
    if observation.ends is not None:
        view.has_ends = True
        view.west, view.east = observation.ends
    view.passes = observation.passes


def _write_straight(observation: Observation, message: games_pb2.Observation) -> None:
    assert isinstance(observation, StraightObservation)
    view = message.straight
    view.SetInParent()
    view.boneyard_size = observation.boneyard_size
    view.starter = observation.opener
    layout = observation.layout
    view.MergeFromString(b"".join([_LINE_FIELD[pair] for pair in layout.line]))
    if layout.spinner is not None:
        view.has_spinner = True
        view.spinner = layout.spinner
    west, east, north, south = layout.arms
    for arm, out in (
        (west, view.west),
        (east, view.east),
        (north, view.north),
        (south, view.south),
    ):
        if arm:
            out.MergeFromString(b"".join([_ARM_FIELD[pair] for pair in arm]))


def _write_doubles(observation: Observation, message: games_pb2.Observation) -> None:
    assert isinstance(observation, DoublesObservation)
    view = message.doubles
    view.SetInParent()
    view.boneyard_size = observation.boneyard_size
    view.starter = observation.opener
    view.MergeFromString(b"".join([_PLACED_FIELD[t.index] for t in observation.placed]))
    view.ends.extend(observation.ends)
    view.unlocked.extend(sorted(observation.unlocked))
    if observation.drawn is not None:
        view.drawn.CopyFrom(_TILE_MSG[observation.drawn.index])


_TRICKS: dict[int, tuple[Trick, games_pb2.MoonTrick]] = {}


def _build_trick(trick: Trick) -> games_pb2.MoonTrick:
    plays = [_MOON_PLAY_MSG[play] for play in trick.plays]
    return games_pb2.MoonTrick(leader=trick.leader, plays=plays, winner=trick.winner)


def _write_moon(observation: Observation, message: games_pb2.Observation) -> None:
    assert isinstance(observation, MoonObservation)
    view = message.moon
    view.SetInParent()
    view.phase = _PHASE_CODE[observation.phase]
    view.first_bidder = observation.opener
    for seat, value in observation.bids:
        view.bids.add(seat=seat, value=0 if value is None else value)
    bidder, contract = observation.bidder, observation.contract
    if bidder is not None or contract is not None:
        if bidder is None or contract is None:
            raise ConversionError(
                "observation.moon.bidder", "only one of bidder and contract", "both or neither"
            )
        view.has_contract = True
        view.bidder = bidder
        view.contract = contract
    if observation.trump is not None:
        view.has_trump = True
        view.trump.CopyFrom(_TRUMP_MSG[observation.trump])
    if observation.leader is not None:
        view.has_leader = True
        view.leader = observation.leader
    view.trick.extend([_MOON_PLAY_MSG[play] for play in observation.trick])
    view.tricks.extend([_memo(_TRICKS, trick, _build_trick) for trick in observation.tricks])
    view.tricks_won.extend(observation.tricks_won)
    if observation.discard is not None:
        view.discard.CopyFrom(_TILE_MSG[observation.discard.index])
    if observation.widow is not None:
        view.widow.CopyFrom(_TILE_MSG[observation.widow.index])


_VIEW_WRITERS: Final[dict[type, Callable[[Observation, games_pb2.Observation], None]]] = {
    PassingObservation: _write_passing,
    StraightObservation: _write_straight,
    DoublesObservation: _write_doubles,
    MoonObservation: _write_moon,
}


def observation_from_proto(
    message: games_pb2.Observation,
    where: str = "observation",
    *,
    history: tuple[LogEntry, ...] | None = None,
) -> Observation:
    """Return the rules library's observation that ``message`` carries (equal to the original).

    Args:
        where: the field path of ``message``, used in error messages.
        history: the history of the current deal as the receiver kept it from the events,
            for an ActionRequest's observation (whose ``history`` field is empty); None: the
            message's own ``history`` field.

    Raises:
        ConversionError: a field is missing, out of range or of an unknown value, or the view
            does not belong to the game; the text names the field.
    """
    try:
        return _observation(message, history)
    except ConversionError as exc:
        raise exc.under(where) from None


def _observation(message: games_pb2.Observation, kept: tuple[LogEntry, ...] | None) -> Observation:
    if not message.HasField("game"):
        raise ConversionError("game", "missing", "the game and its options")
    try:
        game = _game(message.game)
    except ConversionError as exc:
        raise exc.under("game") from None
    players = game.num_players
    seat = _seat(message.seat, players, "seat")
    current = message.current_seat
    if not TERMINAL <= current < players:
        raise ConversionError(
            "current_seat", str(current), f"a seat 0-{players - 1}, -1 (a deal) or -2 (over)"
        )
    legal = []
    for index, action in enumerate(message.legal_actions):
        try:
            legal.append(_action(action, hidden=False))
        except ConversionError as exc:
            raise exc.under(f"legal_actions[{index}]") from None
    history = _history(message.history, players) if kept is None else kept
    sizes = tuple(message.hand_sizes)
    if len(sizes) != players:
        raise ConversionError("hand_sizes", f"{len(sizes)} values", f"one per seat, {players}")
    scores = tuple(message.scores)
    if len(scores) != len(game.sides):
        raise ConversionError("scores", f"{len(scores)} values", f"one per side, {len(game.sides)}")
    common = {
        "game": game,
        "seat": seat,
        "current_seat": current,
        "legal_actions": tuple(legal),
        "hand": _tiles(message.hand, "hand"),
        "hand_sizes": sizes,
        "scores": scores,
        "deal": message.deal,
        "history": history,
    }
    view = message.WhichOneof("view")
    if view != game.name:
        problem = "missing" if view is None else f"a {view} view"
        raise ConversionError("view", problem, f"the {game.name} view of a {game.name} game")
    try:
        if isinstance(game, MoonGame):
            return _moon(message.moon, common)
        if isinstance(game, PassingGame):
            return _passing(message.passing, common, players)
        if isinstance(game, StraightGame):
            return _straight(message.straight, common, players)
        return _doubles(message.doubles, common, players)
    except ConversionError as exc:
        raise exc.under(game.name) from None


def _history(steps: Sequence[games_pb2.Step], players: int) -> tuple[LogEntry, ...]:
    history = []
    for index, step in enumerate(steps):
        try:
            entry = _step(step)
            if entry.seat >= players:
                raise ConversionError("seat", str(entry.seat), f"a seat 0-{players - 1} or -1")
        except ConversionError as exc:
            raise exc.under(f"history[{index}]") from None
        history.append(entry)
    return tuple(history)


def _passing(
    view: games_pb2.PassingView, common: dict[str, object], players: int
) -> PassingObservation:
    ends: tuple[int, int] | None = None
    if view.has_ends:
        for name, value in (("west", view.west), ("east", view.east)):
            if value > MAX_PIP:
                raise ConversionError(name, str(value), _NUMBER)
        ends = (view.west, view.east)
    elif view.west or view.east:
        raise ConversionError("west", "an end without has_ends", "has_ends set with west, east")
    return PassingObservation(
        **common,  # type: ignore[arg-type]
        boneyard_size=view.boneyard_size,
        opener=_seat(view.starter, players, "starter"),
        line=_pairs(view.line, "line"),
        ends=ends,
        passes=view.passes,
    )


def _straight(
    view: games_pb2.StraightView, common: dict[str, object], players: int
) -> StraightObservation:
    line = _pairs(view.line, "line")
    arms = (
        _pairs(view.west.tiles, "west.tiles"),
        _pairs(view.east.tiles, "east.tiles"),
        _pairs(view.north.tiles, "north.tiles"),
        _pairs(view.south.tiles, "south.tiles"),
    )
    spinner: int | None = None
    if view.has_spinner:
        if view.spinner > MAX_PIP:
            raise ConversionError("spinner", str(view.spinner), _NUMBER)
        if line:
            raise ConversionError("line", "tiles beside a spinner", "the arms once has_spinner")
        spinner = view.spinner
    elif any(arms) or view.spinner:
        raise ConversionError("has_spinner", "false with arms", "has_spinner set with arms")
    return StraightObservation(
        **common,  # type: ignore[arg-type]
        boneyard_size=view.boneyard_size,
        opener=_seat(view.starter, players, "starter"),
        layout=StraightLayout(line=line, spinner=spinner, arms=arms),
    )


def _doubles(
    view: games_pb2.DoublesView, common: dict[str, object], players: int
) -> DoublesObservation:
    return DoublesObservation(
        **common,  # type: ignore[arg-type]
        boneyard_size=view.boneyard_size,
        opener=_seat(view.starter, players, "starter"),
        placed=_tiles(view.placed, "placed"),
        ends=tuple(sorted(_numbers(view.ends, "ends"))),
        unlocked=frozenset(_numbers(view.unlocked, "unlocked")),
        drawn=_optional_tile(view, "drawn"),
    )


_BID_OF: Final = {0: None, **{v: v for v in BID_VALUES}}


def _moon(view: games_pb2.MoonView, common: dict[str, object]) -> MoonObservation:
    players = MoonGame().num_players
    phase = _PHASE_OF.get(view.phase)
    if phase is None:
        problem = "missing" if view.phase == 0 else f"unknown value {view.phase}"
        raise ConversionError("phase", problem, "a MoonPhase")
    bids: list[tuple[int, int | None]] = []
    for index, bid in enumerate(view.bids):
        if bid.value not in _BID_OF:
            raise ConversionError(f"bids[{index}].value", str(bid.value), "0 (a pass), 4-7 or 21")
        bids.append((_seat(bid.seat, players, f"bids[{index}].seat"), _BID_OF[bid.value]))
    bidder: int | None = None
    contract: int | None = None
    if view.has_contract:
        bidder = _seat(view.bidder, players, "bidder")
        if view.contract not in BID_VALUES:
            raise ConversionError("contract", str(view.contract), "4-7 or 21")
        contract = view.contract
    trump: int | None = None
    if view.has_trump:
        try:
            trump = _trump(view.trump)
        except ConversionError as exc:
            raise exc.under("trump") from None
    leader = _seat(view.leader, players, "leader") if view.has_leader else None
    tricks = []
    for index, trick in enumerate(view.tricks):
        field = f"tricks[{index}]"
        tricks.append(
            Trick(
                leader=_seat(trick.leader, players, f"{field}.leader"),
                plays=_moon_plays(trick.plays, players, f"{field}.plays"),
                winner=_seat(trick.winner, players, f"{field}.winner"),
            )
        )
    won = tuple(view.tricks_won)
    if len(won) != players:
        raise ConversionError("tricks_won", f"{len(won)} values", f"one per seat, {players}")
    return MoonObservation(
        **common,  # type: ignore[arg-type]
        phase=phase,
        opener=_seat(view.first_bidder, players, "first_bidder"),
        bids=tuple(bids),
        bidder=bidder,
        contract=contract,
        trump=trump,
        leader=leader,
        trick=_moon_plays(view.trick, players, "trick"),
        tricks=tuple(tricks),
        tricks_won=won,
        discard=_optional_tile(view, "discard"),
        widow=_optional_tile(view, "widow"),
    )


def _moon_plays(
    plays: Sequence[games_pb2.MoonPlay], players: int, field: str
) -> tuple[tuple[int, Tile], ...]:
    at = _TILE_AT
    out = []
    for play in plays:
        tile = play.tile
        found = at.get((tile.high, tile.low))
        if found is None or play.seat >= players or not play.HasField("tile"):
            raise _bad_moon_play(plays, players, field)
        out.append((play.seat, found))
    return tuple(out)


def _bad_moon_play(
    plays: Sequence[games_pb2.MoonPlay], players: int, field: str
) -> ConversionError:
    """Return the error for the first malformed play of ``plays``."""
    for index, play in enumerate(plays):
        where = f"{field}[{index}]"
        if not play.HasField("tile"):
            return ConversionError(f"{where}.tile", "missing", "the tile played")
        try:
            _tile(play.tile)
            _seat(play.seat, players, "seat")
        except ConversionError as exc:
            return exc.under(where if exc.field == "seat" else f"{where}.tile")
    raise AssertionError("called without a malformed play")


# -- hand and match results -----------------------------------------------------------------------


def hand_end_kind(end: HandEnd) -> referee_pb2.HandEndKind.ValueType:
    """Return the wire enum value of how a hand ended."""
    return _HAND_END_KIND[end]


def hand_end_from_kind(kind: int, where: str = "hand_end.end") -> HandEnd:
    """Return how a hand ended from its wire enum value.

    Raises:
        ConversionError: the value is unspecified or unknown.
    """
    end = _HAND_END_OF.get(kind)
    if end is None:
        problem = "missing" if kind == 0 else f"unknown value {kind}"
        raise ConversionError(where, problem, "a HandEndKind")
    return end


def hand_result_to_proto(
    result: HandResult, scores: Sequence[int], match_id: str = ""
) -> referee_pb2.HandEnd:
    """Return the ``HandEnd`` message of one scored hand; ``scores`` are the totals after it."""
    return referee_pb2.HandEnd(
        match_id=match_id,
        deal=result.deal,
        end=_HAND_END_KIND[result.end],
        points=result.points,
        scores=scores,
        detail=result.detail,
    )


def hand_result_from_proto(message: referee_pb2.HandEnd, where: str = "hand_end") -> HandResult:
    """Return the scored hand a ``HandEnd`` message reports (its ``scores`` are read directly).

    Raises:
        ConversionError: the kind of end is unspecified or unknown.
    """
    end = hand_end_from_kind(message.end, f"{where}.end")
    return HandResult(message.deal, end, tuple(message.points), message.detail)


def outcome_from_proto(message: referee_pb2.MatchResult, game: Game) -> Outcome | None:
    """Return the outcome a ``MatchResult`` reports, or None when no side won (void, aborted).

    A forfeit has a winner too; ``Outcome.detail`` is the referee's detail text.

    Raises:
        ConversionError: the winner is not a side of ``game``.
    """
    winner = message.winner
    if winner < 0:
        return None
    if winner >= len(game.sides):
        raise ConversionError(
            "match_result.winner", str(winner), f"a side 0-{len(game.sides) - 1} or -1"
        )
    return Outcome(
        winner=winner, scores=tuple(message.scores), sides=game.sides, detail=message.detail
    )
