package modelcheck

import (
	"encoding/binary"
	"testing"
	"time"

	"shardsim/simclock"
)

// counterWorld is a toy world: workers each add 1 to a shared counter
// `incs` times, by reading it, then writing the value read plus one. A
// worker is "slow" when its Chance draw says so: its write then lands a
// millisecond after its read instead of in the same event, and another
// worker's read in between loses an update. Workers start together, so the
// loop's order choice decides who goes first. With locked, a slow worker
// holds a lock from read to write and the others wait: no lost update.
type counterWorld struct {
	loop    *simclock.Loop
	counter int
	locked  bool
	holder  int // worker holding the lock, or -1
	workers []*counterWorker
	want    int
	buf     []byte
}

type counterWorker struct {
	w     *counterWorld
	index int
	left  int
	read  int  // the value read, while a write is pending
	busy  bool // between read and write
}

func (c *counterWorker) Receive(ctx *simclock.Context, msg any) {
	switch msg.(type) {
	case simclock.Started, string:
		c.step(ctx)
	}
}

// step reads (and, unless slow, writes) once, or waits for the lock.
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

// state encodes everything that decides the future, times relative to now
// (the toy's pending events are exactly one per worker, implied by busy
// and left).
func (w *counterWorld) state() []byte {
	b := w.buf[:0]
	b = binary.AppendVarint(b, int64(w.counter))
	b = binary.AppendVarint(b, int64(w.holder))
	for _, c := range w.workers {
		b = binary.AppendVarint(b, int64(c.left))
		b = binary.AppendVarint(b, int64(c.read))
		if c.busy {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	w.buf = b
	return b
}

// counterRun builds the Run of a world of n workers with incs each.
func counterRun(n, incs int, locked bool) Run {
	return func(src simclock.Source, visit func([]byte) bool) (string, error) {
		root := simclock.NewFromSource(src)
		return runCounter(root, n, incs, locked, visit), nil
	}
}

func runCounter(root *simclock.Choices, n, incs int, locked bool, visit func([]byte) bool) string {
	l := simclock.NewLoop(nil, simclock.Budget{MaxEvents: 10_000})
	l.OrderBy(root.Fork("loop/order"))
	w := &counterWorld{loop: l, locked: locked, holder: -1, want: n * incs}
	for i := 0; i < n; i++ {
		c := &counterWorker{w: w, index: i, left: incs}
		w.workers = append(w.workers, c)
		l.Spawn("w", c, nil, root.Fork("worker"))
	}
	l.OnStep(func() {
		if visit != nil && !visit(w.state()) {
			l.Stop()
		}
	})
	if l.Run() == simclock.Stopped {
		return ""
	}
	if w.counter != w.want {
		return "Counter.NoLostUpdate"
	}
	return ""
}

func TestSearchFindsTheLostUpdateAndItsWitnessReplays(t *testing.T) {
	for _, strategy := range []Strategy{BFS, IDDFS} {
		rep, err := Search(counterRun(2, 2, false), Bounds{Depth: 3}, strategy)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Property != "Counter.NoLostUpdate" {
			t.Fatalf("strategy %d: %+v, want the lost update", strategy, rep)
		}
		// The shallowest lost update needs one slow worker: depth 1.
		if nonZero(values2(rep.Witness)) != 1 {
			t.Fatalf("strategy %d: witness %+v has %d non-zero choices, want 1", strategy, rep.Witness, nonZero(values2(rep.Witness)))
		}
		// The witness replays through the bytes driver.
		stream := encode(rep.Witness)
		if got := runCounter(simclock.NewBytes(stream), 2, 2, false, nil); got != "Counter.NoLostUpdate" {
			t.Fatalf("strategy %d: the witness %x replays to %q", strategy, stream, got)
		}
	}
}

func TestSearchPassesACorrectWorldAndPrunes(t *testing.T) {
	rep, err := Search(counterRun(3, 2, true), Bounds{Depth: 4}, BFS)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Property != "" || !rep.Complete {
		t.Fatalf("locked world: %+v, want a complete clean pass", rep)
	}
	if rep.Pruned == 0 || rep.Distinct >= rep.States {
		t.Fatalf("nothing pruned: %d states, %d distinct, %d pruned runs", rep.States, rep.Distinct, rep.Pruned)
	}
	again, _ := Search(counterRun(3, 2, true), Bounds{Depth: 4}, IDDFS)
	if again.Property != "" || again.Distinct != rep.Distinct {
		t.Fatalf("IDDFS saw %d distinct states, BFS %d", again.Distinct, rep.Distinct)
	}
}

func TestSearchBounds(t *testing.T) {
	rep, _ := Search(counterRun(2, 2, false), Bounds{Depth: 0}, BFS)
	if rep.Property != "" || rep.Runs != 1 {
		t.Fatalf("depth 0 is the quiet run alone: %+v", rep)
	}
	rep, _ = Search(counterRun(2, 2, false), Bounds{Depth: 3, Branch: func(f string) bool { return f == "loop/order" }}, BFS)
	if rep.Property != "" {
		t.Fatalf("with no worker ever slow the counter is right, whatever the order: %+v", rep)
	}
	rep, _ = Search(counterRun(3, 3, true), Bounds{Depth: 6, Max: 10}, BFS)
	if !rep.Truncated || rep.Distinct > 10 || rep.Complete {
		t.Fatalf("Max 10: %+v", rep)
	}
	if got := values(65536, 2); len(got) != 2 || got[0] != 1 || got[1] != 65535 {
		t.Fatalf("values(65536, 2) = %v, want [1 65535]", got)
	}
	if got := values(2, 4); len(got) != 1 || got[0] != 1 {
		t.Fatalf("values(2, 4) = %v, want [1]", got)
	}
}

func values2(ds []Draw) []uint64 {
	out := make([]uint64, len(ds))
	for i, d := range ds {
		out[i] = d.Value
	}
	return out
}

// BenchmarkSearchCounter measures the engine on the toy world (4 workers,
// 2 increments, locked: a complete clean search) in distinct states/s.
func BenchmarkSearchCounter(b *testing.B) {
	distinct := 0
	for i := 0; i < b.N; i++ {
		rep, err := Search(counterRun(4, 2, true), Bounds{Depth: 4}, BFS)
		if err != nil || rep.Property != "" || !rep.Complete {
			b.Fatalf("%+v %v", rep, err)
		}
		distinct += rep.Distinct
	}
	b.ReportMetric(float64(distinct)/b.Elapsed().Seconds(), "distinct/s")
}
