// A Domino Arena bot in Go, over the stdio protocol: the standard library only, no gRPC.
//
// The arena starts this program and talks to it through its stdin and stdout, one JSON
// object a line (docs/writing-a-bot.md, "Any language: the stdio protocol"): it reads the
// referee's messages (Welcome, MatchStart, ActionRequest, HandEnd, Fault, MatchEnd, Error) and
// answers each ActionRequest with one line, {"reply": {"matchId": ..., "turn": N, "action":
// {...}}}, the action being one of the request's legal actions copied back as it came. The
// arena holds the connection, the token and the clock; one process plays every match it is
// seated in (all four games), each message naming its match. It logs a few lines a match to
// stderr (the arena keeps them for the bot's owner) and exits 0 when stdin closes.
//
//	go build -o gobot .      # then: domino-arena play straight --bots exec:./gobot,greedy
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
)

// MatchState is what the bot remembers of one match: the tiles seen played this deal, from the
// events the referee sends inside its messages (a request's observation carries no history).
type MatchState struct {
	ID     string
	Game   string
	Seat   int
	Deal   int
	Played map[Tile]bool
}

func newMatchState(start *MatchStart) *MatchState {
	state := &MatchState{ID: start.MatchID, Seat: start.Seat, Played: map[Tile]bool{}}
	for name := range start.Game {
		state.Game = name
	}
	if start.Resumed && start.Snapshot != nil {
		// a reconnection: the snapshot is the position now, with the deal's public steps
		state.Deal = start.Snapshot.Deal
		for i := range start.Snapshot.History {
			state.record(&start.Snapshot.History[i])
		}
	}
	return state
}

func (s *MatchState) record(step *Step) {
	if step.Seat == -1 { // the deal: a new deal starts with nothing played
		s.Played = map[Tile]bool{}
		return
	}
	if play := step.Action.Play; play != nil && play.Tile != nil {
		s.Played[*play.Tile] = true
	}
}

func (s *MatchState) onEvents(events []Event) {
	for i := range events {
		s.Deal = events[i].Deal
		if events[i].Step != nil {
			s.record(events[i].Step)
		}
	}
}

// Bot reads the arena's lines and writes its replies.
type Bot struct {
	out     *bufio.Writer
	log     io.Writer
	matches map[string]*MatchState
}

// Run plays until in ends. A line that is not JSON or not a message is reported and skipped:
// the arena never sends one, and a bot that stops answering would lose on the clock.
func Run(in io.Reader, out io.Writer, log io.Writer) error {
	bot := &Bot{out: bufio.NewWriter(out), log: log, matches: map[string]*MatchState{}}
	reader := bufio.NewReaderSize(in, 64<<10) // lines may be long (up to 1 MiB): ReadBytes grows
	for number := 1; ; number++ {
		line, err := reader.ReadBytes('\n')
		if len(line) > 0 {
			var message RefereeMessage
			if jsonErr := json.Unmarshal(line, &message); jsonErr != nil {
				fmt.Fprintf(log, "stdin line %d: not a message: %v\n", number, jsonErr)
			} else if writeErr := bot.dispatch(&message); writeErr != nil {
				return writeErr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (b *Bot) dispatch(m *RefereeMessage) error {
	switch {
	case m.Batch != nil:
		for i := range m.Batch.Messages {
			if err := b.dispatch(&m.Batch.Messages[i]); err != nil {
				return err
			}
		}
	case m.Welcome != nil:
		fmt.Fprintf(b.log, "welcomed as %s (protocol %d, games %v)\n",
			m.Welcome.Name, m.Welcome.ProtocolVersion, m.Welcome.Games)
	case m.Error != nil:
		fmt.Fprintf(b.log, "referee error %s: %s (match %q)\n", m.Error.Code, m.Error.Message, m.Error.MatchID)
	case m.MatchStart != nil:
		state := newMatchState(m.MatchStart)
		b.matches[state.ID] = state
		resumed := ""
		if m.MatchStart.Resumed {
			resumed = " (resumed)"
		}
		fmt.Fprintf(b.log, "match start %s: %s seat %d%s\n", state.ID, state.Game, state.Seat, resumed)
	case m.Request != nil:
		return b.answer(m.Request)
	case m.HandEnd != nil:
		b.state(m.HandEnd.MatchID).onEvents(m.HandEnd.Events)
	case m.Fault != nil:
		f := m.Fault
		b.state(f.MatchID).onEvents(f.Events)
		fmt.Fprintf(b.log, "match %s: FAULT %s at turn %d: %s (strikes %d, forfeited %v)\n",
			f.MatchID, f.Kind, f.Turn, f.Reason, f.Strikes, f.Forfeited)
	case m.MatchEnd != nil:
		r := &m.MatchEnd.Result
		delete(b.matches, m.MatchEnd.MatchID)
		winner := "no winner"
		if r.Winner >= 0 {
			winner = fmt.Sprintf("side %d wins", r.Winner)
		}
		fmt.Fprintf(b.log, "match end %s: %s, %s, scores %v: %s\n", m.MatchEnd.MatchID,
			strings.TrimPrefix(string(r.Termination), "TERMINATION_"), winner, r.Scores, r.Detail)
	}
	return nil // a message of a kind this bot does not know: ignored
}

// state is the match's state; a request for a match never seen starting gets a fresh one.
func (b *Bot) state(matchID string) *MatchState {
	state, ok := b.matches[matchID]
	if !ok {
		state = &MatchState{ID: matchID, Played: map[Tile]bool{}}
		b.matches[matchID] = state
	}
	return state
}

func (b *Bot) answer(request *ActionRequest) error {
	state := b.state(request.MatchID)
	state.onEvents(request.Events)
	reply := ActionReply{MatchID: request.MatchID, Turn: request.Turn}
	action, err := chooseSafely(state, &request.Observation)
	if err != nil {
		fmt.Fprintf(b.log, "match %s turn %d: %v\n", request.MatchID, request.Turn, err)
		reply.Error = &BotError{Type: "GoError", Message: err.Error()}
	} else {
		reply.Action = action
	}
	return b.send(BotMessage{Reply: &reply})
}

// chooseSafely turns a panic of the strategy into an error, answered in-band (a bot_error
// fault at once) rather than a crash that leaves every match of this process without a move.
func chooseSafely(state *MatchState, obs *Observation) (action json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("choose panicked: %v", p)
		}
	}()
	return Choose(state, obs)
}

// send writes one message as one line and flushes it: the arena waits for the whole line.
func (b *Bot) send(message BotMessage) error {
	line, err := json.Marshal(message)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if _, err := b.out.Write(line); err != nil {
		return err
	}
	return b.out.Flush()
}

func main() {
	// One move at a time needs few threads; a sandbox caps threads per bot (docs/hosting.md).
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(2)
	}
	// The arena stops a bot with SIGTERM: leave at once, quietly, with status 0.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		os.Exit(0)
	}()
	if err := Run(os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "gobot: %v\n", err)
		os.Exit(1)
	}
}
