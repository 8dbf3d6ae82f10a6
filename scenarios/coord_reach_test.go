package scenarios

import (
	"runtime"
	"strings"
	"sync"
	"testing"

	"shardsim/property"
	"shardsim/reach"
)

// TestCoordReachesEveryRule is the coordination worlds' "sometimes"
// check: a sweep of the coord scenario must reach every declared point
// (each refusal of seed 004 per operation, each fault kind, each
// fault-handling branch of the etcd backend) at least once, and every run
// of it must pass. A point no run reaches is a rule no checker was shown
// to guard. `simrun sweep -scenario coord -seeds 1-2000 -coverage` prints
// the same table. The last point first reached is
// complete.refused.stale_fence, at seed 471: 1000 seeds in CI, 4000 long.
func TestCoordReachesEveryRule(t *testing.T) {
	coordReachSeeds := sweepSeeds(t, 1000, 4000)
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
	for s := uint64(1); s <= uint64(coordReachSeeds); s++ {
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
