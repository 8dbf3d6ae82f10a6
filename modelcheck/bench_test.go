package modelcheck

import (
	"syscall"
	"testing"
	"time"

	"shardsim/scenarios"
)

// BenchmarkCoordSmall is the clean search of coord's small preset cut at
// a fixed number of distinct states, so one search takes a few seconds.
// Besides ns/op it reports states per CPU second of the whole process
// (user and system time, the collector's included), the figure that holds
// on a shared machine where wall time does not.
func BenchmarkCoordSmall(b *testing.B) {
	p, err := LookupPreset("coord", "small")
	if err != nil {
		b.Fatal(err)
	}
	bounds := p.Bounds
	bounds.Max = 300_000
	world := ScenarioWorld("coord", scenarios.Config{Options: p.Options})
	b.ReportAllocs()
	states := 0
	cpu0 := cpuTime()
	for b.Loop() {
		rep, err := Search(world, bounds, p.Strategy)
		if err != nil {
			b.Fatal(err)
		}
		states += rep.States
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(states)/float64(b.N), "states/op")
	b.ReportMetric(float64(states)/cpu.Seconds(), "states/cpu-s")
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
