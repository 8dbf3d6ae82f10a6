package fate

import (
	"math"
	"testing"
	"time"

	"shardsim/simclock"
)

func TestQuietNetworkDeliversEverything(t *testing.T) {
	c := Config{MinLatency: time.Millisecond, MaxLatency: 3 * time.Millisecond}
	ch := simclock.NewSeeded(1)
	for i := 0; i < 2000; i++ {
		d := c.Draw(ch)
		if d.Fate != Delivered || d.Delayed || d.Latency < c.MinLatency || d.Latency > c.MaxLatency {
			t.Fatalf("draw %d: %+v from a quiet network", i, d)
		}
	}
}

// The rates mean what Config says: a lost answer is drawn only for a
// request that arrived, and a delay adds at most MaxDelay.
func TestRatesAreHonoured(t *testing.T) {
	c := Config{MaxLatency: time.Millisecond, LoseRequest: 0.2, LoseResponse: 0.25, Delay: 0.1, MaxDelay: time.Second}
	ch := simclock.NewSeeded(7)
	const n = 40000
	count := map[Fate]int{}
	delayed := 0
	for i := 0; i < n; i++ {
		d := c.Draw(ch)
		count[d.Fate]++
		if d.Delayed {
			delayed++
		}
		if d.Latency > c.MaxLatency+c.MaxDelay || (!d.Delayed && d.Latency > c.MaxLatency) {
			t.Fatalf("latency %v out of bounds (%+v)", d.Latency, d)
		}
	}
	near := func(name string, got int, want float64) {
		if f := float64(got) / n; math.Abs(f-want) > 0.015 {
			t.Errorf("%s: rate %.3f, want about %.3f", name, f, want)
		}
	}
	near("lost request", count[LostRequest], 0.2)
	near("lost answer", count[LostResponse], 0.8*0.25)
	near("delivered", count[Delivered], 0.8*0.75)
	near("delayed", delayed, 0.1)
}

// The all-zero byte stream, which a minimiser shrinks towards, is the quiet
// fate; and a recorded stream replays to the same decisions.
func TestDrawsReplayAndZeroIsQuiet(t *testing.T) {
	c := Config{MinLatency: time.Millisecond, MaxLatency: 2 * time.Millisecond, LoseRequest: 0.5, LoseResponse: 0.5, Delay: 0.5, MaxDelay: time.Second}
	zero := simclock.NewBytes(nil)
	if d := c.Draw(zero); d.Fate != Delivered || d.Delayed || d.Latency != c.MinLatency {
		t.Fatalf("zero stream drew %+v", d)
	}
	rec, tape := simclock.NewRecorder(simclock.NewSeeded(3))
	var want []Decision
	for i := 0; i < 200; i++ {
		want = append(want, c.Draw(rec))
	}
	replay := simclock.NewBytes(tape.Bytes())
	for i, w := range want {
		if got := c.Draw(replay); got != w {
			t.Fatalf("draw %d replayed as %+v, recorded %+v", i, got, w)
		}
	}
}

func TestTimeoutOr(t *testing.T) {
	if got := (Config{}).TimeoutOr(time.Second); got != time.Second {
		t.Fatalf("unset deadline gave %v", got)
	}
	if got := (Config{Timeout: time.Millisecond}).TimeoutOr(time.Second); got != time.Millisecond {
		t.Fatalf("set deadline gave %v", got)
	}
}
