package scenarios

import (
	"strings"
	"testing"

	"shardsim/model/bugs"
	"shardsim/property"
	"shardsim/reach"
)

// listsFaults are the fault counters the quiet run must leave at zero.
var listsFaults = []string{"crashes", "pauses", "leader_moves", "membership_changes", "clock_faults", "rpc_lost_requests",
	"rpc_lost_responses", "rpc_duplicated", "rpc_timeouts", "meta_indeterminate", "elections"}

// The all-zero choice stream is the quiet run of the lists scenario: no
// fault strikes, every property holds, and the collection clients still
// run their commands to the end.
func TestListsQuietRunPasses(t *testing.T) {
	for _, sc := range []string{"lists", "lists-migrate"} {
		res, err := Run(sc, Config{Choices: []byte{}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != property.VerdictOK {
			t.Fatalf("%s quiet run: %s %s %s", sc, res.Verdict, res.Property, res.Detail)
		}
		for _, k := range listsFaults {
			if res.Stat(k) != 0 {
				t.Errorf("%s quiet run: %s = %d", sc, k, res.Stat(k))
			}
		}
		if res.Stat("list_ops_done") == 0 || res.Stat("txns_committed_lists") == 0 {
			t.Errorf("%s quiet run: no collection command committed", sc)
		}
	}
}

// TestListsSweepCleanAndReaches: with every bug off a sweep of the lists
// scenario finds no violation, and together its runs reach every point of
// the "lists" reachability group: compaction folds deltas, collects popped
// rows and leaves Len = 0 tombstones, resolutions meet the truncation limit
// and commands fail with it, pops contend on claims, transactions abort on
// conflicts, MULTI/EXECs commit, outcomes are lost.
func TestListsSweepCleanAndReaches(t *testing.T) {
	seeds := 80
	if testing.Short() {
		seeds = 25
	}
	table := reach.NewTable("lists")
	for s := 1; s <= seeds; s++ {
		res, err := Run("lists", Config{Seed: uint64(s)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != property.VerdictOK {
			t.Fatalf("lists seed %d: %s %s: %s", s, res.Verdict, res.Property, res.Detail)
		}
		table.Add(res.Reach)
	}
	var out strings.Builder
	table.Write(&out)
	t.Log("\n" + out.String())
	if m := table.Missing(); len(m) > 0 {
		t.Errorf("%d points never reached in %d seeds: %s", len(m), seeds, strings.Join(m, ", "))
	}
	if u := table.Undeclared(); len(u) > 0 {
		t.Errorf("points reached but never declared: %s", strings.Join(u, ", "))
	}
}

// listsShowcase pins, for every property the lists checkers judge, a bug
// and seed whose world run is caught by exactly that property: every L.*
// checker fails in the world (they fail on hand-built histories in
// package listcheck).
var listsShowcase = []struct {
	property property.Name
	bug      string
	seed     uint64
}{
	{property.LMetaConsistent, bugs.ListdeltaNoTruncationCheck, 80},
	{property.LCountConsistent, bugs.ListdeltaCompactDeletesMember, 118},
	{property.LNoDoublePop, bugs.ListdeltaPopNoClaim, 105},
	{property.LNoLostItem, bugs.ListdeltaPopRetryAmbiguous, 39},
	{property.LLinearizable, bugs.ListdeltaPushOneEnd, 272},
}

func TestListsEveryPropertyFailsInTheWorld(t *testing.T) {
	seen := map[property.Name]bool{}
	for _, c := range listsShowcase {
		res, err := Run("lists", Config{Seed: c.seed, Bugs: bugs.MustParse(c.bug)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != property.VerdictViolation || res.Property != c.property {
			t.Errorf("lists seed %d with %s: %s %s, want a violation of %s", c.seed, c.bug, res.Verdict, res.Property, c.property)
		}
		seen[c.property] = true
	}
	for _, p := range listsProperties {
		if !seen[p] {
			t.Errorf("no world run shows %s failing", p)
		}
	}
}

// TestListsFailureReplays: a failing run replays from its seed to the same
// verdict, property and digest.
func TestListsFailureReplays(t *testing.T) {
	cfg := Config{Seed: 80, Bugs: bugs.MustParse(bugs.ListdeltaNoTruncationCheck)}
	a, err := Run("lists", cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Run("lists", cfg)
	if a.Verdict != property.VerdictViolation || a.Verdict != b.Verdict || a.Property != b.Property || a.Digest != b.Digest {
		t.Fatalf("replay differs: %s %s %s vs %s %s %s", a.Verdict, a.Property, a.Digest, b.Verdict, b.Property, b.Digest)
	}
}
