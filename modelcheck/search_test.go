package modelcheck

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/zeebo/blake3"

	"shardsim/simclock"
)

// counterWorld is a toy world: workers each add 1 to a shared counter
// `incs` times, by reading it, then writing the value read plus one. A
// worker is "slow" when its Chance draw says so: its write then lands a
// millisecond after its read instead of in the same event, and another
// worker's read in between loses an update. Workers start together, so the
// loop's order choice decides who goes first. With locked, a slow worker
// holds a lock from read to write and the others wait: no lost update. A
// ticker actor wakes every half millisecond and does nothing, privately
// (like a nemesis tick that injects nothing): its ticks commute with the
// workers' steps, which is what state pruning merges.
type counterWorld struct {
	counter int
	locked  bool
	holder  int // worker holding the lock, or -1
	want    int
}

type counterWorker struct {
	w     *counterWorld
	index int
	left  int
	read  int
	busy  bool
}

func (c *counterWorker) Receive(ctx *simclock.Context, msg any) {
	switch msg.(type) {
	case simclock.Started, string:
		c.step(ctx)
	}
}

func (c *counterWorker) step(ctx *simclock.Context) {
	w := c.w
	if c.left == 0 || c.busy {
		return
	}
	if w.locked && w.holder >= 0 && w.holder != c.index {
		ctx.After(time.Millisecond, "retry")
		return
	}
	slow := ctx.Choices().Chance(0.5)
	c.read, c.busy = w.counter, true
	if !slow {
		c.write(ctx)
		return
	}
	w.holder = c.index
	ctx.Defer(time.Millisecond, func(ctx *simclock.Context) { c.write(ctx) })
}

func (c *counterWorker) write(ctx *simclock.Context) {
	c.w.counter = c.read + 1
	c.busy, c.left = false, c.left-1
	if c.w.holder == c.index {
		c.w.holder = -1
	}
	if c.left > 0 {
		ctx.After(time.Millisecond, "next")
	}
}

type ticker struct{ left int }

func (k *ticker) Receive(ctx *simclock.Context, msg any) {
	ctx.Private()
	if k.left > 0 {
		k.left--
		ctx.After(500*time.Microsecond, "tick")
	}
}

// counterRun is the World of n workers with incs increments each. With
// unsound, its fingerprint is only the counter and the time: it merges
// states whose workers are at different points, which the soundness
// check must catch.
func counterRun(n, incs int, locked, unsound bool) World {
	return func(src simclock.Source, visit func(func() simclock.Digest) bool) (Outcome, error) {
		l := simclock.NewLoop(nil, simclock.Budget{MaxEvents: 10_000})
		w := &counterWorld{locked: locked, holder: -1, want: n * incs}
		cut := false
		l.TrackStates(func() bool {
			ok := true
			if unsound {
				var b [16]byte
				binary.LittleEndian.PutUint64(b[:], uint64(w.counter))
				binary.LittleEndian.PutUint64(b[8:], uint64(l.Now()))
				sum := blake3.Sum256(b[:])
				var d simclock.Digest
				copy(d[:], sum[:])
				ok = visit(func() simclock.Digest { return d })
			} else {
				ok = visit(l.StateDigest)
			}
			cut = cut || !ok
			return ok
		})
		root := simclock.NewFromSource(l.TrackDraws(src))
		got := runCounter(l, root, w, n, incs)
		return Outcome{Property: got, Cut: cut}, nil
	}
}

// runCounter runs the world; it returns the violated property or "".
func runCounter(l *simclock.Loop, root *simclock.Choices, w *counterWorld, n, incs int) string {
	l.OrderBy(root.Fork("loop/order"))
	l.Spawn("ticker", &ticker{left: 2 * n * incs}, nil, nil)
	for i := 0; i < n; i++ {
		l.Spawn("w", &counterWorker{w: w, index: i, left: incs}, nil, root.Fork("worker"))
	}
	if l.Run() == simclock.Stopped {
		return ""
	}
	if w.counter != w.want {
		return "Counter.NoLostUpdate"
	}
	return ""
}

// replayCounter runs the world from a byte stream, as simrun run -choices does.
func replayCounter(stream []byte, n, incs int) string {
	l := simclock.NewLoop(nil, simclock.Budget{MaxEvents: 10_000})
	w := &counterWorld{holder: -1, want: n * incs}
	return runCounter(l, simclock.NewBytes(stream), w, n, incs)
}

func TestSearchFindsTheLostUpdateAndItsWitnessReplays(t *testing.T) {
	for _, strategy := range []Strategy{BFS, IDDFS} {
		rep, err := Search(counterRun(2, 2, false, false), Bounds{Depth: 3, Faults: -1}, strategy)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Property != "Counter.NoLostUpdate" {
			t.Fatalf("%v: %+v, want the lost update", strategy, rep)
		}
		// The shallowest lost update needs one slow worker: depth 1.
		if rep.WitnessDepth() != 1 {
			t.Fatalf("%v: witness %v has depth %d, want 1", strategy, Chosen(rep.Witness), rep.WitnessDepth())
		}
		stream := Stream(rep.Witness)
		if got := replayCounter(stream, 2, 2); got != "Counter.NoLostUpdate" {
			t.Fatalf("%v: the witness %x replays to %q", strategy, stream, got)
		}
	}
}

func TestSearchPassesACorrectWorldAndPrunes(t *testing.T) {
	rep, err := Search(counterRun(3, 2, true, false), Bounds{Depth: 4, Faults: -1}, BFS)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Property != "" || !rep.Complete {
		t.Fatalf("locked world: %+v, want a complete clean pass", rep)
	}
	if rep.Pruned == 0 || rep.Distinct >= rep.States {
		t.Fatalf("nothing pruned: %d states, %d distinct, %d pruned runs", rep.States, rep.Distinct, rep.Pruned)
	}
	again, err := Search(counterRun(3, 2, true, false), Bounds{Depth: 4, Faults: -1}, IDDFS)
	if err != nil || again.Property != "" || again.Distinct != rep.Distinct {
		t.Fatalf("IDDFS saw %d distinct states, BFS %d (%v)", again.Distinct, rep.Distinct, err)
	}
}

// agree runs world with and without pruning, collecting every violation,
// and reports whether both saw the same states and the same violations.
func agree(t *testing.T, world World, b Bounds, strategy Strategy) (pruned, full Report, same bool) {
	t.Helper()
	b.All = true
	var err error
	if pruned, err = Search(world, b, strategy); err != nil {
		t.Fatal(err)
	}
	b.NoPrune = true
	if full, err = Search(world, b, strategy); err != nil {
		t.Fatal(err)
	}
	same = pruned.Distinct == full.Distinct && len(pruned.Violations) == len(full.Violations)
	for p := range full.Violations {
		if pruned.Violations[p] == 0 {
			same = false
		}
	}
	return pruned, full, same
}

// Pruning must not change what a search finds: with the world's sound
// fingerprint, a pruned search reaches every state and every violation an
// exhaustive one does, and with a fingerprint that merges different states
// it does not, which this comparison notices.
func TestPruningIsSound(t *testing.T) {
	for _, locked := range []bool{false, true} {
		for _, strategy := range []Strategy{BFS, IDDFS} {
			b := Bounds{Depth: 3, Faults: -1}
			p, f, same := agree(t, counterRun(2, 2, locked, false), b, strategy)
			if !same {
				t.Errorf("locked=%v %v: pruned search saw %d states %v, unpruned %d %v", locked, strategy, p.Distinct, p.Violations, f.Distinct, f.Violations)
			}
			t.Logf("locked=%v %v: %d distinct, %d/%d runs pruned, %v", locked, strategy, p.Distinct, p.Pruned, p.Runs, p.Violations)
			if p.Pruned == 0 {
				t.Errorf("locked=%v %v: nothing was pruned, so the comparison proves nothing", locked, strategy)
			}
		}
	}
	p, f, same := agree(t, counterRun(2, 2, false, true), Bounds{Depth: 3, Faults: -1}, BFS)
	t.Logf("unsound: pruned %d states %v (%d runs pruned), unpruned %d %v", p.Distinct, p.Violations, p.Pruned, f.Distinct, f.Violations)
	if same {
		t.Fatalf("an unsound fingerprint went unnoticed: pruned %d states %v, unpruned %d %v", p.Distinct, p.Violations, f.Distinct, f.Violations)
	}
}

func TestSearchBounds(t *testing.T) {
	rep, _ := Search(counterRun(2, 2, false, false), Bounds{Depth: 0, Faults: -1}, BFS)
	if rep.Property != "" || rep.Runs != 1 || !rep.Bounded {
		t.Fatalf("depth 0 is the quiet run alone, and bounded: %+v", rep)
	}
	rep, _ = Search(counterRun(2, 2, false, false), Bounds{Depth: 3, Faults: -1, Branch: Forks{"loop/order"}}, BFS)
	if rep.Property != "" {
		t.Fatalf("with no worker ever slow the counter is right, whatever the order: %+v", rep)
	}
	rep, _ = Search(counterRun(2, 2, false, false), Bounds{Depth: 3, Faults: 0, Fault: Forks{"worker"}}, BFS)
	if rep.Property != "" || !rep.Bounded {
		t.Fatalf("with no fault allowed on the workers' fork, no worker is slow: %+v", rep)
	}
	rep, _ = Search(counterRun(3, 3, true, false), Bounds{Depth: 6, Max: 10, Faults: -1}, BFS)
	if !rep.Truncated || rep.Distinct > 10 || rep.Complete {
		t.Fatalf("Max 10: %+v", rep)
	}
}

func TestAlternatives(t *testing.T) {
	cases := []struct {
		d      Draw
		values int
		want   []uint64
		all    bool
		menu   int
	}{
		{Draw{Bound: 65536, Kind: simclock.KindChance}, 2, []uint64{65535}, true, 0},
		{Draw{Bound: 65536, Kind: simclock.KindInt}, 2, []uint64{1, 32768, 65535}, false, 0},
		{Draw{Bound: 100, Kind: simclock.KindInt}, 4, []uint64{1, 2, 3, 25, 50, 75, 99}, false, 0},
		{Draw{Bound: 2, Kind: simclock.KindInt}, 4, []uint64{1}, true, 0},
		{Draw{Bound: 3, Kind: simclock.KindInt}, 2, []uint64{1, 2}, true, 0},
		{Draw{Bound: 4, Kind: simclock.KindInt}, 2, []uint64{1, 2, 3}, true, 0},
		{Draw{Bound: 101, Kind: simclock.KindRange}, 2, []uint64{100}, false, 0},
		{Draw{Bound: 101, Kind: simclock.KindRange}, 3, []uint64{50, 100}, false, 0},
		{Draw{Bound: 2, Kind: simclock.KindRange}, 3, []uint64{1}, true, 0},
		// A short menu takes every entry; a longer pick, a chance or an
		// amount does not.
		{Draw{Bound: 7, Kind: simclock.KindInt}, 2, []uint64{1, 2, 3, 4, 5, 6}, true, 8},
		{Draw{Bound: 7, Kind: simclock.KindInt}, 2, []uint64{1, 3, 6}, false, 0},
		{Draw{Bound: 9, Kind: simclock.KindInt}, 2, []uint64{1, 4, 8}, false, 8},
		{Draw{Bound: 65536, Kind: simclock.KindChance}, 2, []uint64{65535}, true, 8},
		{Draw{Bound: 5, Kind: simclock.KindRange}, 2, []uint64{4}, false, 8},
	}
	for _, c := range cases {
		got, all := alternatives(c.d, c.values, c.menu)
		if len(got) != len(c.want) || all != c.all {
			t.Errorf("%+v values %d: %v %v, want %v %v", c.d, c.values, got, all, c.want, c.all)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%+v values %d: %v, want %v", c.d, c.values, got, c.want)
			}
		}
	}
}

// BenchmarkSearchCounter measures the engine on the toy world (4 workers,
// 2 increments, locked: a complete clean search) in distinct states/s.
func BenchmarkSearchCounter(b *testing.B) {
	distinct := 0
	for i := 0; i < b.N; i++ {
		rep, err := Search(counterRun(4, 2, true, false), Bounds{Depth: 3, Faults: -1}, BFS)
		if err != nil || rep.Property != "" || !rep.Complete {
			b.Fatalf("%+v %v", rep, err)
		}
		distinct += rep.Distinct
	}
	b.ReportMetric(float64(distinct)/b.Elapsed().Seconds(), "distinct/s")
}

// A memory bound stops a search that would need more, incomplete, with its
// tables within the bound; without it the same search completes.
func TestMemoryBoundStopsIncomplete(t *testing.T) {
	world, b := counterRun(3, 2, true, false), Bounds{Depth: 5, Faults: -1}
	full, err := Search(world, b, BFS)
	if err != nil || !full.Complete || full.MemoryBound {
		t.Fatalf("unbounded: %+v %v", full, err)
	}
	// The first table (4096 slots) and the first blocks of prefixes fit,
	// a doubled table beside them does not.
	b.Memory = 160 << 10
	if full.Distinct < 4096 {
		t.Fatalf("the world is too small for the test: %d distinct states", full.Distinct)
	}
	rep, err := Search(world, b, BFS)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.MemoryBound || !rep.Truncated || rep.Complete || rep.Property != "" {
		t.Fatalf("bounded: %+v, want stopped by the memory bound", rep)
	}
	if rep.TableBytes > b.Memory || rep.Distinct >= full.Distinct || rep.Distinct == 0 {
		t.Fatalf("bounded: %d table bytes (bound %d), %d distinct of %d", rep.TableBytes, b.Memory, rep.Distinct, full.Distinct)
	}
	t.Logf("bounded at %d bytes: %d of %d distinct states, %d table bytes", b.Memory, rep.Distinct, full.Distinct, rep.TableBytes)
}

// The seen set fills to 90% when it may not grow, then takes no new state
// but still knows every state it holds.
func TestSeenSetFillsThenIsFull(t *testing.T) {
	s := newSeenSet(func(int) bool { return false }, nil)
	key := func(i int) simclock.Digest {
		sum := blake3.Sum256(binary.LittleEndian.AppendUint64(nil, uint64(i)))
		var d simclock.Digest
		copy(d[:], sum[:])
		return d
	}
	n := 0
	for ; !s.Full(); n++ {
		if covered, fresh := s.visit(key(n), budget{depth: 2}); covered || !fresh {
			t.Fatalf("key %d: covered %v fresh %v", n, covered, fresh)
		}
	}
	if n != 4096*9/10+1 || s.Len() != n || s.Bytes() != 4096*seenSlotBytes {
		t.Fatalf("full after %d keys (%d held, %d bytes)", n, s.Len(), s.Bytes())
	}
	if covered, fresh := s.visit(key(n), budget{}); covered || fresh || s.Len() != n {
		t.Fatal("a full set took a new key")
	}
	for i := 0; i < n; i++ {
		if covered, _ := s.visit(key(i), budget{depth: 3}); !covered {
			t.Fatalf("key %d was lost", i)
		}
		if covered, _ := s.visit(key(i), budget{depth: 1}); covered {
			t.Fatalf("key %d: a visit with more budget left was pruned", i)
		}
	}
}

// A slot holds the largest budgets the bounds allow, and bounds beyond
// them are refused.
func TestBudgetPacking(t *testing.T) {
	for _, b := range []budget{{}, {depth: maxDepth, faults: maxFaults, pos: maxDraws}, {depth: 3, faults: 1, pos: 700}} {
		if got := unpack(b.pack()); got != b {
			t.Fatalf("%+v packs to %+v", b, got)
		}
	}
	for _, b := range []Bounds{{Depth: maxDepth + 1}, {Faults: maxFaults + 1}, {Draws: maxDraws + 1}} {
		if _, err := Search(counterRun(2, 1, true, false), b, BFS); err == nil {
			t.Fatalf("%+v was not refused", b)
		}
	}
}
