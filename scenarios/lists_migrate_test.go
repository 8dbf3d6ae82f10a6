package scenarios

import (
	"testing"

	"shardsim/model/bugs"
	"shardsim/property"
)

// TestListsMigrateSweepCleanAndOverlaps: with every bug off a sweep of
// lists-migrate finds no violation, every run splits the range and moves
// rows, and in most runs the job ends DONE while collection clients are
// still working (migrations_mid_workload), so BACKFILL, FENCE, CUTOVER and
// promotion run under the collection workload and its compactors.
func TestListsMigrateSweepCleanAndOverlaps(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 20
	}
	overlapped := 0
	for s := 1; s <= seeds; s++ {
		res, err := Run("lists-migrate", Config{Seed: uint64(s)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != property.VerdictOK {
			t.Fatalf("lists-migrate seed %d: %s %s: %s", s, res.Verdict, res.Property, res.Detail)
		}
		if res.Stat("keys_moved") == 0 || res.Stat("list_ops_done") == 0 {
			t.Errorf("lists-migrate seed %d: keys_moved = %d, list_ops_done = %d", s, res.Stat("keys_moved"), res.Stat("list_ops_done"))
		}
		if res.Stat("migrations_mid_workload") > 0 {
			overlapped++
		}
	}
	t.Logf("%d of %d runs ended their migration mid-workload", overlapped, seeds)
	if 2*overlapped <= seeds {
		t.Errorf("only %d of %d runs ended their migration while collection clients worked", overlapped, seeds)
	}
}

// listsMigrateCatches pins listdelta bugs that lists-migrate catches, each
// judged at the end of a run whose split moved the collections' rows: the
// L.* checkers see the bug through the migration.
var listsMigrateCatches = []struct {
	property property.Name
	bug      string
	seed     uint64
}{
	{property.LNoLostItem, bugs.ListdeltaPopRetryAmbiguous, 1},
	{property.LLinearizable, bugs.ListdeltaNoTruncationCheck, 11},
	{property.LLinearizable, bugs.ListdeltaPopNoClaim, 2},
}

func TestListsMigrateCatchesListdeltaBugs(t *testing.T) {
	for _, c := range listsMigrateCatches {
		res, err := Run("lists-migrate", Config{Seed: c.seed, Bugs: bugs.MustParse(c.bug)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != property.VerdictViolation || res.Property != c.property {
			t.Errorf("lists-migrate seed %d with %s: %s %s, want a violation of %s", c.seed, c.bug, res.Verdict, res.Property, c.property)
		}
		if res.Stat("keys_moved") == 0 {
			t.Errorf("lists-migrate seed %d with %s: no key moved before the verdict", c.seed, c.bug)
		}
	}
}
