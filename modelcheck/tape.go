package modelcheck

import (
	"bytes"
	"fmt"
	"strings"

	"shardsim/simclock"
)

// Draw is one draw of a path: its bound, its value, what kind of decision
// it was and the fork it was drawn through.
type Draw struct {
	Bound uint64
	Value uint64
	Kind  simclock.DrawKind
	Fork  string
}

// choice is one non-zero draw of a prefix: the value at a draw position.
type choice struct {
	pos int
	val uint64
}

// tape is the enumerator's stream: the prefix's choices at their
// positions, zero (the quiet choice) everywhere else. All forks share it,
// as the bytes driver's forks share one tape, so a path replays through
// simclock.NewBytes. It notes every draw and keeps count of the non-zero
// ones (depth) and of those on fault forks.
type tape struct {
	set    []choice
	next   int
	draws  []Draw
	plen   int // draws at or beyond plen are past the prefix
	depth  int
	faults int
	fault  func(fork string) bool
	// same is how many first draws of this run are those of the run
	// before it on this tape, whose folds (simclock.FoldMemo) it reuses.
	same  int
	folds simclock.FoldMemo
}

// reset readies the tape for a run of prefix set.
func (t *tape) reset(set []choice) {
	t.same = sameDraws(t.draws, set)
	t.set, t.next, t.draws, t.depth, t.faults = set, 0, t.draws[:0], 0, 0
	t.plen = 0
	if n := len(set); n > 0 {
		t.plen = set[n-1].pos + 1
	}
}

// sameDraws is how many first draws a run of prefix set makes as the run
// that made last did: up to the first position where set gives another
// value (a value of set is taken modulo the draw's bound, as draw does),
// and no further than last went.
func sameDraws(last []Draw, set []choice) int {
	next := 0
	for i, d := range last {
		var v uint64
		if next < len(set) && set[next].pos == i {
			v = set[next].val % d.Bound
			next++
		}
		if v != d.Value {
			return i
		}
	}
	return len(last)
}

// past reports whether the run has made every draw of its prefix.
func (t *tape) past() bool { return len(t.draws) >= t.plen }

func (t *tape) draw(n uint64, kind simclock.DrawKind, fork string) uint64 {
	i := len(t.draws)
	var v uint64
	if t.next < len(t.set) && t.set[t.next].pos == i {
		v = t.set[t.next].val % n
		t.next++
	}
	t.draws = append(t.draws, Draw{Bound: n, Value: v, Kind: kind, Fork: fork})
	if v != 0 {
		t.depth++
		if t.fault != nil && t.fault(fork) {
			t.faults++
		}
	}
	return v
}

// view is the tape seen through one fork.
type view struct {
	t    *tape
	fork string
}

func (v view) Draw(n uint64) uint64 { return v.t.draw(n, simclock.KindInt, v.fork) }

func (v view) DrawKind(n uint64, kind simclock.DrawKind) uint64 { return v.t.draw(n, kind, v.fork) }

// Fork names the sub-stream by its path from the root ("workload/client0/watch").
func (v view) Fork(name string) simclock.Source {
	if v.fork != "" {
		name = v.fork + "/" + name
	}
	return view{t: v.t, fork: name}
}

// Stream returns a path as the byte stream simclock.NewBytes replays (the
// encoding of shrink.Encode and of simrun run -choices: each value
// big-endian in its bound's width, trailing zeros dropped).
func Stream(path []Draw) []byte {
	var out []byte
	for _, d := range path {
		for i := simclock.DrawWidth(d.Bound) - 1; i >= 0; i-- {
			out = append(out, byte(d.Value>>(8*uint(i))))
		}
	}
	return bytes.TrimRight(out, "\x00")
}

// Chosen lists a path's non-zero draws as "#position=value/bound@fork".
func Chosen(path []Draw) []string {
	var out []string
	for i, d := range path {
		if d.Value != 0 {
			out = append(out, fmt.Sprintf("#%d=%d/%d@%s", i, d.Value, d.Bound, d.Fork))
		}
	}
	return out
}

// Forks matches fork names against a list of patterns: a pattern ending
// in "*" matches every name it begins, any other pattern only itself, and
// a pattern written "-P" excludes what P matches ("*,-swarm": every fork
// but the swarm's).
type Forks []string

// ParseForks reads a comma-separated pattern list ("" is none).
func ParseForks(s string) Forks {
	var out Forks
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Match reports whether some pattern matches fork and no exclusion does.
func (f Forks) Match(fork string) bool {
	in := false
	for _, p := range f {
		if ex, ok := strings.CutPrefix(p, "-"); ok {
			if matchFork(ex, fork) {
				return false
			}
			continue
		}
		in = in || matchFork(p, fork)
	}
	return in
}

func matchFork(pattern, fork string) bool {
	if pre, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(fork, pre)
	}
	return pattern == fork
}

func (f Forks) String() string { return strings.Join(f, ",") }
