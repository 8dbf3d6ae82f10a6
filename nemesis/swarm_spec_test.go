package nemesis

import (
	"testing"
	"time"

	"shardsim/simclock"
)

// Specs renders every kind of option exactly as the text an override would
// use (the specs are made from numbers only when asked for).
func TestSpecsRenderEveryKind(t *testing.T) {
	sw := NewSwarm(simclock.NewSeeded(3), nil)
	sw.Int("clients", 0, 5)
	sw.Int("offset", -2, 3)
	sw.Enum("mode", 1, 3)
	sw.Rate("loss", 1, 0.0125, 0.25)
	sw.FollowRate("loss_again", "loss", 0.125)
	sw.FollowRate("alone", "nosuch", 0.33333)
	sw.Duration("pace", 1500*time.Microsecond, 2*time.Second)
	sw.Duration("start", 0, time.Minute)
	sw.FixedDuration("rest", 0, 10*time.Second)
	sw.Flag("leases", 0.5)
	sw.Int("clients", 7, 9) // described once: the first spec stays
	want := []OptionSpec{
		{Name: "clients", Kind: KindInt, Low: "0", High: "5", Min: "0", Max: "5000"},
		{Name: "offset", Kind: KindInt, Low: "-2", High: "3", Min: "-2", Max: "3000"},
		{Name: "mode", Kind: KindEnum, Low: "1", High: "3", Min: "1", Max: "3"},
		{Name: "loss", Kind: KindRate, Low: "0.0125", High: "0.25", Min: "0", Max: "1"},
		{Name: "loss_again", Kind: KindRate, Low: "0.0125", High: "0.25", Min: "0", Max: "1"},
		{Name: "alone", Kind: KindRate, Low: "0.3333", High: "0.3333", Min: "0", Max: "1"},
		{Name: "pace", Kind: KindDuration, Low: "1.5ms", High: "2s", Min: "1ns", Max: "33m20s"},
		{Name: "start", Kind: KindDuration, Low: "0s", High: "1m0s", Min: "0s", Max: "16h40m0s"},
		{Name: "rest", Kind: KindDuration, Low: "0s", High: "0s", Min: "0s", Max: "10s"},
		{Name: "leases", Kind: KindFlag, Low: "false", High: "true", Min: "false", Max: "true"},
	}
	got := sw.Specs()
	if len(got) != len(want) {
		t.Fatalf("specs %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("spec %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}
