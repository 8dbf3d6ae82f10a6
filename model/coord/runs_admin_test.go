package coord

import (
	"slices"
	"testing"
)

// runAdmin is the operators' helpers both backends have.
type runAdmin interface {
	ListActiveRuns(TenantID) ([]RunID, error)
	GCStaleInitializingRuns(LogicalTime, TenantID, LogicalDuration) ([]RunID, []Event, error)
}

// list_active_runs lists the Active runs; gc_stale_initializing_runs
// cancels the runs that were created long enough ago and never
// registered, once (a second collection finds nothing), and leaves young
// or registered runs alone.
func TestListActiveRunsAndGCStaleInitializingRuns(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		c := b.make(t, DefaultConfig())
		admin, ok := c.(runAdmin)
		if !ok {
			t.Fatalf("%T has no run admin helpers", c)
		}
		w := newWorld(t, c) // run 1, Active, created at 100
		for run, at := range map[RunID]LogicalTime{2: 100, 3: 150, 4: 100} {
			if _, err := c.CreateRun(at, tenantA, run, RunConfig{LeaseDuration: 10}); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := c.RegisterShards(100, tenantA, 4, []InitialShard{{Shard: 1, Spec: spec("a", "b")}}, 1); err != nil {
			t.Fatal(err)
		}
		if runs, err := admin.ListActiveRuns(tenantA); err != nil || !slices.Equal(runs, []RunID{1, 4}) {
			t.Fatalf("active runs %v %v", runs, err)
		}
		if runs, err := admin.ListActiveRuns(tenantB); err != nil || len(runs) != 0 {
			t.Fatalf("another tenant's active runs %v %v", runs, err)
		}
		gone, evs, err := admin.GCStaleInitializingRuns(160, tenantA, 50)
		if err != nil || !slices.Equal(gone, []RunID{2}) || len(evs) != 1 || evs[0].Kind != EventRunCancelled {
			t.Fatalf("gc: %v %v %v", gone, evs, err)
		}
		if rec, _ := c.GetRun(tenantA, 2); rec.Status != RunCancelled {
			t.Fatalf("collected run is %s", rec.Status)
		}
		if rec, _ := c.GetRun(tenantA, 3); rec.Status != RunInitializing {
			t.Fatalf("young run is %s", rec.Status)
		}
		if gone, _, err := admin.GCStaleInitializingRuns(160, tenantA, 50); err != nil || len(gone) != 0 {
			t.Fatalf("second gc: %v %v", gone, err)
		}
		_ = w
	})
}
