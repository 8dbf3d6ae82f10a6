package hlc

import (
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// Timestamps a clock issues rise strictly and never exceed the ceiling,
// whatever the physical clock does (skew, jumps back).
func TestNextIsMonotoneUnderTheCeiling(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := Start(Make(rapid.Uint64Range(0, 100).Draw(t, "last"), 3), rapid.Uint64Range(0, 100).Draw(t, "ceiling"))
		prev := c.Last()
		for i := 0; i < 200; i++ {
			if rapid.IntRange(0, 9).Draw(t, "raise") == 0 {
				c.SetCeiling(c.Ceiling() + rapid.Uint64Range(0, 50).Draw(t, "by"))
			}
			now := rapid.Uint64Range(0, 400).Draw(t, "now")
			ts, err := c.Next(now)
			if errors.Is(err, ErrCeiling) {
				if c.Last() < CeilingTop(c.Ceiling()) {
					t.Fatalf("ErrCeiling with room left: last %s ceiling %d", c.Last(), c.Ceiling())
				}
				continue
			}
			if ts <= prev || ts.Phys() > c.Ceiling() {
				t.Fatalf("issued %s after %s under ceiling %d", ts, prev, c.Ceiling())
			}
			prev = ts
		}
	})
}

// A new leader starts above everything the old one could have issued or
// observed under the same ceiling.
func TestStartClearsTheOldCeiling(t *testing.T) {
	old := Start(0, 50)
	ts, _ := old.Next(10)
	_ = old.Observe(Make(50, 7))
	fresh := Start(ts, 50)
	if _, err := fresh.Next(10); !errors.Is(err, ErrCeiling) {
		t.Fatal("a new leader issued under the old ceiling without raising it")
	}
	fresh.SetCeiling(60)
	n, err := fresh.Next(10)
	if err != nil || n <= Make(50, 7) {
		t.Fatalf("after the raise: %s %v", n, err)
	}
}

func TestObserve(t *testing.T) {
	c := Start(0, 10)
	if err := c.Observe(Make(11, 0)); !errors.Is(err, ErrCeiling) {
		t.Fatal("observed above the ceiling")
	}
	if err := c.Observe(Make(5, 0)); err != nil || c.Last() < Make(10, 0) {
		t.Fatal("observe below last must keep last")
	}
	c.ObserveDurable(Make(20, 4))
	if c.Ceiling() != 20 || c.Last() != Make(20, 4) {
		t.Fatalf("durable observe: %d %s", c.Ceiling(), c.Last())
	}
	if Make(3, 9).Phys() != 3 || Make(3, 9).Logical() != 9 || Make(3, 9).String() != "3.9" {
		t.Fatal("encoding")
	}
}

// String and AppendTo write phys.logical in decimal, as fmt does, within
// MaxStringLen; AppendTo keeps what its buffer already held.
func TestStringIsPhysDotLogical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ts := TS(rapid.Uint64().Draw(t, "ts"))
		want := fmt.Sprintf("%d.%d", ts.Phys(), ts.Logical())
		if got := ts.String(); got != want || len(got) > MaxStringLen {
			t.Fatalf("String() = %q, want %q (at most %d bytes)", got, want, MaxStringLen)
		}
		if got := string(ts.AppendTo([]byte("ts="))); got != "ts="+want {
			t.Fatalf("AppendTo = %q, want %q", got, "ts="+want)
		}
	})
	if got := TS(1<<64 - 1).String(); got != "281474976710655.65535" {
		t.Fatalf("the largest timestamp renders as %q", got)
	}
}
