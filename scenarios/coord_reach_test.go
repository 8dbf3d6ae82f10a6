package scenarios

import (
	"runtime"
	"strings"
	"sync"
	"testing"

	"shardsim/property"
	"shardsim/reach"
)

// coordReachSeeds is how many seeds of the coord scenario must together
// reach every reachability point of the "coord" group.
const coordReachSeeds = 2000

// TestCoordReachesEveryRule is the coordination worlds' "sometimes"
// check: a sweep of the coord scenario must reach every declared point
// (each refusal of seed 004 per operation, each fault kind, each
// fault-handling branch of the etcd backend) at least once, and every run
// of it must pass. A point no run reaches is a rule no checker was shown
// to guard. `simrun sweep -scenario coord -seeds 1-2000 -coverage` prints
// the same table.
func TestCoordReachesEveryRule(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps 2000 seeds")
	}
	table := reach.NewTable("coord")
	var mu sync.Mutex
	seeds := make(chan uint64)
	var wg sync.WaitGroup
	for i := 0; i < runtime.GOMAXPROCS(0); i++ {
		wg.Add(1)
		go func() { // independent worlds: parallelism cannot change a run
			defer wg.Done()
			for s := range seeds {
				res, err := Run("coord", Config{Seed: s})
				mu.Lock()
				switch {
				case err != nil:
					t.Errorf("seed %d: %v", s, err)
				case res.Verdict != property.VerdictOK:
					t.Errorf("seed %d: %s %s: %s", s, res.Verdict, res.Property, res.Detail)
				default:
					table.Add(res.Reach)
				}
				mu.Unlock()
			}
		}()
	}
	for s := uint64(1); s <= coordReachSeeds; s++ {
		seeds <- s
	}
	close(seeds)
	wg.Wait()
	var out strings.Builder
	table.Write(&out)
	t.Log("\n" + out.String())
	if m := table.Missing(); len(m) > 0 {
		t.Errorf("%d points never reached in %d seeds: %s", len(m), coordReachSeeds, strings.Join(m, ", "))
	}
	if u := table.Undeclared(); len(u) > 0 {
		t.Errorf("points reached but never declared: %s", strings.Join(u, ", "))
	}
}
