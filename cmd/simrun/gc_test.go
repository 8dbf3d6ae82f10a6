package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// gcSettings reads the collector's target and soft memory limit without
// changing them.
func gcSettings() (percent int, limit int64) {
	percent = debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// tuneGC sets simrun's collector target and memory limit only where the
// environment leaves them unset: an explicit GOGC or GOMEMLIMIT, already
// applied by the runtime, must survive it.
func TestTuneGCRespectsTheEnvironment(t *testing.T) {
	percent, limit := gcSettings()
	defer func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}()
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	for _, c := range []struct {
		name string
		vars map[string]string
		// what the runtime made of vars at start-up: the explicit values,
		// or Go's defaults (100, no limit)
		startPercent int
		startLimit   int64
		wantPercent  int
		wantLimit    int64
	}{
		{"neither set", nil, 100, math.MaxInt64, gcPercent, memoryLimit},
		{"GOGC set", map[string]string{"GOGC": "150"}, 150, math.MaxInt64, 150, memoryLimit},
		{"GOGC off", map[string]string{"GOGC": "off"}, -1, math.MaxInt64, -1, memoryLimit},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "123MiB"}, 100, 123 << 20, gcPercent, 123 << 20},
		{"both set", map[string]string{"GOGC": "150", "GOMEMLIMIT": "123MiB"}, 150, 123 << 20, 150, 123 << 20},
	} {
		debug.SetGCPercent(c.startPercent)
		debug.SetMemoryLimit(c.startLimit)
		tuneGC(env(c.vars))
		if p, l := gcSettings(); p != c.wantPercent || l != c.wantLimit {
			t.Errorf("%s: GC percent %d, memory limit %d; want %d, %d", c.name, p, l, c.wantPercent, c.wantLimit)
		}
	}
}

// A sweep runs on as many threads as it has workers, never more than the
// process had, and an explicit GOMAXPROCS always wins; the setting is put
// back when the sweep ends.
func TestLimitProcsFollowsTheWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	for _, c := range []struct {
		name     string
		parallel int
		vars     map[string]string
		want     int
	}{
		{"one worker", 1, nil, 1},
		{"fewer workers than threads", 3, nil, 3},
		{"as many workers", 4, nil, 4},
		{"more workers", 9, nil, 4},
		{"GOMAXPROCS set", 1, map[string]string{"GOMAXPROCS": "4"}, 4},
	} {
		restore := limitProcs(c.parallel, env(c.vars))
		if got := runtime.GOMAXPROCS(0); got != c.want {
			t.Errorf("%s: %d threads during the sweep, want %d", c.name, got, c.want)
		}
		restore()
		if got := runtime.GOMAXPROCS(0); got != 4 {
			t.Errorf("%s: %d threads after the sweep, want the 4 it had", c.name, got)
		}
	}
}
