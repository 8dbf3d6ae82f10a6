package simclock

import (
	"slices"
	"strings"
	"testing"

	"github.com/zeebo/blake3"
)

// traceRun is what a world's report reads of its trace.
type traceRun struct {
	digest string
	tail   []Record
	len    uint64
}

// runTraceWorld runs a small world of the given seed writing to tr, reads
// its trace and closes its loop. The seed draws how many records there are
// (fewer than the tail keeps, or many more) and how long each is (some
// longer than a hash batch, so the record buffer grows).
func runTraceWorld(seed uint64, tr *Trace) traceRun {
	c := NewSeeded(seed)
	l := NewLoop(tr, Budget{})
	n := 1 + c.Intn(120)
	for i := 0; i < n; i++ {
		size := c.Intn(3 << 10)
		if c.Intn(20) == 0 {
			size = hashBatch + c.Intn(hashBatch)
		}
		l.At(Time(c.Intn(1000)), func() {
			l.Rec("test.record", "actor").Uint("i", uint64(i)).Str("pad", strings.Repeat("x", size)).End()
		})
	}
	l.Run()
	r := traceRun{digest: tr.Digest(), tail: tr.Tail(), len: tr.Len()}
	l.Close()
	return r
}

// TestReusedTracesLeakNothingBetweenWorlds runs worlds of different seeds,
// interleaved, on traces that reuse one another's buffers, and checks that
// each gives the digest, tail and length of the same world on a fresh
// trace. It fails if the buffers are not reused at all, or if a reused
// hasher is not reset.
func TestReusedTracesLeakNothingBetweenWorlds(t *testing.T) {
	const tailCap = 40
	fresh := map[uint64]traceRun{}
	for seed := uint64(1); seed <= 6; seed++ {
		fresh[seed] = runTraceWorld(seed, NewTrace(tailCap))
	}
	spareTraces.drain() // start from no spares: the first world makes its own
	var hash *blake3.Hasher
	for i, seed := range []uint64{3, 1, 6, 2, 5, 4, 1, 3, 3} {
		tr := NewReusedTrace(tailCap)
		if i > 0 && tr.hash != hash {
			t.Fatalf("world %d did not run on the buffers the last world left", i)
		}
		hash = tr.hash
		got := runTraceWorld(seed, tr)
		want := fresh[seed]
		if got.digest != want.digest || got.len != want.len || !slices.Equal(got.tail, want.tail) {
			t.Fatalf("seed %d on a reused trace: digest %s len %d tail %d records, fresh: %s %d %d",
				seed, got.digest, got.len, len(got.tail), want.digest, want.len, len(want.tail))
		}
	}
	if n := len(spareTraces.snapshot()); n > maxSpareTraces {
		t.Fatalf("%d spare traces, at most %d allowed", n, maxSpareTraces)
	}
}

// TestReleasedTraceCannotBeRead: after its loop closes, a reused trace's
// buffers belong to the next world; reading it panics rather than show
// another world's records.
func TestReleasedTraceCannotBeRead(t *testing.T) {
	tr := NewReusedTrace(8)
	runTraceWorld(1, tr)
	for name, read := range map[string]func(){"Digest": func() { tr.Digest() }, "Tail": func() { tr.Tail() }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s of a released trace did not panic", name)
				}
			}()
			read()
		}()
	}
	if NewTrace(8).reused || NewCountingTrace().reused {
		t.Fatalf("only NewReusedTrace's traces are released by Close")
	}
}
