package scenarios

import (
	"strings"
	"testing"

	"shardsim/model/bugs"
	"shardsim/property"
)

var coordScenarios = []string{"coord", "coord-zombie", "coord-churn"}

// With every bug off, every coordination scenario passes a sweep, and the
// sweep really exercised what the checkers are there for: lost and
// ambiguous requests, crashes or pauses turned into fenced-out zombies,
// stalled tasks, refused client mistakes, splits, parks and published
// effects.
//
// Every counter first shows by seed 18 (coord-zombie's
// refused_op_id_reused_with_a_different_payload, coord-churn's stalls):
// 60 seeds in CI, 1000 long. (The coord scenario's seeds 1-1000 also run clean in
// TestCoordReachesEveryRule.)
func TestCoordSweepsPass(t *testing.T) {
	t.Parallel() // independent worlds: parallelism cannot change a run
	seeds := sweepSeeds(t, 60, 1000)
	for _, name := range coordScenarios {
		s := sweepClean(t, name, seeds)
		t.Logf("%s: %s", name, s.summary())
		requireCounters(t, name, s, "lost_requests", "lost_responses", "indeterminate", "op_ambiguous", "fenced_out",
			"refused_stale_fence", "stalls", "effects", "op_split_replace", "op_split_residual", "op_park", "op_unpark",
			"refused_cursor_regression", "refused_tenant_mismatch", "refused_op_id_reused_with_a_different_payload")
	}
}

// A recorded run, failing or not, replays draw for draw from its bytes.
func TestCoordRecordingReplays(t *testing.T) {
	for _, c := range []struct {
		name string
		bug  string
	}{{"coord", ""}, {"coord-zombie", ""}, {"coord-zombie", bugs.CoordNoFenceCheck}, {"coord", bugs.CoordSplitTwoTxns}} {
		for s := uint64(1); s <= 5; s++ {
			cfg := Config{Seed: s, Record: true, Bugs: bugs.MustParse(c.bug)}
			orig, err := Run(c.name, cfg)
			if err != nil {
				t.Fatal(err)
			}
			replay, err := Run(c.name, Config{Choices: orig.Recording, Bugs: cfg.Bugs})
			if err != nil {
				t.Fatal(err)
			}
			if replay.Digest != orig.Digest || replay.Verdict != orig.Verdict || replay.Property != orig.Property {
				t.Fatalf("%s %s seed %d: replay %s %s %s, seeded %s %s %s", c.name, c.bug, s,
					replay.Verdict, replay.Property, replay.Digest, orig.Verdict, orig.Property, orig.Digest)
			}
		}
	}
}

// The quiet stream (no faults, smallest values) is a passing run.
func TestCoordQuietRunPasses(t *testing.T) {
	for _, name := range coordScenarios {
		res, err := Run(name, Config{Choices: []byte{}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != property.VerdictOK || res.Stat("effects") == 0 {
			t.Fatalf("%s quiet run: %s %s %s (effects %d)", name, res.Verdict, res.Property, res.Detail, res.Stat("effects"))
		}
	}
}

func TestCoordRejectsForeignBugsAndOptions(t *testing.T) {
	if _, err := Run("coord", Config{Seed: 1, Bugs: bugs.MustParse(bugs.KVPhantomAck)}); err == nil || !strings.Contains(err.Error(), "does not apply") {
		t.Fatalf("kv bug accepted by coord: %v", err)
	}
	if _, err := Run("coord-zombie", Config{Seed: 1, Options: map[string]string{"nope": "1"}}); err == nil || !strings.Contains(err.Error(), "no option") {
		t.Fatalf("unknown option accepted: %v", err)
	}
	if _, err := Run("coord", Config{Seed: 1, Options: map[string]string{"workers": "many"}}); err == nil {
		t.Fatal("bad option value accepted")
	}
	res, err := Run("coord", Config{Seed: 1, Options: map[string]string{"workers": "3", "stall": "0.5"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Swarm.String(); !strings.Contains(s, "workers=3") || !strings.Contains(s, "stall=0.5") {
		t.Fatalf("overrides not applied: %s", s)
	}
}

// C.Convergence fails in a whole run: far more work than the bound after
// the heal lets the workers finish. (Workers are busy throughout, so
// C.EventuallyLeased, which only counts time some worker was free, holds.)
func TestCoordNonConvergenceIsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("a long run")
	}
	res, err := Run("coord", Config{Seed: 1, Options: nonConvergent})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != property.VerdictViolation || res.Property != property.CConvergence {
		t.Fatalf("got %s %s: %s", res.Verdict, res.Property, res.Detail)
	}
}

// A violation's report lists the requests on the shard it names.
func TestCoordViolationTailIsAboutTheShard(t *testing.T) {
	for s := uint64(1); s <= 100; s++ {
		res, err := Run("coord-zombie", Config{Seed: s, Bugs: bugs.MustParse(bugs.CoordNoFenceCheck)})
		if err != nil {
			t.Fatal(err)
		}
		name := shardInDetail.FindString(res.Detail)
		if res.Verdict != property.VerdictViolation || name == "" {
			continue
		}
		if len(res.Tail) < 2 || res.Tail[len(res.Tail)-1].Kind != "violation" {
			t.Fatalf("seed %d: tail %v", s, res.Tail)
		}
		for _, r := range res.Tail[:len(res.Tail)-1] {
			if !strings.Contains(r.Detail, name) {
				t.Fatalf("seed %d: tail record %q is not about %s", s, r.Detail, name)
			}
		}
		return
	}
	t.Fatal("coord.no-fence-check never named a shard in 100 seeds")
}

// nonConvergent makes a coordination world that cannot finish: far more
// keys than the workers can process after the heal, and nothing that ends
// runs early (no early ends, no retry limit, no admin slips).
var nonConvergent = map[string]string{"keys": "20000", "abort": "0", "retry_limit": "0", "admin_mistakes": "0"}

// coordShowcase is, for every property the coordination scenarios judge,
// a world run that reports exactly that property: a registered bug (or an
// option that makes the world impossible to finish) and the seed.
var coordShowcase = []showcaseRun{
	{property.CMutualExclusion, "coord", bugs.CoordAcquireLiveLease, nil, 16},
	{property.CMutualExclusion, "coord-zombie", bugs.CoordAcquireOwnLiveLease, nil, 8},
	{property.CZombieRejection, "coord-zombie", bugs.CoordNoFenceCheck, nil, 15},
	{property.CFenceMonotonicity, "coord-zombie", bugs.CoordNoFenceBumpOnAcquire, nil, 1},
	{property.CTerminalIrreversibility, "coord", bugs.CoordUnparkDone, nil, 36},
	{property.CTerminalIrreversibility, "coord", bugs.CoordUnparkBumpsFirst, nil, 36},
	{property.CTerminalUnleased, "coord", bugs.CoordCompleteKeepsLease, nil, 1},
	{property.CRecordInvariants, "coord", bugs.CoordParkDropsReason, nil, 4},
	{property.CCursorMonotonicity, "coord", bugs.CoordCursorRegression, nil, 15},
	{property.CCursorBounds, "coord", bugs.CoordCursorOutOfBounds, nil, 5},
	{property.CSplitCoverage, "coord", bugs.CoordSplitGap, nil, 4},
	{property.CSplitAtomicity, "coord", bugs.CoordSplitTwoTxns, nil, 9},
	{property.CIdempotency, "coord", bugs.CoordOpIDConflictIgnored, nil, 13},
	{property.CIdempotency, "coord", bugs.CoordLeaseBeforeReplay, nil, 1},
	{property.CTenantIsolation, "coord", bugs.CoordNoTenantCheck, nil, 4},
	{property.CTenantIsolation, "coord", bugs.CoordErrorNamesTenant, nil, 4},
	{property.CRunTerminalIrreversibility, "coord", bugs.CoordRunReopen, nil, 24},
	{property.CRunTerminalIrreversibility, "coord", bugs.CoordEndedRunAccepts, nil, 15},
	{property.CCooldown, "coord", bugs.CoordClaimIgnoresCooldown, nil, 12},
	{property.CEventuallyLeased, "coord", bugs.CoordClaimSkipsExpired, nil, 4},
	{property.CConvergence, "coord", "", nonConvergent, 1},
	{property.CLinearizable, "coord", bugs.CoordRenewMisreports, nil, 1},
}

// Every property the coordination scenarios judge is reported, as that
// very property, by a world run (not merely named by some bug).
func TestEveryCoordPropertyFailsInTheWorld(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a world per property")
	}
	checkShowcase(t, coordShowcase, coordProperties)
}
