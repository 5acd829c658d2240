package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// session runs the bot on the given lines and returns its reply lines.
func session(t *testing.T, lines ...string) []string {
	t.Helper()
	var out, log bytes.Buffer
	if err := Run(strings.NewReader(strings.Join(lines, "\n")), &out, &log); err != nil {
		t.Fatalf("Run: %v (log: %s)", err, log.String())
	}
	text := strings.TrimSuffix(out.String(), "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

const welcome = `{"welcome": {"name": "gobot", "protocolVersion": 2, "games": ["moon", "passing", "straight", "doubles"]}}`

func TestItAnswersARequestWithALegalActionCopiedVerbatim(t *testing.T) {
	request := `{"request": {"matchId": "m1", "turn": 7, "observation": {"game": {"passing": {"players": 2}},` +
		` "legalActions": [{"play": {"tile": {"high": 2, "low": 1}, "end": "LINE_END_E"}},` +
		` {"play": {"tile": {"high": 6, "low": 1}, "end": "LINE_END_W", "futureField": 3}}, {"draw": {}}],` +
		` "hand": [{"high": 2, "low": 1}, {"high": 6, "low": 1}, {}], "newView": {}}}}`
	replies := session(t, welcome,
		`{"matchStart": {"matchId": "m1", "game": {"passing": {"players": 2}}, "seat": 1, "botSeed": "18446744073709551615"}}`,
		request)
	// the heaviest tile, every field of it kept (encoding/json compacts the spaces)
	want := `{"reply":{"matchId":"m1","turn":7,"action":{"play":{"tile":{"high":6,"low":1},"end":"LINE_END_W","futureField":3}}}}`
	if len(replies) != 1 || replies[0] != want {
		t.Fatalf("replies %q, want [%s]", replies, want)
	}
}

func TestTurnZeroAndUnknownMessagesAndBadLines(t *testing.T) {
	replies := session(t,
		`not json`,
		`{"somethingNew": {"matchId": "x"}}`,
		`{"request": {"matchId": "m2", "observation": {"game": {"doubles": {}}, "legalActions": [{"draw": {}}]}}}`,
	)
	want := `{"reply":{"matchId":"m2","turn":0,"action":{"draw":{}}}}`
	if len(replies) != 1 || replies[0] != want {
		t.Fatalf("replies %q, want [%s]", replies, want)
	}
}

func TestABatchIsReadAsItsMessages(t *testing.T) {
	one := `{"request": {"matchId": "a", "turn": 1, "observation": {"game": {"straight": {}}, "legalActions": [{"pass": {}}]}}}`
	two := strings.Replace(one, `"a"`, `"b"`, 1)
	replies := session(t, `{"batch": {"messages": [`+one+`, `+two+`]}}`)
	if len(replies) != 2 || !strings.Contains(replies[0], `"a"`) || !strings.Contains(replies[1], `"b"`) {
		t.Fatalf("replies %q", replies)
	}
}

func TestNoLegalActionIsReportedInBand(t *testing.T) {
	replies := session(t, `{"request": {"matchId": "m", "turn": 2, "observation": {"game": {"moon": {}}}}}`)
	var message BotMessage
	if len(replies) != 1 || json.Unmarshal([]byte(replies[0]), &message) != nil || message.Reply.Error == nil {
		t.Fatalf("replies %q: want an in-band error", replies)
	}
}

func TestEventsTrackThePlayedTilesOfTheDeal(t *testing.T) {
	state := &MatchState{Played: map[Tile]bool{}}
	state.onEvents([]Event{
		{Step: &Step{Seat: 1, Action: Action{Play: &PlayAction{Tile: &Tile{High: 6, Low: 6}}}}, Deal: 1},
		{Step: &Step{Seat: 0, Action: Action{Discard: &DiscardAction{}}}, Deal: 1}, // hidden: no tile
	})
	if len(state.Played) != 1 || !state.Played[Tile{6, 6}] {
		t.Fatalf("played %v", state.Played)
	}
	state.onEvents([]Event{{Step: &Step{Seat: -1, Action: Action{Deal: &struct{}{}}}, Deal: 2}})
	if len(state.Played) != 0 || state.Deal != 2 {
		t.Fatalf("after a deal: played %v, deal %d", state.Played, state.Deal)
	}
}

func TestMoonFollowsWithTheCheapestWinner(t *testing.T) {
	// trumps are fives; 6-1 was led: 6-3 takes it without a trump, 5-2 takes it with one
	obs := Observation{
		Game: map[string]json.RawMessage{"moon": json.RawMessage(`{}`)},
		LegalActions: []json.RawMessage{
			json.RawMessage(`{"play":{"tile":{"high":5,"low":2}}}`),
			json.RawMessage(`{"play":{"tile":{"high":6,"low":3}}}`),
			json.RawMessage(`{"play":{"tile":{"high":6}}}`),
		},
		Moon: &MoonView{TrumpNamed: true, Trump: TrumpAction{Suit: "TRUMP_SUIT_NUMBER", Number: 5},
			Trick: []MoonPlay{{Seat: 0, Tile: Tile{6, 1}}}},
	}
	action, err := Choose(&MatchState{Played: map[Tile]bool{}}, &obs)
	if err != nil || string(action) != `{"play":{"tile":{"high":6,"low":3}}}` {
		t.Fatalf("chose %s (%v)", action, err)
	}
}

func TestMoonBidsWhatItsHandPromisesElsePasses(t *testing.T) {
	legal := []json.RawMessage{json.RawMessage(`{"bid":{"value":4}}`), json.RawMessage(`{"bid":{"value":5}}`),
		json.RawMessage(`{"pass":{}}`)}
	strong := []Tile{{6, 6}, {6, 5}, {6, 4}, {6, 3}, {6, 2}, {5, 5}, {4, 4}}
	weak := []Tile{{1, 0}, {2, 1}, {3, 2}, {4, 3}, {5, 4}, {6, 5}, {3, 0}}
	game := map[string]json.RawMessage{"moon": json.RawMessage(`{}`)}
	for hand, want := range map[*[]Tile]string{&strong: `{"bid":{"value":5}}`, &weak: `{"pass":{}}`} {
		obs := Observation{Game: game, LegalActions: legal, Hand: *hand, Moon: &MoonView{}}
		if action, err := Choose(&MatchState{}, &obs); err != nil || string(action) != want {
			t.Errorf("hand %v: chose %s (%v), want %s", *hand, action, err, want)
		}
	}
}
