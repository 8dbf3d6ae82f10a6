package simclock

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

func drawSome(c *Choices, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = c.Uint64n(uint64(i%7*1000 + 3))
	}
	return out
}

func TestSeededIsDeterministic(t *testing.T) {
	a, b := drawSome(NewSeeded(42), 100), drawSome(NewSeeded(42), 100)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("draw %d differs: %d vs %d", i, a[i], b[i])
		}
	}
	c := drawSome(NewSeeded(43), 100)
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	if same > 20 {
		t.Fatalf("seeds 42 and 43 agree on %d of 100 draws", same)
	}
}

// A fork's stream must not depend on how much its parent or siblings drew:
// that is what keeps old seeds' workloads stable when a consumer is added.
func TestForksAreIndependent(t *testing.T) {
	root1 := NewSeeded(7)
	w1 := drawSome(root1.Fork("workload"), 50)

	root2 := NewSeeded(7)
	drawSome(root2, 13)
	drawSome(root2.Fork("nemesis"), 31)
	w2 := drawSome(root2.Fork("workload"), 50)
	for i := range w1 {
		if w1[i] != w2[i] {
			t.Fatalf("fork draw %d shifted by other consumers: %d vs %d", i, w1[i], w2[i])
		}
	}
	x := drawSome(NewSeeded(7).Fork("other"), 50)
	same := 0
	for i := range x {
		if x[i] == w1[i] {
			same++
		}
	}
	if same > 15 {
		t.Fatalf("differently named forks agree on %d of 50 draws", same)
	}
}

func TestZeroBytesAreQuiet(t *testing.T) {
	c := NewBytes(nil)
	for i := 0; i < 100; i++ {
		if c.Chance(0.99) {
			t.Fatal("Chance(0.99) true on an all-zero stream")
		}
		if v := c.Between(5, 9); v != 5 {
			t.Fatalf("Between(5,9) = %d on zeros, want 5", v)
		}
	}
	if !c.Chance(1) {
		t.Fatal("Chance(1) must be true")
	}
	if !c.Exhausted() {
		t.Fatal("nil stream must report exhausted")
	}
}

func TestBytesDecodeBigEndianWidths(t *testing.T) {
	c := NewBytes([]byte{0x05, 0x01, 0x02, 0xff})
	if v := c.Uint64n(256); v != 5 {
		t.Fatalf("one-byte draw = %d, want 5", v)
	}
	if v := c.Uint64n(65536); v != 0x0102 {
		t.Fatalf("two-byte draw = %#x, want 0x102", v)
	}
	if v := c.Uint64n(1); v != 0 {
		t.Fatalf("Uint64n(1) = %d", v)
	}
	if v := c.Uint64n(10); v != 0xff%10 {
		t.Fatalf("draw mod n = %d, want %d", v, 0xff%10)
	}
}

// The recorder is what turns any run into a byte stream: replaying its
// recording through NewBytes must reproduce every draw, forks included.
func TestRecordingReplaysExactly(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		bounds := rapid.SliceOfN(rapid.Uint64Range(1, 1<<40), 1, 200).Draw(t, "bounds")
		forkAt := rapid.IntRange(0, len(bounds)).Draw(t, "forkAt")

		play := func(c *Choices) []uint64 {
			var out []uint64
			cur := c
			for i, n := range bounds {
				if i == forkAt {
					cur = c.Fork("child")
				}
				out = append(out, cur.Uint64n(n))
				if i%5 == 0 {
					_ = cur.Chance(0.3)
				}
			}
			return out
		}
		rc, rec := NewRecorder(NewSeeded(seed))
		want := play(rc)
		got := play(NewBytes(rec.Bytes()))
		for i := range want {
			if want[i] != got[i] {
				t.Fatalf("draw %d: recorded %d, replayed %d", i, want[i], got[i])
			}
		}
		// Replaying the recording while recording again gives the same bytes.
		rc2, rec2 := NewRecorder(NewBytes(rec.Bytes()))
		play(rc2)
		if !bytes.Equal(rec.Bytes(), rec2.Bytes()) {
			t.Fatal("re-recording a replay changed the stream")
		}
	})
}

func TestPRNGDrawsAreInRangeAndCoverIt(t *testing.T) {
	c := NewSeeded(1)
	seen := make([]int, 10)
	for i := 0; i < 10000; i++ {
		v := c.Intn(10)
		if v < 0 || v >= 10 {
			t.Fatalf("Intn(10) = %d", v)
		}
		seen[v]++
	}
	for v, n := range seen {
		if n < 800 || n > 1200 {
			t.Fatalf("value %d drawn %d times of 10000; distribution is off", v, n)
		}
	}
	hits := 0
	for i := 0; i < 10000; i++ {
		if c.Chance(0.25) {
			hits++
		}
	}
	if hits < 2200 || hits > 2800 {
		t.Fatalf("Chance(0.25) hit %d of 10000", hits)
	}
}

func TestShuffleAndPick(t *testing.T) {
	xs := []int{1, 2, 3, 4}
	Shuffle(NewBytes(nil), xs)
	if xs[0] != 1 || xs[3] != 4 {
		t.Fatalf("zero stream shuffled %v", xs)
	}
	if Pick(NewBytes(nil), []string{"a", "b"}) != "a" {
		t.Fatal("zero stream must pick the first element")
	}
}

// TestInlineForksMatchSourceForks checks that a seeded Choices' forks,
// whose generator lives inside the fork (Choices.Fork), draw exactly what
// the generator made by prngSource.Fork draws (the path a recorder's forks
// take), at every depth, and that all of them count into the root's draws.
func TestInlineForksMatchSourceForks(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		inline := NewSeeded(seed)
		recorded, _ := NewRecorder(NewSeeded(seed))
		for _, name := range []string{"nemesis", "worker/3", "", "nemesis"} {
			a, b := inline.Fork(name).Fork("child"), recorded.Fork(name).Fork("child")
			if a.prng == nil || a.prng != &a.seeded {
				t.Fatalf("seed %d: a fork of a seeded Choices does not draw from its own generator", seed)
			}
			for _, n := range []uint64{1, 2, 3, 1 << 16, 1<<63 + 5, 1000} {
				if x, y := a.Uint64n(n), b.Uint64n(n); x != y {
					t.Fatalf("seed %d fork %q: draw below %d = %d inline, %d via prngSource.Fork", seed, name, n, x, y)
				}
			}
		}
		if inline.Draws() != recorded.Draws() || inline.Draws() != 24 {
			t.Fatalf("seed %d: draws %d inline, %d recorded, want 24", seed, inline.Draws(), recorded.Draws())
		}
	}
}
