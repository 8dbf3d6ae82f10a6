package modelcheck

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"shardsim/simclock"
)

// World runs one world driven by src: after every event it calls visit
// with a function that returns the digest of the world's state as it
// stands (see simclock.Loop.TrackStates), and when visit returns false the
// world must cut the run there. The digest is asked for only past the
// run's prefix: the prefix's states were visited by the run that made it,
// and encoding and hashing a state costs about a fifth of an event.
type World func(src simclock.Source, visit func(state func() simclock.Digest) bool) (Outcome, error)

// Outcome is how one run ended.
type Outcome struct {
	Property string // the violated property ("" if none)
	Unknown  string // a check that could not decide (porcupine ran out of time), if any
	Cut      bool   // visit cut the run: its end-of-run checks did not run
}

// Bounds limit the search.
type Bounds struct {
	Depth int // non-zero choices per path
	// Values sets how many values a draw takes: an integer draw below n
	// its Values lowest (counting zero), the multiples of n/Values below n
	// and its largest; a duration or amount zero and Values-1 evenly spaced
	// values ending at its largest; a chance "no" (zero) and "yes" (its
	// largest). At least 2.
	Values int
	// Menu makes an integer draw with at most Menu outcomes (a pick from
	// a short menu: which mistake, which operation) take every value, so
	// no entry of a menu is out of reach whatever its index (0: none).
	Menu   int
	Draws  int   // branch only at draw positions below this (0: at any)
	Faults int   // non-zero choices on fault forks per path (negative: no limit)
	Branch Forks // forks whose draws branch (nil: all)
	Fault  Forks // forks whose non-zero choices count as faults
	Max    int   // stop after this many distinct states (0: no limit)
	// Time stops the search after this much wall time (0: no limit); like
	// Max it leaves the search incomplete.
	Time time.Duration
	// Memory bounds the bytes the search's tables may hold: the seen set
	// (16 bytes a slot, at most 90% full) and the prefixes (24 bytes each),
	// counted as allocated, old and new table together while one grows
	// (0: no limit). A search that reaches it stops, incomplete
	// (Report.MemoryBound). The count is exact and does not depend on the
	// machine, so where a search stops is reproducible; the worlds' own
	// memory and the collector's headroom come on top (simrun check gives
	// the tables three quarters of its -max-memory).
	Memory int
	// Grown, when not nil, is told the bytes of the tables whenever they
	// grow (simrun check sizes the runtime's soft memory limit from it).
	Grown func(tableBytes int)
	// NoPrune explores every path even through states seen before; with
	// All it is the reference a pruned search must agree with.
	NoPrune bool
	// All goes on after a violation, collecting every violated property.
	All bool
}

// Strategy is the order of the search.
type Strategy int

const (
	// BFS explores by depth: the first violation found has the fewest
	// non-zero choices.
	BFS Strategy = iota
	// IDDFS searches depth-first with the depth bound raised 0, 1, 2, ...;
	// it finds a shallowest violation with a stack, not a queue.
	IDDFS
)

// ParseStrategy reads "bfs" or "iddfs".
func ParseStrategy(s string) (Strategy, error) {
	switch s {
	case "bfs":
		return BFS, nil
	case "iddfs":
		return IDDFS, nil
	}
	return 0, fmt.Errorf("unknown strategy %q (bfs or iddfs)", s)
}

func (s Strategy) String() string {
	if s == IDDFS {
		return "iddfs"
	}
	return "bfs"
}

// Report is the outcome of a search.
type Report struct {
	States   int // states visited past their run's prefix (each visit counts)
	Distinct int // distinct state digests
	Runs     int // worlds run
	Pruned   int // runs cut at a state explored before
	Depth    int // the deepest depth searched
	// Complete: the space within the bounds was explored to the end (no
	// violation stopped it, nor Max or Time).
	Complete bool
	// Bounded: some path had more to explore than the bounds allowed
	// (depth, draws, faults, values or forks that do not branch), so a
	// complete search is not exhaustive.
	Bounded   bool
	Truncated bool // stopped at Max, Time or the memory bound
	// MemoryBound: the search stopped because its tables reached
	// Bounds.Memory (Truncated is set too).
	MemoryBound bool
	// TableBytes is the memory the search's tables held at the end: the
	// seen set and the prefixes generated.
	TableBytes int
	Property   string // the first violated property, if any
	Witness    []Draw // the path to it, up to the violation
	// WitnessStates and WitnessRuns are how many states and runs the
	// search had visited when it found the violation.
	WitnessStates, WitnessRuns int
	Violations                 map[string]int // with All: runs per violated property
	Unknown                    string         // a check that could not decide, if one did not
	Elapsed                    time.Duration
}

// WitnessDepth is the number of non-zero choices of the witness.
func (r Report) WitnessDepth() int {
	n := 0
	for _, d := range r.Witness {
		if d.Value != 0 {
			n++
		}
	}
	return n
}

// StatesPerSec is the rate of state visits.
func (r Report) StatesPerSec() float64 { return perSec(r.States, r.Elapsed) }

// DistinctPerSec is the rate of new distinct states.
func (r Report) DistinctPerSec() float64 { return perSec(r.Distinct, r.Elapsed) }

func perSec(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// node is a prefix: its parent's choices plus one more, at a later draw
// position. Nodes live in one slice (searcher.nodes) and name their parent
// by index: no pointers for the collector to scan, 24 bytes a prefix, and
// in a breadth-first search the slice is the queue itself.
type node struct {
	parent        uint32 // the index of the parent; the root (index 0) has none
	pos           int32
	val           uint64
	depth, faults uint16
}

// nodeBytes is the size of a node.
const nodeBytes = 24

// choices returns the prefix of node i as non-zero draws by position.
func (s *searcher) choices(i uint32) []choice {
	k := 0
	for m := i; m != 0; m = s.nodes[m].parent {
		k++
	}
	out := make([]choice, k)
	for m := i; m != 0; m = s.nodes[m].parent {
		k--
		out[k] = choice{pos: int(s.nodes[m].pos), val: s.nodes[m].val}
	}
	return out
}

// addNode appends n to the nodes, growing the slice by doubling while the
// memory bound allows; it reports false, adding nothing, when it does not.
func (s *searcher) addNode(n node) bool {
	if len(s.nodes) == cap(s.nodes) {
		grown := max(2*cap(s.nodes), 1024)
		if s.b.Memory > 0 && s.seen.Bytes()+(cap(s.nodes)+grown)*nodeBytes > s.b.Memory {
			return false
		}
		s.nodes = slices.Grow(s.nodes, grown-len(s.nodes))
		s.grown()
	}
	s.nodes = append(s.nodes, n)
	return true
}

// grown tells Bounds.Grown the size of the tables.
func (s *searcher) grown() {
	if s.b.Grown != nil && s.seen != nil {
		s.b.Grown(s.tableBytes())
	}
}

// room reports whether the seen set may allocate a table of bytes beside
// its current one within the memory bound.
func (s *searcher) room(bytes int) bool {
	return s.b.Memory <= 0 || s.seen.Bytes()+bytes+cap(s.nodes)*nodeBytes <= s.b.Memory
}

// tableBytes is the memory the search's tables (the seen set and the
// prefixes) hold.
func (s *searcher) tableBytes() int { return s.seen.Bytes() + cap(s.nodes)*nodeBytes }

// errStop ends a search early (a violation, Max, Time or Memory).
var errStop = errors.New("stop")

// errMemory ends a search whose tables reached the memory bound.
var errMemory = fmt.Errorf("%w: memory bound", errStop)

// searcher is the state both strategies share.
type searcher struct {
	world  World
	b      Bounds
	seen   *seenSet
	nodes  []node // every prefix generated (in a BFS, also its queue)
	tape   tape
	start  time.Time
	report Report
}

// Search explores world's choice streams within b.
func Search(world World, b Bounds, strategy Strategy) (Report, error) {
	if b.Values < 2 {
		b.Values = 2
	}
	if err := checkBounds(b); err != nil {
		return Report{}, err
	}
	s := &searcher{world: world, b: b, start: time.Now()}
	s.seen = newSeenSet(s.room, s.grown)
	s.tape.fault = b.Fault.Match
	if b.All {
		s.report.Violations = map[string]int{}
	}
	var err error
	if strategy == IDDFS {
		err = s.iddfs()
	} else {
		err = s.bfs()
	}
	s.report.Elapsed = time.Since(s.start)
	s.report.Distinct = s.seen.Len()
	s.report.TableBytes = s.tableBytes()
	if errors.Is(err, errMemory) {
		s.report.Truncated, s.report.MemoryBound = true, true
	}
	if errors.Is(err, errStop) {
		err = nil
	} else if err == nil {
		s.report.Complete = true
	}
	return s.report, err
}

// bfs runs prefixes in order of depth: the nodes are generated in that
// order, so they are their own queue.
func (s *searcher) bfs() error {
	s.nodes = s.nodes[:0]
	s.addNode(node{})
	for head := 0; head < len(s.nodes); head++ {
		n := s.nodes[head]
		s.report.Depth = max(s.report.Depth, int(n.depth))
		if err := s.runNode(uint32(head)); err != nil {
			return err
		}
		if err := s.children(uint32(head), nil, s.b.Depth, true); err != nil {
			return err
		}
	}
	return nil
}

// iddfs runs depth-first searches with the depth bound raised one by one.
// Each round starts from an empty seen set: a state pruned in one round
// was explored within that round's bound.
func (s *searcher) iddfs() error {
	for limit := 0; limit <= s.b.Depth; limit++ {
		s.report.Depth = limit
		s.nodes = s.nodes[:0]
		s.seen = newSeenSet(s.room, s.grown)
		s.addNode(node{})
		cut, err := s.dfs(0, limit)
		if err != nil {
			return err
		}
		if !cut { // no path was cut by this limit: deeper finds nothing new
			break
		}
	}
	return nil
}

// dfs explores node i and its descendants up to limit non-zero choices. It
// reports whether the limit left some child unexplored. The nodes of a
// subtree are dropped once it is explored.
func (s *searcher) dfs(i uint32, limit int) (bool, error) {
	if err := s.runNode(i); err != nil {
		return false, err
	}
	depth := int(s.nodes[i].depth)
	if depth >= limit {
		var kids []uint32
		err := s.children(i, &kids, depth+1, false)
		return len(kids) > 0, err
	}
	var kids []uint32
	mark := len(s.nodes)
	if err := s.children(i, &kids, limit, true); err != nil {
		return false, err
	}
	cut := false
	for _, k := range kids {
		c, err := s.dfs(k, limit)
		if err != nil {
			return false, err
		}
		cut = cut || c
	}
	s.nodes = s.nodes[:mark]
	return cut, nil
}

// runNode runs the world on n's prefix; the tape keeps its draws.
func (s *searcher) runNode(i uint32) error {
	t := &s.tape
	t.reset(s.choices(i))
	s.report.Runs++
	pruned, stop, full := false, false, false
	visit := func(state func() simclock.Digest) bool {
		if !t.past() {
			return true // still on the parent's path: nothing new yet
		}
		s.report.States++
		covered, _ := s.seen.visit(state(), s.spent())
		if covered && !s.b.NoPrune {
			pruned = true
			return false
		}
		if s.seen.Full() {
			full = true
			return false
		}
		if (s.b.Max > 0 && s.seen.Len() >= s.b.Max) || s.overTime() {
			stop = true
			return false
		}
		return true
	}
	out, err := s.world(view{t: t}, visit)
	if err != nil {
		return err
	}
	if pruned {
		s.report.Pruned++
	}
	if out.Unknown != "" && s.report.Unknown == "" && t.past() && !out.Cut {
		s.report.Unknown = out.Unknown
	}
	if out.Property != "" && t.past() && !out.Cut {
		if s.report.Property == "" {
			s.report.Property = out.Property
			s.report.Witness = append([]Draw(nil), t.draws...)
			s.report.WitnessStates, s.report.WitnessRuns = s.report.States, s.report.Runs
		}
		if !s.b.All {
			return errStop
		}
		s.report.Violations[out.Property]++
	}
	if full {
		return errMemory
	}
	if stop {
		s.report.Truncated = true
		return errStop
	}
	return nil
}

// spent is the budget the running path has spent so far. Dimensions
// without a bound count as nothing spent, so they never stop pruning.
func (s *searcher) spent() budget {
	b := budget{depth: uint16(s.tape.depth)}
	if s.b.Faults >= 0 {
		b.faults = uint16(s.tape.faults)
	}
	if s.b.Draws > 0 {
		// Past the Draws bound no draw branches: every such position has
		// the same future, so they all count as the bound itself.
		b.pos = uint32(min(len(s.tape.draws), s.b.Draws))
	}
	return b
}

func (s *searcher) overTime() bool {
	return s.b.Time > 0 && time.Since(s.start) > s.b.Time
}

// children adds the prefixes that differ from node i's run in one more
// draw made after its prefix (and before the run ended or was cut), with
// at most limit non-zero choices, and lists their indices in kids (if not
// nil). With add false it only counts them into kids. It notes whether a
// bound held some back, and fails with errMemory if the nodes reach the
// memory bound.
func (s *searcher) children(i uint32, kids *[]uint32, limit int, add bool) error {
	t := &s.tape
	n := s.nodes[i]
	end := len(t.draws)
	if s.b.Draws > 0 && end > s.b.Draws {
		end = s.b.Draws
		s.report.Bounded = true
	}
	for p := t.plen; p < end; p++ {
		d := t.draws[p]
		if d.Bound < 2 {
			continue
		}
		if (s.b.Branch != nil && !s.b.Branch.Match(d.Fork)) || int(n.depth) >= limit {
			s.report.Bounded = true
			continue
		}
		faults := n.faults
		if s.b.Fault.Match(d.Fork) {
			if s.b.Faults >= 0 && int(faults) >= s.b.Faults {
				s.report.Bounded = true
				continue
			}
			faults++
		}
		vals, all := alternatives(d, s.b.Values, s.b.Menu)
		if !all {
			s.report.Bounded = true
		}
		for _, v := range vals {
			if kids != nil {
				*kids = append(*kids, uint32(len(s.nodes)))
			}
			if !add {
				continue
			}
			if !s.addNode(node{parent: i, pos: int32(p), val: v, depth: n.depth + 1, faults: faults}) {
				return errMemory
			}
		}
	}
	return nil
}

// alternatives are the non-zero values draw d may take within values (and
// menu), and whether they and zero are all its outcomes.
func alternatives(d Draw, values, menu int) ([]uint64, bool) {
	top := d.Bound - 1
	if d.Kind == simclock.KindInt && d.Bound <= uint64(menu) {
		out := make([]uint64, 0, top)
		for v := uint64(1); v <= top; v++ {
			out = append(out, v)
		}
		return out, true
	}
	switch d.Kind {
	case simclock.KindChance:
		return []uint64{top}, true // every value below the threshold is "no", like zero
	case simclock.KindRange:
		var out []uint64
		steps := uint64(values - 1)
		for j := uint64(1); j <= steps; j++ {
			v := top / steps * j
			if j == steps {
				v = top
			}
			if v > 0 && (len(out) == 0 || out[len(out)-1] != v) {
				out = append(out, v)
			}
		}
		return out, uint64(len(out)) >= top
	}
	// An integer: its lowest values (a pick's first few choices), evenly
	// spaced ones (a percentile roll's middle cases) and its largest.
	var out []uint64
	for v := uint64(1); v < uint64(values) && v < top; v++ {
		out = append(out, v)
	}
	for j := uint64(1); j < uint64(values); j++ {
		out = append(out, d.Bound*j/uint64(values))
	}
	out = append(out, top)
	slices.Sort(out)
	out = slices.Compact(out)
	if out[0] == 0 {
		out = out[1:]
	}
	return out, uint64(len(out)) >= top
}
