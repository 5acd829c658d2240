// Choosing a move: always one of the request's legal actions, never anything else.
//
// Passing, Straight, Doubles: the heaviest tile (it costs most if caught in hand), doubles
// first among equals, then the tile whose numbers are mostly gone (played, or in its own hand)
// so it is not stuck with it later; no tile to play: the legal draw or pass.
//
// Moon (docs/rules.md, Moon): bid the tricks its best suit promises, if a legal bid is that
// low, else pass; discard the lightest tile outside that suit; name that suit trumps (or
// doubles, if it holds more doubles); lead its strongest tile; follow with the cheapest tile
// that takes the trick, or throw its lightest.

package main

import (
	"encoding/json"
	"fmt"
)

// Choice is a legal action: its JSON exactly as the referee sent it, and its decoded form.
type Choice struct {
	Raw    json.RawMessage
	Action Action
}

// decodeLegal decodes the observation's legal actions, keeping each one's original bytes.
func decodeLegal(obs *Observation) ([]Choice, error) {
	choices := make([]Choice, 0, len(obs.LegalActions))
	for i, raw := range obs.LegalActions {
		var action Action
		if err := json.Unmarshal(raw, &action); err != nil {
			return nil, fmt.Errorf("legalActions[%d]: %v", i, err)
		}
		choices = append(choices, Choice{Raw: raw, Action: action})
	}
	if len(choices) == 0 {
		return nil, fmt.Errorf("the request has no legal actions")
	}
	return choices, nil
}

// Choose picks one of the observation's legal actions and returns its JSON, as sent.
func Choose(state *MatchState, obs *Observation) (json.RawMessage, error) {
	choices, err := decodeLegal(obs)
	if err != nil {
		return nil, err
	}
	if obs.GameName() == "moon" {
		return chooseMoon(obs, choices).Raw, nil
	}
	return chooseLine(state, obs, choices).Raw, nil
}

func pips(t Tile) int        { return t.High + t.Low }
func isDouble(t Tile) bool   { return t.High == t.Low }
func has(t Tile, n int) bool { return t.High == n || t.Low == n }
func other(t Tile, n int) int {
	if t.High == n {
		return t.Low
	}
	return t.High
}

// best returns the choice with the highest score; the first of equals.
func best(choices []Choice, score func(Choice) int) Choice {
	top := choices[0]
	topScore := score(top)
	for _, c := range choices[1:] {
		if s := score(c); s > topScore {
			top, topScore = c, s
		}
	}
	return top
}

// plays keeps the choices that play a tile.
func plays(choices []Choice) []Choice {
	var out []Choice
	for _, c := range choices {
		if c.Action.Play != nil && c.Action.Play.Tile != nil {
			out = append(out, c)
		}
	}
	return out
}

// -- Passing, Straight, Doubles ---------------------------------------------------------------

// deadness counts the tiles showing one of this tile's numbers that are out of play for the
// others: played this deal, or in our own hand.
func deadness(state *MatchState, hand []Tile, t Tile) int {
	seen := map[Tile]bool{}
	for played := range state.Played {
		seen[played] = true
	}
	for _, h := range hand {
		seen[h] = true
	}
	count := 0
	for s := range seen {
		if has(s, t.High) || has(s, t.Low) {
			count++
		}
	}
	return count
}

func chooseLine(state *MatchState, obs *Observation, choices []Choice) Choice {
	tiles := plays(choices)
	if len(tiles) == 0 {
		return choices[0] // the draw or the pass, whichever is legal
	}
	return best(tiles, func(c Choice) int {
		t := *c.Action.Play.Tile
		score := pips(t)*1000 + deadness(state, obs.Hand, t)
		if isDouble(t) {
			score += 100
		}
		return score
	})
}

// -- Moon -------------------------------------------------------------------------------------

const trumpSuit = -1 // the suit of trumps, among the numbers 0-6

// suitInfo is the number suit a hand holds most of (its double counted again), and how many
// tricks it promises: its tiles of that number, its double, half the other doubles, less one
// (the widow is still to come).
type suitInfo struct {
	number, count int
	tricks        float64
}

func bestSuit(hand []Tile) suitInfo {
	top := suitInfo{number: 6, count: -1}
	for n := 6; n >= 0; n-- {
		count, double, others := 0, 0, 0
		for _, t := range hand {
			if has(t, n) {
				count++
			}
			if isDouble(t) && t.High == n {
				double = 1
			} else if isDouble(t) {
				others++
			}
		}
		if count+double > top.count {
			tricks := float64(count+double) + float64(others)/2 - 1
			top = suitInfo{number: n, count: count + double, tricks: tricks}
		}
	}
	return top
}

func isTrump(t Tile, trump TrumpAction) bool {
	switch trump.Suit {
	case "TRUMP_SUIT_DOUBLES":
		return isDouble(t)
	case "TRUMP_SUIT_NUMBER":
		return has(t, trump.Number)
	}
	return false
}

// ledSuit is the suit a tile leads: trumps, else its high number.
func ledSuit(t Tile, trump TrumpAction) int {
	if isTrump(t, trump) {
		return trumpSuit
	}
	return t.High
}

func follows(t Tile, suit int, trump TrumpAction) bool {
	if suit == trumpSuit {
		return isTrump(t, trump)
	}
	return !isTrump(t, trump) && has(t, suit)
}

// rank orders the tiles of one suit: its double highest, then by the other number.
func rank(t Tile, suit int, trump TrumpAction) int {
	if suit == trumpSuit {
		if trump.Suit == "TRUMP_SUIT_DOUBLES" {
			return t.High
		}
		suit = trump.Number
	}
	if isDouble(t) {
		return 100
	}
	return other(t, suit)
}

// wins says whether t, played now, takes the trick so far (its leader first).
func wins(t Tile, trick []MoonPlay, trump TrumpAction) bool {
	all := make([]Tile, 0, len(trick)+1)
	for _, p := range trick {
		all = append(all, p.Tile)
	}
	all = append(all, t)
	suit := ledSuit(all[0], trump)
	for _, x := range all {
		if isTrump(x, trump) {
			suit = trumpSuit
		}
	}
	value := func(x Tile) int {
		if follows(x, suit, trump) {
			return rank(x, suit, trump)
		}
		return -1
	}
	for _, x := range all[:len(all)-1] {
		if value(x) >= value(t) {
			return false
		}
	}
	return true
}

func chooseMoon(obs *Observation, choices []Choice) Choice {
	hand := obs.Hand
	var bids, discards, trumps []Choice
	var pass *Choice
	for i, c := range choices {
		switch {
		case c.Action.Bid != nil:
			bids = append(bids, c)
		case c.Action.Discard != nil && c.Action.Discard.Tile != nil:
			discards = append(discards, c)
		case c.Action.Trump != nil:
			trumps = append(trumps, c)
		case c.Action.Pass != nil:
			pass = &choices[i]
		}
	}
	if len(bids) > 0 {
		tricks := bestSuit(hand).tricks
		var fitting []Choice
		for _, c := range bids {
			if float64(c.Action.Bid.Value) <= tricks {
				fitting = append(fitting, c)
			}
		}
		if len(fitting) > 0 {
			return best(fitting, func(c Choice) int { return c.Action.Bid.Value })
		}
		if pass != nil {
			return *pass
		}
		return choices[0]
	}
	if len(discards) > 0 {
		suit := bestSuit(hand).number
		return best(discards, func(c Choice) int {
			t := *c.Action.Discard.Tile
			cost := pips(t)
			if has(t, suit) {
				cost += 100
			}
			if isDouble(t) {
				cost += 50
			}
			return -cost // the cheapest
		})
	}
	if len(trumps) > 0 {
		suit := bestSuit(hand)
		doubles := 0
		for _, t := range hand {
			if isDouble(t) {
				doubles++
			}
		}
		for _, c := range trumps {
			named := c.Action.Trump
			if doubles > suit.count && named.Suit == "TRUMP_SUIT_DOUBLES" {
				return c
			}
			if doubles <= suit.count && named.Suit == "TRUMP_SUIT_NUMBER" && named.Number == suit.number {
				return c
			}
		}
		return trumps[0]
	}
	tiles := plays(choices)
	if len(tiles) == 0 {
		return choices[0]
	}
	trump := TrumpAction{Suit: "TRUMP_SUIT_NONE"}
	var trick []MoonPlay
	if obs.Moon != nil {
		if obs.Moon.TrumpNamed {
			trump = obs.Moon.Trump
		}
		trick = obs.Moon.Trick
	}
	if len(trick) == 0 {
		// lead the strongest tile: a trump if we hold one, then doubles, then the heaviest
		return best(tiles, func(c Choice) int {
			t := *c.Action.Play.Tile
			if isTrump(t, trump) {
				return 1000 + rank(t, trumpSuit, trump)
			}
			if isDouble(t) {
				return 500 + pips(t)
			}
			return pips(t)
		})
	}
	// follow: the cheapest tile that takes the trick, else throw the lightest
	var winners []Choice
	for _, c := range tiles {
		if wins(*c.Action.Play.Tile, trick, trump) {
			winners = append(winners, c)
		}
	}
	pool := tiles
	if len(winners) > 0 {
		pool = winners
	}
	return best(pool, func(c Choice) int {
		t := *c.Action.Play.Tile
		cost := pips(t)
		if isTrump(t, trump) {
			cost += 100
		}
		return -cost
	})
}
