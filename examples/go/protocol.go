// The stdio protocol's messages, as much of them as this bot reads (docs/writing-a-bot.md).
//
// Each line is one message of proto/domino_arena/v1/referee.proto in protobuf's canonical JSON
// mapping: camelCase keys, enums by their names, 64-bit integers as strings. The arena writes
// every plain field, zero or empty ones included ("seat": 0); a message field that is not set
// is left out (another seat's Moon discard is {"discard": {}}, with no tile). Protobuf's JSON
// also allows a zero field to be left out, and a missing field reads as its zero here, which is
// what the proto means. Fields this bot does not need are not declared; encoding/json skips
// them, so a newer referee's additions never break it.

package main

import (
	"encoding/json"
	"strconv"
)

// Enum is an enum field: its name ("LINE_END_W"), or its number when the value is newer than
// the sender's copy of the proto (protobuf writes unknown enum values as numbers).
type Enum string

// UnmarshalJSON takes a name or a number.
func (e *Enum) UnmarshalJSON(data []byte) error {
	var name string
	if err := json.Unmarshal(data, &name); err == nil {
		*e = Enum(name)
		return nil
	}
	var number int64
	if err := json.Unmarshal(data, &number); err != nil {
		return err
	}
	*e = Enum(strconv.FormatInt(number, 10))
	return nil
}

// RefereeMessage is one line from the arena: exactly one of its fields is set. The bridge
// unrolls batches, but a batch is read as its messages in order all the same.
type RefereeMessage struct {
	Welcome    *Welcome       `json:"welcome"`
	Error      *RefereeError  `json:"error"`
	MatchStart *MatchStart    `json:"matchStart"`
	Request    *ActionRequest `json:"request"`
	HandEnd    *HandEnd       `json:"handEnd"`
	MatchEnd   *MatchEnd      `json:"matchEnd"`
	Fault      *Fault         `json:"fault"`
	Batch      *struct {
		Messages []RefereeMessage `json:"messages"`
	} `json:"batch"`
}

type Welcome struct {
	Name            string   `json:"name"`
	ProtocolVersion int      `json:"protocolVersion"`
	Games           []string `json:"games"`
}

type RefereeError struct {
	Code    Enum   `json:"code"`
	Message string `json:"message"`
	MatchID string `json:"matchId"`
}

type MatchStart struct {
	MatchID  string                     `json:"matchId"`
	Game     map[string]json.RawMessage `json:"game"` // one key: moon, passing, straight or doubles
	Seat     int                        `json:"seat"`
	Players  []string                   `json:"players"`
	Resumed  bool                       `json:"resumed"`
	Snapshot *Observation               `json:"snapshot"` // when resumed: the position now
	BotSeed  string                     `json:"botSeed"`  // a uint64: a string in JSON
}

type ActionRequest struct {
	MatchID     string      `json:"matchId"`
	Turn        uint32      `json:"turn"`
	Observation Observation `json:"observation"`
	Events      []Event     `json:"events"`
}

type HandEnd struct {
	MatchID string  `json:"matchId"`
	Deal    int     `json:"deal"`
	End     Enum    `json:"end"`
	Points  []int   `json:"points"`
	Scores  []int   `json:"scores"`
	Events  []Event `json:"events"`
}

type MatchEnd struct {
	MatchID string `json:"matchId"`
	Result  struct {
		Termination Enum   `json:"termination"`
		Winner      int    `json:"winner"`
		Scores      []int  `json:"scores"`
		SideOfSeat  []int  `json:"sideOfSeat"`
		Detail      string `json:"detail"`
	} `json:"result"`
	Events []Event `json:"events"`
}

type Fault struct {
	MatchID   string  `json:"matchId"`
	Turn      uint32  `json:"turn"`
	Kind      Enum    `json:"kind"`
	Reason    string  `json:"reason"`
	Strikes   int     `json:"strikes"`
	Forfeited bool    `json:"forfeited"`
	Events    []Event `json:"events"`
}

// Event is a public step (the deal is seat -1) with the scores and deal number after it.
type Event struct {
	Step *Step `json:"step"`
	Deal int   `json:"deal"`
}

type Step struct {
	Seat   int    `json:"seat"`
	Action Action `json:"action"`
}

// Observation is what one seat sees. Each game fills its own view (moon, passing, straight or
// doubles); this bot reads Moon's only, and the legal actions of every game.
type Observation struct {
	Game         map[string]json.RawMessage `json:"game"`
	Seat         int                        `json:"seat"`
	LegalActions []json.RawMessage          `json:"legalActions"` // sent back verbatim
	Hand         []Tile                     `json:"hand"`
	Scores       []int                      `json:"scores"`
	Deal         int                        `json:"deal"`
	History      []Step                     `json:"history"` // empty in a request (events carry it)
	Moon         *MoonView                  `json:"moon"`
}

// GameName is the observation's game: moon, passing, straight or doubles.
func (o *Observation) GameName() string {
	for name := range o.Game {
		return name
	}
	return ""
}

type MoonView struct {
	Phase      Enum        `json:"phase"`
	TrumpNamed bool        `json:"trumpNamed"`
	Trump      TrumpAction `json:"trump"`
	Trick      []MoonPlay  `json:"trick"` // the trick being played, its leader first
}

type MoonPlay struct {
	Seat int  `json:"seat"`
	Tile Tile `json:"tile"`
}

// Tile is [high-low], high >= low.
type Tile struct {
	High int `json:"high"`
	Low  int `json:"low"`
}

// Action is one action of any game: exactly one field is set. A tile is a pointer where the
// proto leaves it unset on purpose: another seat's Moon discard arrives as {"discard": {}}.
type Action struct {
	Play    *PlayAction    `json:"play"`
	Draw    *struct{}      `json:"draw"`
	Pass    *struct{}      `json:"pass"`
	Bid     *BidAction     `json:"bid"`
	Discard *DiscardAction `json:"discard"`
	Trump   *TrumpAction   `json:"trump"`
	Deal    *struct{}      `json:"deal"`
}

type PlayAction struct {
	Tile   *Tile `json:"tile"`
	End    Enum  `json:"end"`
	Number int   `json:"number"`
}

type BidAction struct {
	Value int `json:"value"`
}

type DiscardAction struct {
	Tile *Tile `json:"tile"`
}

type TrumpAction struct {
	Suit   Enum `json:"suit"`
	Number int  `json:"number"`
}

// What the bot writes: one BotMessage a line, {"reply": {...}}.

type BotMessage struct {
	Reply *ActionReply `json:"reply"`
}

type ActionReply struct {
	MatchID string          `json:"matchId"`
	Turn    uint32          `json:"turn"`
	Action  json.RawMessage `json:"action,omitempty"` // one of the request's legal actions, as sent
	Error   *BotError       `json:"error,omitempty"`
}

// BotError reports a bug of the bot's own in-band: the referee charges a bot_error fault at
// once instead of letting the clock run out (docs/referee.md, "Faults").
type BotError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}
