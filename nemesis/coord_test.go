package nemesis

import (
	"testing"
	"time"

	"shardsim/simclock"
)

var testProfile = CoordProfile{
	NetOn: 1, CrashOn: 1, PauseOn: 1, PartitionOn: 1, SkewOn: 1, LeaderOn: 1, StormOn: 1, StallOn: 1,
	MaxCrash: 0.1, MaxPause: 0.1, MaxPartition: 0.1, MaxSkewRate: 0.2, MaxLeader: 0.05, MaxStorm: 0.02, MaxStall: 0.05,
	MaxSkew: 300 * time.Millisecond,
}

func TestDrawCoordFaultsQuietStreamTurnsEverythingOff(t *testing.T) {
	p := testProfile
	p.NetOn, p.CrashOn, p.PauseOn, p.PartitionOn, p.SkewOn, p.LeaderOn, p.StormOn, p.StallOn = 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9
	sw := NewSwarm(simclock.NewBytes(nil), nil)
	f := DrawCoordFaults(sw, p, time.Second)
	if f.Rates.Any() || f.Stalls.Rate != 0 || f.Net.LoseRequest != 0 || f.Net.LoseResponse != 0 || f.Net.Delay != 0 {
		t.Fatalf("quiet stream drew faults: %+v", f)
	}
	if f.MaxSkew != testProfile.MaxSkew || f.Stalls.Min != time.Second || f.Stalls.Max != 2*time.Second {
		t.Fatalf("bounds not taken from the profile and lease: %+v", f)
	}
}

func TestDrawCoordFaultsStaysWithinTheProfile(t *testing.T) {
	on := 0
	for seed := uint64(1); seed <= 50; seed++ {
		sw := NewSwarm(simclock.NewSeeded(seed), nil)
		f := DrawCoordFaults(sw, testProfile, time.Second)
		r := f.Rates
		if r.Crash > 0.1 || r.Pause > 0.1 || r.Partition > 0.1 || r.Skew > 0.2 || r.LeaderChange > 0.05 || r.LeaseStorm > 0.02 || f.Stalls.Rate > 0.05 {
			t.Fatalf("seed %d: rates above the profile: %+v %+v", seed, r, f.Stalls)
		}
		if r.Crash > 0 && f.Stalls.Rate > 0 && f.Net.LoseRequest > 0 {
			on++
		}
	}
	if on == 0 {
		t.Fatal("with every kind on, no seed drew crash, stall and loss rates")
	}
	sw := NewSwarm(simclock.NewSeeded(1), map[string]string{"stall": "0.5", "crash": "0"})
	if f := DrawCoordFaults(sw, testProfile, time.Second); f.Stalls.Rate != 0.5 || f.Rates.Crash != 0 || sw.Err() != nil {
		t.Fatalf("overrides not applied: %+v %v", f, sw.Err())
	}
}

func TestStallsDraw(t *testing.T) {
	s := Stalls{Rate: 1, Min: time.Second, Max: 2 * time.Second, Until: simclock.Time(10 * time.Second)}
	c := simclock.NewSeeded(3)
	for i := 0; i < 20; i++ {
		if d := s.Draw(c, simclock.Time(time.Second)); d < time.Second || d > 2*time.Second {
			t.Fatalf("stall of %v outside [1s, 2s]", d)
		}
	}
	if d := s.Draw(c, simclock.Time(10*time.Second)); d != 0 {
		t.Fatalf("stall of %v after the heal", d)
	}
	before := c.Draws()
	if d := (Stalls{}).Draw(c, 0); d != 0 || c.Draws() != before {
		t.Fatalf("stalls off drew %v (%d draws)", d, c.Draws()-before)
	}
}
