package scenarios

import (
	"fmt"
	"testing"

	"shardsim/model/bugs"
	"shardsim/property"
)

// A seeded run, recorded, replays draw for draw from its recording: the
// bytes driver reproduces the seeded run's digest exactly.
func TestKVRecordingReplays(t *testing.T) {
	for s := uint64(1); s <= 10; s++ {
		orig, err := Run("kv", Config{Seed: s, Record: true})
		if err != nil {
			t.Fatal(err)
		}
		replay, err := Run("kv", Config{Choices: orig.Recording})
		if err != nil {
			t.Fatal(err)
		}
		if replay.Digest != orig.Digest {
			t.Fatalf("seed %d: replay digest %s, seeded %s", s, replay.Digest, orig.Digest)
		}
	}
}

// KV.Linearizable holds over a sweep with faults on, and the faults really
// happen: ambiguous and lost requests are counted in the traces. Every
// fault kind first shows by seed 3; 100 seeds in CI, 500 long.
func TestKVSweepPasses(t *testing.T) {
	t.Parallel() // independent worlds: parallelism cannot change a run
	s := sweepClean(t, "kv", sweepSeeds(t, 100, 500))
	t.Logf("kv: %s", s.summary())
	requireCounters(t, "kv", s, "lost_requests", "lost_responses", "refused", "delayed", "leader_changes", "indeterminate", "lease_expiries")
}

// Each deliberately wrong simkv variant is caught by the checkers.
func TestKVMutantsAreCaught(t *testing.T) {
	for _, b := range bugs.ForProtocol("kv") {
		t.Run(b.Name, func(t *testing.T) {
			for s := 1; s <= b.Budget; s++ {
				res, err := Run("kv", Config{Seed: uint64(s), Bugs: bugs.MustParse(b.Name)})
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict == property.VerdictViolation {
					if !contains(b.Properties, res.Property) {
						t.Fatalf("seed %d: caught by %s, registry expects one of %v", s, res.Property, b.Properties)
					}
					t.Logf("%s caught by %s at seed %d", b.Name, res.Property, s)
					return
				}
			}
			t.Fatalf("%s not caught within %d seeds", b.Name, b.Budget)
		})
	}
}

func contains(xs []property.Name, x property.Name) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func ExampleRun() {
	res, _ := Run("kv", Config{Seed: 1})
	fmt.Println(res.Verdict)
	// Output: ok
}

// kvShowcase is, for every property the kv scenario judges, a world run
// (a server mutation, and the seed) that reports exactly that property.
var kvShowcase = []showcaseRun{
	{property.KVLinearizable, "kv", bugs.KVStaleTxnCompare, nil, 1},
	{property.KVRevisionMonotone, "kv", bugs.KVStaleHeader, nil, 1},
	{property.KVLeaseExpiry, "kv", bugs.KVLateLeaseExpiry, nil, 1},
	{property.KVWatchOrdered, "kv", bugs.KVWatchReorder, nil, 1},
	{property.KVWatchUnique, "kv", bugs.KVWatchDuplicate, nil, 1},
	{property.KVWatchAtomic, "kv", bugs.KVWatchSplitTxn, nil, 1},
	{property.KVWatchReliable, "kv", bugs.KVWatchDrop, nil, 1},
	{property.KVWatchResumable, "kv", bugs.KVResumeSkips, nil, 1},
}

// Every property the kv scenario judges is reported, as that very
// property, by a world run.
func TestEveryKVPropertyFailsInTheWorld(t *testing.T) {
	sc, err := Lookup("kv")
	if err != nil {
		t.Fatal(err)
	}
	checkShowcase(t, kvShowcase, sc.Properties)
}
