package shrink

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"shardsim/simclock"
)

// toy is a small "world": it draws a count n below 16, then n values below
// 1000, then a 16-bit chance draw. It fails when some value is at least 300
// and the chance draw is at least 60000. The shortlex-least failing stream
// is therefore: n = 1, the value 300, and a chance draw of one byte 0xeb
// (the stream ends there, so it reads 0xeb00 = 60160: shorter than 0xea60).
func toy(stream []byte) Outcome {
	tp := &tape{data: stream}
	c := simclock.NewFromSource(tp)
	n := c.Intn(16)
	big := false
	for i := 0; i < n; i++ {
		if c.Intn(1000) >= 300 {
			big = true
		}
	}
	chance := c.Uint64n(1 << 16)
	return Outcome{Keeps: big && chance >= 60000, Draws: tp.draws}
}

var toyMinimum = []byte{0x01, 0x01, 0x2c, 0xeb}

// randomFailing returns a random stream on which toy fails.
func randomFailing(r *rand.Rand) []byte {
	for {
		b := make([]byte, 40)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		if toy(b).Keeps {
			return b
		}
	}
}

func TestMinimiseFindsTheLeastFailingStream(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20; i++ {
		in := randomFailing(r)
		res, err := Minimise(in, toy, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(res.Stream, toyMinimum) {
			t.Fatalf("input %x shrank to %x, want %x", in, res.Stream, toyMinimum)
		}
		if !res.Fixpoint || res.Replays < 2 {
			t.Fatalf("fixpoint %v after %d replays", res.Fixpoint, res.Replays)
		}
		if !toy(res.Stream).Keeps {
			t.Fatal("the shrunk stream does not fail")
		}
	}
}

func TestMinimiseRefusesAPassingInputAndHonoursItsBudget(t *testing.T) {
	if _, err := Minimise(nil, toy, Options{}); !errors.Is(err, ErrNotFailing) {
		t.Fatalf("err = %v, want ErrNotFailing", err)
	}
	in := randomFailing(rand.New(rand.NewPCG(3, 4)))
	res, err := Minimise(in, toy, Options{MaxReplays: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replays > 5 || res.Fixpoint {
		t.Fatalf("%d replays, fixpoint %v: the budget of 5 was not kept", res.Replays, res.Fixpoint)
	}
	if !toy(res.Stream).Keeps || ShortlexLess(Encode(toy(in).Draws), res.Stream) {
		t.Fatal("a budget-bound shrink must still return a failing stream no larger than its input")
	}
}

func TestEncodeReplaysThroughNewBytes(t *testing.T) {
	draws := []Draw{{1, 0}, {2, 1}, {300, 299}, {1 << 16, 513}, {1 << 40, 1<<39 + 7}, {7, 0}}
	c := simclock.NewBytes(Encode(draws))
	for i, d := range draws {
		if v := c.Uint64n(d.Bound); v != d.Value {
			t.Fatalf("draw %d below %d read %d, want %d", i, d.Bound, v, d.Value)
		}
	}
	if got := Encode(draws); got[len(got)-1] == 0 {
		t.Fatalf("trailing zeros kept: %x", got)
	}
}

func TestShortlexLess(t *testing.T) {
	cases := []struct {
		a, b []byte
		want bool
	}{
		{nil, []byte{0}, true},
		{[]byte{9}, []byte{0, 0}, true},
		{[]byte{1, 2}, []byte{1, 3}, true},
		{[]byte{1, 3}, []byte{1, 2}, false},
		{[]byte{1}, []byte{1}, false},
	}
	for _, c := range cases {
		if got := ShortlexLess(c.a, c.b); got != c.want {
			t.Errorf("ShortlexLess(%x, %x) = %v", c.a, c.b, got)
		}
	}
}
