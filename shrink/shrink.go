// Package shrink minimises a failing run's choice stream, the way
// Hypothesis shrinks its choice sequences: passes that delete spans of
// draws, zero them, lower single draws, sort and redistribute neighbours,
// each candidate replayed, repeated until no pass helps. A candidate is kept
// when the run still fails with the same property and its stream is smaller
// in shortlex order (shorter, then lexicographically smaller). Because every
// pass only ever moves towards the shortlex-least failing stream, failures
// of one bug reached from different seeds tend to end at the same stream:
// the shrinker normalises as well as minimises.
//
// The core works on any Test; scenario.go binds it to a scenario's runs.
package shrink

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"shardsim/simclock"
)

// Draw is one draw of a run: its bound and the value it took (below Bound).
type Draw struct {
	Bound uint64
	Value uint64
}

// Outcome is what replaying one candidate stream showed.
type Outcome struct {
	Keeps bool   // the run still fails with the property being kept
	Draws []Draw // every draw the run made, in order
}

// Test replays a candidate stream.
type Test func(stream []byte) Outcome

// Options bound a shrink.
type Options struct {
	MaxReplays int // stop after this many replays (0: 20000)
}

// Result is a shrink's outcome: the smallest stream found and its draws.
type Result struct {
	Input    []byte // the input's stream as its draws encode it (values reduced, zeros trimmed)
	Stream   []byte
	Draws    []Draw
	Replays  int  // candidates replayed, the input's own replay included
	Accepted int  // candidates that were kept
	Rounds   int  // full rounds of every pass
	Fixpoint bool // the last round changed nothing (false: the budget ran out)
	Passes   []PassStats
}

// PassStats says what one pass spent and won over a whole shrink.
type PassStats struct {
	Name    string `json:"name"`
	Replays int    `json:"replays"`
	Kept    int    `json:"kept"`
}

func addPass(ps []PassStats, name string, replays, kept int) []PassStats {
	for i := range ps {
		if ps[i].Name == name {
			ps[i].Replays += replays
			ps[i].Kept += kept
			return ps
		}
	}
	return append(ps, PassStats{Name: name, Replays: replays, Kept: kept})
}

// ErrNotFailing is returned when the input itself does not fail as asked.
var ErrNotFailing = errors.New("the input run does not fail with the property to keep")

// Encode writes draws as the byte stream simclock.NewBytes replays: each
// value big-endian in the width its bound needs, trailing zero bytes
// dropped (an exhausted stream reads as zeros).
func Encode(draws []Draw) []byte {
	var out []byte
	for _, d := range draws {
		for i := simclock.DrawWidth(d.Bound) - 1; i >= 0; i-- {
			out = append(out, byte(d.Value>>(8*uint(i))))
		}
	}
	return bytes.TrimRight(out, "\x00")
}

// ShortlexLess reports whether a sorts before b: shorter first, then
// byte-wise.
func ShortlexLess(a, b []byte) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return bytes.Compare(a, b) < 0
}

// Minimise shrinks input, a stream on which test keeps the failure.
func Minimise(input []byte, test Test, opt Options) (Result, error) {
	if opt.MaxReplays <= 0 {
		opt.MaxReplays = 20000
	}
	s := &shrinker{test: test, max: opt.MaxReplays, seen: map[string]bool{}}
	first := s.replay(input)
	if !first.Keeps {
		return Result{Replays: s.replays}, ErrNotFailing
	}
	s.best, s.bestBytes = first.Draws, Encode(first.Draws)
	res := Result{Input: s.bestBytes}
	costly := false // the cheap passes found nothing last round
	for !s.exhausted() {
		res.Rounds++
		before := s.accepted
		for _, pass := range passes {
			if pass.costly != costly {
				continue
			}
			kept, replays := s.accepted, s.replays
			pass.run(s)
			res.Passes = addPass(res.Passes, pass.name, s.replays-replays, s.accepted-kept)
		}
		switch {
		case s.accepted > before:
			costly = false
		case s.exhausted():
		case !costly:
			costly = true
		default:
			res.Fixpoint = true
		}
		if res.Fixpoint {
			break
		}
	}
	res.Stream, res.Draws = s.bestBytes, s.best
	res.Replays, res.Accepted = s.replays, s.accepted
	return res, nil
}

// shrinker holds the best stream so far and counts replays.
type shrinker struct {
	test      Test
	best      []Draw
	bestBytes []byte
	seen      map[string]bool // candidate streams already replayed
	replays   int
	accepted  int
	max       int
}

func (s *shrinker) exhausted() bool { return s.replays >= s.max }

func (s *shrinker) replay(stream []byte) Outcome {
	s.replays++
	s.seen[string(stream)] = true
	return s.test(stream)
}

// try replays the stream of draws if it is new and smaller than the best,
// and keeps it if the failure holds. The replay's own draws become the new
// best: they are never larger (values are reduced modulo their bounds and
// draws past the end read as zeros).
func (s *shrinker) try(draws []Draw) bool { return s.tryBytes(Encode(draws)) }

// tryBytes is try on a raw stream.
func (s *shrinker) tryBytes(stream []byte) bool {
	if !ShortlexLess(stream, s.bestBytes) {
		return false
	}
	return s.tryAny(stream)
}

// tryAny replays a stream that need not itself be smaller than the best:
// a run that fails sooner reads fewer draws, so its own stream may be.
func (s *shrinker) tryAny(stream []byte) bool {
	if s.exhausted() || s.seen[string(stream)] {
		return false
	}
	out := s.replay(stream)
	if !out.Keeps {
		return false
	}
	got := Encode(out.Draws)
	if !ShortlexLess(got, s.bestBytes) {
		return false
	}
	s.best, s.bestBytes = out.Draws, got
	s.accepted++
	return true
}

// Describe lists the draws that are not zero as "#index=value/bound", the
// part of a shrunk stream a reader needs to see (every other draw took the
// quiet choice). It stops after max entries.
func Describe(draws []Draw, max int) string {
	var b strings.Builder
	n := 0
	for i, d := range draws {
		if d.Value == 0 {
			continue
		}
		if n == max {
			b.WriteString(" ...")
			break
		}
		if n > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "#%d=%d/%d", i, d.Value, d.Bound)
		n++
	}
	return b.String()
}
