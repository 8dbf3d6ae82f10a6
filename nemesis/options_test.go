package nemesis

import (
	"strings"
	"testing"
	"time"

	"shardsim/simclock"
)

// Overrides are range-checked by kind: a count of zero where every drawn
// value is positive, a probability above 1, a mode outside its range, a
// negative duration and a size past 1000 times the drawn maximum are all
// refused, with the accepted range in the error.
func TestOverridesAreRangeChecked(t *testing.T) {
	draw := func(name, value string) error {
		sw := NewSwarm(simclock.NewSeeded(1), map[string]string{name: value})
		sw.Int("clients", 2, 5)
		sw.Int("budget", 0, 2)
		sw.Enum("mode", 0, 2)
		sw.Rate("loss", 0.5, 0.01, 0.1)
		sw.Duration("pace", time.Millisecond, 10*time.Millisecond)
		sw.Duration("start", 0, time.Second)
		return sw.Err()
	}
	for _, tc := range []struct {
		name, value, want string
	}{
		{"clients", "0", "between 1 and 5000"},
		{"clients", "-3", "between 1 and 5000"},
		{"clients", "5001", "between 1 and 5000"},
		{"budget", "-1", "between 0 and 2000"},
		{"mode", "3", "between 0 and 2"},
		{"loss", "1.01", "a probability between 0 and 1"},
		{"loss", "-0.5", "a probability"},
		{"loss", "NaN", "a probability"},
		{"pace", "0s", "between 1ns and 10s"},
		{"start", "-1ms", "between 0s and 16m40s"},
	} {
		err := draw(tc.name, tc.value)
		if err == nil || !strings.Contains(err.Error(), tc.name+"="+tc.value) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: %v, want %q", tc.name, tc.value, err, tc.want)
		}
	}
	for _, ok := range [][2]string{{"clients", "1"}, {"clients", "5000"}, {"budget", "0"}, {"mode", "2"}, {"loss", "1"}, {"loss", "0"}, {"pace", "10s"}, {"start", "0s"}} {
		if err := draw(ok[0], ok[1]); err != nil {
			t.Errorf("%s=%s refused: %v", ok[0], ok[1], err)
		}
	}
}

// The specs say what each option draws and accepts; values above the
// drawn range are noted.
func TestOptionSpecs(t *testing.T) {
	sw := NewSwarm(simclock.NewSeeded(1), map[string]string{"clients": "9", "mode": "1", "loss": "0.05"})
	sw.Int("clients", 2, 5)
	sw.Enum("mode", 0, 2)
	sw.Rate("loss", 0.5, 0.01, 0.1)
	sw.Flag("leases", 0.5)
	specs := sw.Specs()
	if len(specs) != 4 || specs[0] != (OptionSpec{Name: "clients", Kind: KindInt, Low: "2", High: "5", Min: "1", Max: "5000"}) ||
		specs[1].Kind != KindEnum || specs[2].Max != "1" || specs[3].Kind != KindFlag {
		t.Fatalf("specs %+v", specs)
	}
	if got := sw.Outside(); len(got) != 1 || got[0] != "clients=9 (drawn 2..5)" {
		t.Fatalf("outside %v", got)
	}
}

// Enum draws exactly as Int does, so making an option an Enum moves no
// seed's draws.
func TestEnumDrawsLikeInt(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		a := NewSwarm(simclock.NewSeeded(seed), nil).Int("x", 1, 7)
		b := NewSwarm(simclock.NewSeeded(seed), nil).Enum("x", 1, 7)
		if a != b {
			t.Fatalf("seed %d: Int %d, Enum %d", seed, a, b)
		}
	}
}

// A followed rate draws nothing (runs of a seed or a choice file do not
// change when one is added), takes the value it follows unless overridden,
// and range-checks its override like a drawn rate.
func TestFollowRateDrawsNothingAndFollows(t *testing.T) {
	ch := simclock.NewSeeded(1)
	sw := NewSwarm(ch, nil)
	sw.Fixed("mistakes", 0.25)
	if got := sw.FollowRate("slip", "mistakes", 0.25); got != 0.25 || ch.Draws() != 0 {
		t.Fatalf("FollowRate = %v after %d draws, want 0.25 after none", got, ch.Draws())
	}
	if s := sw.String(); s != "mistakes=0.25 slip=0.25" {
		t.Fatalf("options line %q, want mistakes=0.25 slip=0.25", s)
	}
	ch = simclock.NewSeeded(1)
	sw = NewSwarm(ch, nil)
	sw.Rate("mistakes", 0.5, 0.01, 0.1)
	drawn := ch.Draws()
	sw.FollowRate("slip", "mistakes", 0.05)
	if specs := sw.Specs(); ch.Draws() != drawn || specs[1].Low != "0.01" || specs[1].High != "0.1" {
		t.Fatalf("a rate following mistakes: %+v after %d more draws, want drawn 0.01..0.1 and none", specs[1], ch.Draws()-drawn)
	}
	sw = NewSwarm(ch, map[string]string{"slip": "1"})
	if got := sw.FollowRate("slip", "mistakes", 0.25); got != 1 || sw.Err() != nil {
		t.Fatalf("overridden FollowRate = %v (%v), want 1", got, sw.Err())
	}
	sw = NewSwarm(ch, map[string]string{"slip": "2"})
	sw.FollowRate("slip", "mistakes", 0.25)
	if err := sw.Err(); err == nil || !strings.Contains(err.Error(), "a probability between 0 and 1") {
		t.Fatalf("slip=2 gave %v, want a range error", err)
	}
}

// A fixed duration draws nothing, is its default unless overridden, and
// range-checks its override.
func TestFixedDurationDrawsNothing(t *testing.T) {
	ch := simclock.NewSeeded(1)
	sw := NewSwarm(ch, nil)
	if got := sw.FixedDuration("start", 0, time.Second); got != 0 || ch.Draws() != 0 || sw.String() != "start=0s" {
		t.Fatalf("FixedDuration = %v after %d draws (%q), want 0s after none", got, ch.Draws(), sw.String())
	}
	sw = NewSwarm(ch, map[string]string{"start": "205ms"})
	if got := sw.FixedDuration("start", 0, time.Second); got != 205*time.Millisecond || sw.Err() != nil || ch.Draws() != 0 {
		t.Fatalf("overridden FixedDuration = %v (%v)", got, sw.Err())
	}
	for _, bad := range []string{"2s", "-1ms", "soon"} {
		sw = NewSwarm(ch, map[string]string{"start": bad})
		if sw.FixedDuration("start", 0, time.Second); sw.Err() == nil {
			t.Fatalf("start=%s was accepted", bad)
		}
	}
}
