package scenarios

import (
	"testing"

	"shardsim/model/bugs"
	"shardsim/property"
)

// TestKeymoveClean: both key-migration scenarios pass with every bug off,
// and the failure paths they exist to exercise actually run. The last of
// them first runs at seed 18 (keymove's rollbacks; keymove-resume's by
// seed 2): 60 seeds in CI, 1000 long.
func TestKeymoveClean(t *testing.T) {
	t.Parallel() // independent worlds: parallelism cannot change a run
	seeds := sweepSeeds(t, 60, 1000)
	for _, name := range []string{"keymove", "keymove-resume"} {
		s := sweepClean(t, name, seeds)
		t.Logf("%s: %s", name, s.summary())
		requireCounters(t, name, s, "retries", "resumes", "verification_failures", "racing_writes", "keys_moved", "keys_failed",
			"writes_acked", "writes_ambiguous", "torn_copies", "executor_restarts", "progress_events")
		if name == "keymove" {
			requireCounters(t, name, s, "rollbacks")
		}
	}
}

// kmShowcase pins, for every property the key-migration checkers judge, a
// bug and seed whose world run is caught by exactly that property: every
// KM.* checker fails in the world.
var kmShowcase = []showcaseRun{
	{property.KMSingleSwap, "keymove", bugs.KeymoveCompensatingRollback, nil, 26},
	{property.KMNoDualMapping, "keymove", bugs.KeymoveMapBeforeCopy, nil, 1},
	{property.KMVerifiedBeforeSwap, "keymove", bugs.KeymoveSwapBeforeVerify, nil, 1},
	{property.KMNoLoss, "keymove", bugs.KeymoveSwapIgnoresSourceRevision, nil, 1},
	{property.KMLinearizable, "keymove", bugs.KeymoveSwapIgnoresSourceRevision, nil, 2},
	{property.KMIdempotent, "keymove-resume", bugs.KeymoveCheckpointBeforeEffect, nil, 19},
	{property.KMCompletes, "keymove", bugs.KeymoveRetryUnbounded, nil, 5},
}

func TestKeymoveEveryPropertyFailsInTheWorld(t *testing.T) {
	checkShowcase(t, kmShowcase, kmProperties)
}

// TestKeymoveFailureReplays: a failing run replays from its seed to the
// same verdict, property and digest.
func TestKeymoveFailureReplays(t *testing.T) {
	cfg := Config{Seed: 1, Bugs: bugs.MustParse(bugs.KeymoveSwapIgnoresSourceRevision)}
	a, err := Run("keymove", cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Run("keymove", cfg)
	if a.Verdict != property.VerdictViolation || a.Verdict != b.Verdict || a.Property != b.Property || a.Digest != b.Digest {
		t.Fatalf("replay differs: %s %s %s vs %s %s %s", a.Verdict, a.Property, a.Digest, b.Verdict, b.Property, b.Digest)
	}
}
