package scenarios

import (
	"runtime"
	"sync"
	"testing"
)

// determinismLongSeeds is how many seeds TestDeterminism runs per
// scenario with SHARDSIM_LONG=1 (default 50); CI runs 20 of each, every
// one four times. (.ci/run also runs every scenario twice through the CLI.)
var determinismLongSeeds = map[string]int{"kv": 50, "coord": 100, "migrate": 100, "migrate-abandon": 100, "migrate-stale": 100, "hotspot": 100, "keymove": 100, "keymove-resume": 100}

// TestDeterminism is H.Deterministic for every registered scenario: each
// seed, run twice at GOMAXPROCS 1 and twice at 2, gives one digest, and
// distinct seeds give distinct runs. The two rounds at GOMAXPROCS 2 run at
// the same time, so two worlds of each seed run side by side: state they
// shared would show as a digest that differs. (CI also compares digests
// through the CLI, in .ci/run.) GOMAXPROCS is the process's, so the
// scenarios run one after another, not as parallel subtests.
func TestDeterminism(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, sc := range All() {
		long, ok := determinismLongSeeds[sc.Name]
		if !ok {
			long = 50
		}
		seeds := sweepSeeds(t, 20, long)
		t.Run(sc.Name, func(t *testing.T) {
			digests := map[uint64]string{}
			for _, procs := range []int{1, 2} {
				runtime.GOMAXPROCS(procs)
				for round, got := range determinismRounds(t, sc.Name, seeds, procs == 2) {
					for s := uint64(1); s <= uint64(seeds); s++ {
						if d, ok := digests[s]; ok && d != got[s] {
							t.Fatalf("seed %d: digest %s at GOMAXPROCS=%d round %d, earlier %s", s, got[s], procs, round, d)
						}
						digests[s] = got[s]
					}
				}
			}
			distinct := map[string]bool{}
			for _, d := range digests {
				distinct[d] = true
			}
			if len(distinct) != seeds {
				t.Fatalf("%d seeds gave only %d distinct digests", seeds, len(distinct))
			}
		})
	}
}

// determinismRounds runs seeds 1..n of scenario in two rounds, one after
// the other or (concurrently) at the same time, and returns each round's
// digests by seed. A run that errs fails the test.
func determinismRounds(t *testing.T, scenario string, n int, concurrently bool) [2][]string {
	var rounds [2][]string
	var failed [2]error
	var wg sync.WaitGroup
	for round := range rounds {
		rounds[round] = make([]string, n+1)
		run := func() {
			defer wg.Done()
			for s := 1; s <= n; s++ {
				res, err := Run(scenario, Config{Seed: uint64(s)})
				if err != nil {
					failed[round] = err
					return
				}
				rounds[round][s] = res.Digest
			}
		}
		wg.Add(1)
		if concurrently {
			go run()
		} else {
			run()
		}
	}
	wg.Wait()
	for _, err := range failed {
		if err != nil {
			t.Fatal(err)
		}
	}
	return rounds
}
