package scenarios

import (
	"testing"

	"shardsim/property"
)

// listsFaults are the fault counters the quiet run must leave at zero.
var listsFaults = []string{"crashes", "pauses", "leader_moves", "membership_changes", "clock_faults", "rpc_lost_requests",
	"rpc_lost_responses", "rpc_duplicated", "rpc_timeouts", "meta_indeterminate", "elections"}

// The all-zero choice stream is the quiet run of both lists scenarios: no
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

// TestListsSweepCleanAndReaches: with every bug off a sweep of each lists
// scenario finds no violation, and the paths the design's hard cases live
// on are reached: compaction folds deltas and collects popped rows, a
// resolution meets the truncation limit, pops contend on claims, a list
// empties into a Len = 0 tombstone, transactions abort on conflicts,
// MULTI/EXECs commit (and, for lists-migrate, a migration ends while the
// clients work).
func TestListsSweepCleanAndReaches(t *testing.T) {
	seeds := map[string]int{"lists": 80, "lists-migrate": 40}
	if testing.Short() {
		seeds = map[string]int{"lists": 25, "lists-migrate": 10}
	}
	reach := []string{"deltas_folded", "rows_collected", "delta_scans_truncated", "list_ops_truncated", "pops_contending_on_claims",
		"claims_skipped", "tombstones_written", "txn_conflicts_lists", "compactions_conflicting", "multi_exec", "list_ops_unknown"}
	for _, sc := range []string{"lists", "lists-migrate"} {
		totals := map[string]int64{}
		for s := 1; s <= seeds[sc]; s++ {
			res, err := Run(sc, Config{Seed: uint64(s)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != property.VerdictOK {
				t.Fatalf("%s seed %d: %s %s: %s", sc, s, res.Verdict, res.Property, res.Detail)
			}
			for _, st := range res.Stats {
				totals[st.Name] += st.Value
			}
		}
		need := reach
		if sc == "lists-migrate" {
			need = append(append([]string(nil), reach...), "migrations_mid_workload")
		}
		for _, c := range need {
			if totals[c] == 0 {
				t.Errorf("%s: %d seeds never reached %s", sc, seeds[sc], c)
			}
		}
		t.Logf("%s over %d seeds: %v", sc, seeds[sc], totals)
	}
}
