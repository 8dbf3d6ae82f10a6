package scenarios

import (
	"testing"

	"shardsim/model/bugs"
	"shardsim/property"
)

// The incremental M.NoLostWrite checker judges exactly what the full
// re-check judges: in clean runs of every migration scenario and in runs of
// the bugs that lose writes, every pass (after each triggering event and at
// the end) gets the same verdict from both, to the message, and some of
// those verdicts are violations.
func TestNoLostWriteIncrementalAgrees(t *testing.T) {
	type run struct {
		scenario, bug string
		seeds         int
	}
	runs := []run{{"migrate", "", 6}, {"migrate-abandon", "", 6}, {"migrate-stale", "", 4}, {"hotspot", "", 4}}
	for _, b := range []string{bugs.MigratePromoteSkipsShadowed, bugs.MigrateCleanupBeforePromotion, bugs.MigrateCutoverBeforeDelta,
		bugs.MigrateKeyOnlyCursor, bugs.MigrateFenceTSNoBarrier, bugs.MigrateFenceNeedsVersion} {
		runs = append(runs, run{"migrate", b, 12})
	}
	runs = append(runs, run{"migrate-stale", bugs.MigrateTargetTrustsCoordinator, 12})
	passes, violations := 0, 0
	for _, r := range runs {
		kind := map[string]migrateKind{"migrate": splitOnce, "migrate-abandon": splitAbandoned, "migrate-stale": splitStale, "hotspot": hotspotSplits}[r.scenario]
		for s := 1; s <= r.seeds; s++ {
			cfg := Config{Seed: uint64(s)}
			if r.bug != "" {
				cfg.Bugs = bugs.MustParse(r.bug)
			}
			m, err := newMigrateWorld(r.scenario, kind, cfg)
			if err != nil {
				t.Fatal(err)
			}
			m.chk.nlwAudit = func(inc, full *property.Violation) {
				passes++
				if (inc == nil) != (full == nil) || inc != nil && (inc.Property != full.Property || inc.Detail != full.Detail) {
					t.Errorf("%s %s seed %d: incremental %v, full %v", r.scenario, r.bug, s, inc, full)
				}
				if full != nil {
					violations++
				}
			}
			m.w.Run()
			m.chk.final(cfg)
			m.w.Loop.Close()
		}
	}
	t.Logf("%d passes agreed, %d of them violations", passes, violations)
	if passes < 100 || violations == 0 {
		t.Fatalf("too little judged: %d passes, %d violations", passes, violations)
	}
}
