package nemesis

import (
	"time"

	"shardsim/fate"
	"shardsim/simclock"
	"shardsim/simkv"
)

// CoordProfile sets how likely each fault kind of a coordination run is to
// be switched on, and how hard it hits. The swarm draws the actual mix of
// each run from it; "coord" and "coord-zombie" use different profiles.
type CoordProfile struct {
	// Chance that each fault kind is on in a run.
	NetOn, CrashOn, PauseOn, PartitionOn, SkewOn, LeaderOn, StormOn, StallOn float64
	// Upper bounds of the per-tick rates (lower bounds are a tenth).
	MaxCrash, MaxPause, MaxPartition, MaxSkewRate, MaxLeader, MaxStorm, MaxStall float64
	// MaxSkew bounds every worker clock's distance from virtual time.
	MaxSkew time.Duration
}

// CoordFaults is one run's drawn fault mix for a coordination world.
type CoordFaults struct {
	Net     fate.Config   // request faults of the simulated etcd
	Rates   Rates         // the Standard fault mix of the Chaos actor
	Stalls  Stalls        // stalls of single worker tasks
	MaxSkew time.Duration // bound of every worker clock (and of a clock jump)
}

// DrawCoordFaults draws a run's fault mix from the swarm: each kind on or
// off, and its rate. leaseFor is the lease duration in virtual time, which
// sizes stalls and storms so that they outlive leases.
func DrawCoordFaults(sw *Swarm, p CoordProfile, leaseFor time.Duration) CoordFaults {
	f := CoordFaults{MaxSkew: p.MaxSkew}
	f.Net = DrawRequestFaults(sw, "", RequestFaultRange{On: p.NetOn, MinLose: 0.002, MaxLose: 0.05, MinDelay: 0.005, MaxDelay: 0.1}, simkv.DefaultFaults())
	f.Net.MaxDelay = leaseFor
	f.Net.Timeout = 500 * time.Millisecond
	f.Rates.Crash = sw.Rate("crash", p.CrashOn, p.MaxCrash/10, p.MaxCrash)
	f.Rates.Pause = sw.Rate("pause", p.PauseOn, p.MaxPause/10, p.MaxPause)
	f.Rates.Partition = sw.Rate("partition", p.PartitionOn, p.MaxPartition/10, p.MaxPartition)
	f.Rates.Skew = sw.Rate("skew", p.SkewOn, p.MaxSkewRate/10, p.MaxSkewRate)
	f.Rates.LeaderChange = sw.Rate("leader_change", p.LeaderOn, p.MaxLeader/10, p.MaxLeader)
	f.Rates.LeaseStorm = sw.Rate("lease_storm", p.StormOn, p.MaxStorm/10, p.MaxStorm)
	f.Stalls = Stalls{Rate: sw.Rate("stall", p.StallOn, p.MaxStall/10, p.MaxStall), Min: leaseFor, Max: 2 * leaseFor}
	return f
}

// Stalls freezes single tasks of a worker (a thread stuck in a GC pause, a
// slow disk, a page fault storm) for longer than a lease, while the rest
// of the process, which may share the worker's identity, goes on. The
// stalled task wakes up still believing it holds its lease: a zombie whose
// lease names the same worker as the one that took its shard over, the
// case only the fence tells apart.
type Stalls struct {
	Rate     float64
	Min, Max time.Duration
	Until    simclock.Time // no stall begins at or after this time (the heal)
}

// Draw decides whether a task about to act at now stalls first, and for
// how long. Zero means no stall; with stalls off it draws nothing.
func (s Stalls) Draw(c *simclock.Choices, now simclock.Time) time.Duration {
	if !c.Chance(s.Rate) || now >= s.Until {
		return 0
	}
	return c.Duration(s.Min, s.Max)
}
