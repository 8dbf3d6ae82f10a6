package scenarios

import (
	"testing"

	"shardsim/model/bugs"
	"shardsim/property"
)

var migrateScenarios = []string{"migrate", "migrate-abandon", "migrate-stale", "hotspot"}

// migrateSweepSeeds is each migration scenario's clean sweep in CI: at
// least twice the seeds its needs (below, and migrateGuardCounters) take to
// show. The last to show: migrate's abandon_late at seed 12 and
// aborted_imports (which only migrate-abandon reaches) at seed 136;
// migrate's and hotspot's needs by seed 7 (hotspot_declines 5),
// migrate-stale's by seed 2. The long sweep runs 1000 of each.
var migrateSweepSeeds = map[string]int{"migrate": 100, "migrate-abandon": 300, "migrate-stale": 100, "hotspot": 100}

// The clean sweeps: every scenario passes its seeds (migrateSweepSeeds)
// with every bug off, every job ends DONE or ABANDONED after the heal
// (M.JobTerminates is part of each verdict), and the faults and protocol
// paths the scenarios claim to exercise really happen.
func TestMigrateSweeps(t *testing.T) {
	union := map[string]int64{}
	for _, sc := range migrateScenarios {
		s := sweepClean(t, sc, sweepSeeds(t, migrateSweepSeeds[sc], 1000))
		if t.Failed() {
			return
		}
		t.Logf("%s: %s", sc, s.summary())
		for k, v := range s.totals {
			union[k] += v
		}
		var need []string
		switch sc {
		case "migrate":
			need = []string{"crashes", "pauses", "leader_moves", "clock_faults", "rpc_lost_requests", "rpc_lost_responses",
				"rpc_timeouts", "meta_indeterminate", "writes_ambiguous", "writes_failed", "keys_moved", "versions_imported",
				"versions_promoted", "versions_cleaned", "scans"}
			if s.runsWith["jobs"] != s.runs {
				t.Errorf("migrate: only %d of %d runs created a job", s.runsWith["jobs"], s.runs)
			}
		case "migrate-abandon":
			need = []string{"abandoned", "abandon_late"}
		case "migrate-stale":
			need = []string{"reads_moved_by_owner", "ownership_failures", "ownership_cache_hits", "reads_cutover_pending"}
		case "hotspot":
			need = []string{"hotspot_splits", "hotspot_declines", "hotspot_isolations"}
			if s.runsWith["hotspot_splits"] < s.runs/2 {
				t.Errorf("hotspot: the detector split in only %d of %d runs", s.runsWith["hotspot_splits"], s.runs)
			}
		}
		requireCounters(t, sc, s, need...)
	}
	for _, k := range migrateGuardCounters {
		if union[k] == 0 {
			t.Errorf("no migration sweep reached %s: that guard or situation went untested", k)
		}
	}
}

// migrateGuardCounters are the situations and guards of the layer-2 world every
// migration sweep must reach: a sweep that never reaches one has not
// tested it (reachability).
var migrateGuardCounters = []string{
	"job_failures", "elections", "elections_apply_lagging", "membership_changes", "stale_appends", "log_truncations",
	"snapshots_installed", "rpc_duplicated", "txns_committed", "txns_aborted", "range_deletes", "caller_ts_writes",
	"caller_ts_rejected", "caller_ts_below_snapshot", "reads_moved_by_view", "reads_cutover_pending",
	"reads_moved_by_owner", "ownership_queries", "ownership_failures", "ownership_cache_hits", "barrier_waits",
	"stale_imports", "aborted_imports", "delta_below_snapshot", "locks_resolved", "fence_passes", "ambiguous_cutovers",
	"view_stale_refusals", "jobs_collected",
}

// A failure replays: the same seed gives the same violation and digest,
// and the recorded choice stream of the run reproduces it through the
// bytes driver (what simrun shrink and the fuzzer build on).
func TestMigrateFailureReplays(t *testing.T) {
	set := bugs.MustParse(bugs.MigrateKeyOnlyCursor)
	for s := uint64(1); s <= 50; s++ {
		orig, err := Run("migrate", Config{Seed: s, Bugs: set, Record: true})
		if err != nil {
			t.Fatal(err)
		}
		if orig.Verdict != property.VerdictViolation {
			continue
		}
		again, _ := Run("migrate", Config{Seed: s, Bugs: set})
		bytes, _ := Run("migrate", Config{Choices: orig.Recording, Bugs: set})
		for _, r := range []Result{again, bytes} {
			if r.Digest != orig.Digest || r.Verdict != orig.Verdict || r.Property != orig.Property {
				t.Fatalf("seed %d: replay %s %s %s, original %s %s %s", s, r.Verdict, r.Property, r.Digest, orig.Verdict, orig.Property, orig.Digest)
			}
		}
		return
	}
	t.Fatal("no failing seed to replay")
}

// Each M.* property that a registered bug violates is shown failing in a
// scenario run: the bug is switched on and a seed within the budget must
// be caught by exactly that property. (M.SingleWriter,
// M.CatalogVersionMonotone, M.PhaseOrder and M.Linearizable are also shown
// failing on hand-built histories in ../migratecheck.)
func TestMigrateCheckersFail(t *testing.T) {
	cases := []struct {
		prop          property.Name
		bug, scenario string
	}{
		{property.MCatalogNonOverlap, bugs.MigrateOverlappingRoutes, "migrate"},
		{property.MFencedWritesRejected, bugs.MigrateFenceNeedsVersion, "migrate"},
		{property.MHLCMonotone, bugs.MigrateNoHLCAdvance, "migrate"},
		{property.MLinearizable, bugs.MigrateNoHLCAdvance, "migrate"},
		{property.MExactlyOnceCopy, bugs.MigrateKeyOnlyCursor, "migrate"},
		{property.MSnapshotReads, bugs.MigrateStagedFirstRead, "migrate"},
		{property.MNoLostWrite, bugs.MigratePromoteSkipsShadowed, "migrate"},
		{property.MCleanupSafe, bugs.MigrateCleanupBeforePromotion, "migrate"},
		{property.MJobTerminates, bugs.MigrateAbandonKeepsFence, "migrate-abandon"},
		{property.MNoStaleRead, bugs.MigrateNoReadFence, "migrate-stale"},
		{property.MTxnSerializable, bugs.MigrateRollbackProvesCommit, "migrate"},
	}
	for _, c := range cases {
		t.Run(string(c.prop), func(t *testing.T) {
			t.Parallel()
			set := bugs.MustParse(c.bug)
			for s := 1; s <= 300; s++ {
				res, err := Run(c.scenario, Config{Seed: uint64(s), Bugs: set})
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict == property.VerdictViolation && res.Property == c.prop {
					t.Logf("%s caught by %s at seed %d: %s", c.bug, c.prop, s, res.Detail)
					return
				}
			}
			t.Fatalf("%s never caught by %s in 300 seeds of %s", c.bug, c.prop, c.scenario)
		})
	}
}

// A scenario refuses bugs it cannot exercise (a usage error).
func TestMigrateRejectsForeignBugs(t *testing.T) {
	for _, c := range []struct {
		scenario, bug string
		ok            bool
	}{
		{"migrate", bugs.KVPhantomAck, false},
		{"hotspot", bugs.CoordNoFenceCheck, false},
		{"migrate", bugs.MigrateAbandonKeepsFence, false},
		{"hotspot", bugs.MigrateAbandonKeepsFence, false},
		{"migrate-abandon", bugs.MigrateAbandonKeepsFence, true},
		{"hotspot", bugs.MigrateStagedFirstRead, true},
	} {
		_, err := Run(c.scenario, Config{Seed: 1, Bugs: bugs.MustParse(c.bug)})
		if (err == nil) != c.ok {
			t.Errorf("%s with %s: err=%v, want ok=%v", c.scenario, c.bug, err, c.ok)
		}
	}
	if _, err := Run("migrate", Config{Seed: 1, Options: map[string]string{"no_such_option": "1"}}); err == nil {
		t.Error("an unknown option was accepted")
	}
}

// The all-zero choice stream is the quiet run of every migration scenario:
// no fault of any kind strikes, every property holds, and the split
// scenarios still run their job to the end (the move, or the abandon).
func TestMigrateQuietRunPasses(t *testing.T) {
	faults := []string{"crashes", "pauses", "leader_moves", "membership_changes", "clock_faults", "rpc_lost_requests",
		"rpc_lost_responses", "rpc_duplicated", "rpc_timeouts", "meta_indeterminate", "elections"}
	for _, sc := range migrateScenarios {
		res, err := Run(sc, Config{Choices: []byte{}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != property.VerdictOK {
			t.Fatalf("%s quiet run: %s %s %s", sc, res.Verdict, res.Property, res.Detail)
		}
		for _, k := range faults {
			if res.Stat(k) != 0 {
				t.Errorf("%s quiet run: %s = %d", sc, k, res.Stat(k))
			}
		}
		if sc != "hotspot" && res.Stat("keys_moved")+res.Stat("abandoned") == 0 {
			t.Errorf("%s quiet run: the job neither moved keys nor was abandoned", sc)
		}
	}
}
