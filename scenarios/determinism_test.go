package scenarios

import (
	"runtime"
	"testing"
)

// determinismLongSeeds is how many seeds TestDeterminism runs per
// scenario with SHARDSIM_LONG=1 (default 50); CI runs 20 of each, every
// one four times. (.ci/run also runs every scenario twice through the CLI.)
var determinismLongSeeds = map[string]int{"kv": 50, "coord": 100, "migrate": 100, "migrate-abandon": 100, "migrate-stale": 100, "hotspot": 100, "keymove": 100, "keymove-resume": 100}

// TestDeterminism is H.Deterministic for every registered scenario: each
// seed, run twice at GOMAXPROCS 1 and twice at 2, gives one digest, and
// distinct seeds give distinct runs. (CI also compares digests through the
// CLI, in .ci/run.)
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
				for round := 0; round < 2; round++ {
					for s := uint64(1); s <= uint64(seeds); s++ {
						res, err := sc.Run(Config{Seed: s})
						if err != nil {
							t.Fatal(err)
						}
						if d, ok := digests[s]; ok && d != res.Digest {
							t.Fatalf("seed %d: digest %s at GOMAXPROCS=%d round %d, earlier %s", s, res.Digest, procs, round, d)
						}
						digests[s] = res.Digest
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
