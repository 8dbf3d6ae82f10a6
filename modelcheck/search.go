// Package modelcheck enumerates the choice streams of a world
// systematically, breadth-first or by iterative deepening, within bounds,
// and prunes every state already explored by a blake3 fingerprint of the
// world's canonical encoding. A world is any Run: it takes a Source (the
// enumerator), calls visit after every event with its state, and says which
// property failed. Because a path is just the draws it made, a violation's
// witness encodes (shrink.Encode) to a choice file that replays it through
// the bytes driver.
//
// The search is stateless: each prefix is run from the start, and the run
// is cut at the first state some earlier run already reached with no more
// non-zero choices spent (its future was explored from there). See
// /work/team/explore-notes.md for how scenarios will provide the encoding.
package modelcheck

import (
	"errors"
	"time"

	"github.com/zeebo/blake3"

	"shardsim/simclock"
)

// Draw is one draw of a path: its bound, its value and the fork it was
// drawn through.
type Draw struct {
	Bound uint64
	Value uint64
	Fork  string
}

// Run runs one world driven by src. After every event it calls visit with
// the world's canonical state (the bytes are hashed at once, so the world
// may reuse its buffer); when visit returns false the world must stop. It
// returns the property the run violated, or "".
type Run func(src simclock.Source, visit func(state []byte) bool) (property string, err error)

// Bounds limit the search.
type Bounds struct {
	Depth  int                    // non-zero choices per path
	Values int                    // a draw below n takes 0..Values-1 and n-1 (at least 2)
	Draws  int                    // no branching at draw positions >= Draws (0: none)
	Branch func(fork string) bool // which forks' draws branch (nil: all)
	Max    int                    // stop after this many distinct states (0: no limit)
}

// Strategy is the order of the search.
type Strategy int

const (
	// BFS explores by depth: the first violation found has the fewest
	// non-zero choices.
	BFS Strategy = iota
	// IDDFS searches depth-first with the depth bound raised 0, 1, 2, ...;
	// it finds the same shallowest violation with a stack, not a queue.
	IDDFS
)

// Report is the outcome of a search.
type Report struct {
	States    int           // states visited (each visit of a run counts)
	Distinct  int           // distinct fingerprints
	Runs      int           // worlds run
	Pruned    int           // runs cut at a state already explored
	Depth     int           // the deepest depth searched
	Complete  bool          // the bounded space was explored to the end
	Property  string        // the violated property, if any
	Witness   []Draw        // the path to the violation
	Elapsed   time.Duration // wall time of the search
	Truncated bool          // stopped at Bounds.Max
}

// fingerprint is the first 16 bytes of blake3 of a state.
type fingerprint [16]byte

// searcher is the state shared by both strategies.
type searcher struct {
	run    Run
	b      Bounds
	seen   map[fingerprint]int // least depth at which each state was reached
	report Report
}

// errStop ends a search early (a violation, or the state limit).
var errStop = errors.New("stop")

// Search explores run's choice streams within b.
func Search(run Run, b Bounds, strategy Strategy) (Report, error) {
	if b.Values < 2 {
		b.Values = 2
	}
	start := time.Now()
	s := &searcher{run: run, b: b, seen: map[fingerprint]int{}}
	var err error
	switch strategy {
	case IDDFS:
		err = s.iddfs()
	default:
		err = s.bfs()
	}
	s.report.Elapsed = time.Since(start)
	s.report.Distinct = len(s.seen)
	if errors.Is(err, errStop) {
		err = nil
	}
	return s.report, err
}

// bfs runs prefixes in order of depth.
func (s *searcher) bfs() error {
	queue := [][]uint64{nil}
	for len(queue) > 0 {
		prefix := queue[0]
		queue = queue[1:]
		depth := nonZero(prefix)
		s.report.Depth = max(s.report.Depth, depth)
		draws, err := s.runPrefix(prefix, depth)
		if err != nil {
			return err
		}
		if depth < s.b.Depth {
			queue = append(queue, s.children(prefix, draws)...)
		}
	}
	s.report.Complete = true
	return nil
}

// iddfs runs depth-first searches with the depth bound raised one by one.
func (s *searcher) iddfs() error {
	for limit := 0; limit <= s.b.Depth; limit++ {
		s.report.Depth = limit
		s.seen = map[fingerprint]int{}
		more, err := s.dfs(nil, limit)
		if err != nil {
			return err
		}
		if !more { // no path was cut by the bound: deeper finds nothing new
			break
		}
	}
	s.report.Complete = true
	return nil
}

// dfs explores prefix and its descendants up to limit non-zero choices.
// It reports whether the limit cut any path short.
func (s *searcher) dfs(prefix []uint64, limit int) (bool, error) {
	depth := nonZero(prefix)
	draws, err := s.runPrefix(prefix, depth)
	if err != nil {
		return false, err
	}
	kids := s.children(prefix, draws)
	if depth >= limit {
		return len(kids) > 0, nil
	}
	cut := false
	for _, k := range kids {
		c, err := s.dfs(k, limit)
		if err != nil {
			return false, err
		}
		cut = cut || c
	}
	return cut, nil
}

// runPrefix runs one world on prefix and returns the draws it made.
func (s *searcher) runPrefix(prefix []uint64, depth int) ([]Draw, error) {
	t := &tape{prefix: prefix}
	s.report.Runs++
	pruned := false
	visit := func(state []byte) bool {
		if len(t.draws) < len(prefix) {
			return true // still on the parent's path: nothing new yet
		}
		s.report.States++
		sum := blake3.Sum256(state)
		var fp fingerprint
		copy(fp[:], sum[:16])
		if d, ok := s.seen[fp]; ok && d <= depth {
			pruned = true
			return false
		}
		s.seen[fp] = depth
		return s.b.Max == 0 || len(s.seen) < s.b.Max
	}
	prop, err := s.run(view{t: t}, visit)
	if err != nil {
		return nil, err
	}
	if pruned {
		s.report.Pruned++
	}
	if prop != "" && len(t.draws) >= len(prefix) {
		s.report.Property, s.report.Witness = prop, t.draws
		return nil, errStop
	}
	if s.b.Max > 0 && len(s.seen) >= s.b.Max {
		s.report.Truncated = true
		return nil, errStop
	}
	return t.draws, nil
}

// children are the prefixes that differ from this run in one more draw
// made after its own prefix.
func (s *searcher) children(prefix []uint64, draws []Draw) [][]uint64 {
	var out [][]uint64
	end := len(draws)
	if s.b.Draws > 0 {
		end = min(end, s.b.Draws)
	}
	for i := len(prefix); i < end; i++ {
		d := draws[i]
		if d.Bound < 2 || (s.b.Branch != nil && !s.b.Branch(d.Fork)) {
			continue
		}
		for _, v := range values(d.Bound, s.b.Values) {
			child := make([]uint64, i+1)
			copy(child, prefix)
			child[i] = v
			out = append(out, child)
		}
	}
	return out
}

// values are the non-zero values a draw below n may take: 1..k-1 and n-1.
func values(n uint64, k int) []uint64 {
	var out []uint64
	for v := uint64(1); v < uint64(k) && v < n; v++ {
		out = append(out, v)
	}
	if n-1 >= uint64(k) {
		out = append(out, n-1)
	}
	return out
}

func nonZero(prefix []uint64) int {
	n := 0
	for _, v := range prefix {
		if v != 0 {
			n++
		}
	}
	return n
}

// tape is the enumerator's stream: the prefix, then zeros; it notes every
// draw. All forks share it, as the bytes driver's forks share one tape, so
// a path replays through simclock.NewBytes.
type tape struct {
	prefix []uint64
	draws  []Draw
}

// view is the tape seen through one fork name.
type view struct {
	t    *tape
	fork string
}

func (v view) Draw(n uint64) uint64 {
	i := len(v.t.draws)
	var val uint64
	if i < len(v.t.prefix) {
		val = v.t.prefix[i] % n
	}
	v.t.draws = append(v.t.draws, Draw{Bound: n, Value: val, Fork: v.fork})
	return val
}

func (v view) Fork(name string) simclock.Source { return view{t: v.t, fork: name} }
