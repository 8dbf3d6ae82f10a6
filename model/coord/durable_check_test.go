package coord

import (
	"errors"
	"testing"
)

// baseSnapshot is a valid state at time 100: tenant A's run 1 with root 1
// [a, m) leased to w1 (fence 2, until 110) and a checkpoint at "c", and
// root 2 [m, ∞) shrunk to [m, t) by a residual split (residual [t, ∞)).
func baseSnapshot(t *testing.T) (Snapshot, Lease) {
	t.Helper()
	w, r := refWorld(t, DefaultConfig())
	l := w.acquire(1, w1)
	if _, _, err := r.Checkpoint(w.now, tenantA, l, cur("c"), 1); err != nil {
		t.Fatal(err)
	}
	l2 := w.acquire(2, w2)
	if _, _, err := r.SplitResidual(w.now, tenantA, l2, SplitResidualPlan{spec("m", "t"), spec("t", "")}, 2); err != nil {
		t.Fatal(err)
	}
	s := r.Snapshot(w.now)
	if err := CheckSnapshot(&s); err != nil {
		t.Fatal(err)
	}
	return s, l
}

// clone deep-copies a snapshot so a test can mutate it.
func (s Snapshot) clone() Snapshot {
	c := s
	c.Shards = make([]ShardRecord, len(s.Shards))
	for i := range s.Shards {
		c.Shards[i] = s.Shards[i].Clone()
	}
	c.Runs = make([]RunRecord, len(s.Runs))
	for i := range s.Runs {
		c.Runs[i] = s.Runs[i].Clone()
	}
	c.Claims = append([]TenantClaim(nil), s.Claims...)
	c.Bindings = append([]TenantBinding(nil), s.Bindings...)
	return c
}

func (s *Snapshot) find(id ShardID) *ShardRecord {
	for i := range s.Shards {
		if s.Shards[i].Shard == id {
			return &s.Shards[i]
		}
	}
	return nil
}

func wantViolation(t *testing.T, err error, property string) {
	t.Helper()
	var v *Violation
	if !errors.As(err, &v) || v.Property != property {
		t.Fatalf("error = %v, want a %s violation", err, property)
	}
}

func TestCheckSnapshotFails(t *testing.T) {
	base, _ := baseSnapshot(t)
	residual := base.find(2).Spawned[0]
	for _, tc := range []struct {
		name     string
		mut      func(s *Snapshot)
		property string
	}{
		{"park reason on an active shard", func(s *Snapshot) { s.find(1).ParkReason = Some(ParkOther) }, "C.RecordInvariants"},
		{"run record broken", func(s *Snapshot) { s.Runs[0].Config.LeaseDuration = 0 }, "C.RecordInvariants"},
		{"shard without a run", func(s *Snapshot) { s.Runs = nil }, "C.RecordInvariants"},
		{"root outside the manifest", func(s *Snapshot) { s.Runs[0].RootShards = []ShardID{1} }, "C.RecordInvariants"},
		{"terminal and leased", func(s *Snapshot) { s.find(1).Status = ShardDone }, "C.TerminalUnleased"},
		{"cursor outside the range", func(s *Snapshot) { s.find(1).Cursor = cur("x") }, "C.CursorBounds"},
		{"spawned shard missing", func(s *Snapshot) { s.Shards = s.Shards[:len(s.Shards)-1] }, "C.SplitAtomicity"},
		{"derived shard disowned", func(s *Snapshot) { s.find(2).Spawned = nil }, "C.SplitAtomicity"},
		{"child names another parent", func(s *Snapshot) { s.find(residual).Parent = Some(ShardID(1)) }, "C.SplitAtomicity"},
		{"overlapping leaves", func(s *Snapshot) { s.find(residual).Spec = spec("s", "") }, "C.SplitCoverage"},
		{"gap between leaves", func(s *Snapshot) { s.find(residual).Spec = spec("u", "") }, "C.SplitCoverage"},
		{"binding disagrees", func(s *Snapshot) {
			s.Bindings = []TenantBinding{{Tenant: tenantA, Shard: ShardKey{run1, 1}, Binding: OwnerBinding{Worker: w2, Fence: 2, Deadline: 110}}}
		}, "C.MutualExclusion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base.clone()
			tc.mut(&s)
			wantViolation(t, CheckSnapshot(&s), tc.property)
		})
	}
}

func TestCheckDurableStepFails(t *testing.T) {
	base, _ := baseSnapshot(t)
	for _, tc := range []struct {
		name     string
		mut      func(prev, next *Snapshot)
		property string
	}{
		{"record disappears", func(_, n *Snapshot) { n.Shards = n.Shards[1:]; n.Runs[0].RootShards = []ShardID{2} }, "C.RecordInvariants"},
		{"done becomes active", func(p, _ *Snapshot) { p.find(1).Status, p.find(1).Lease = ShardDone, None[LeaseHolder]() }, "C.TerminalIrreversibility"},
		{"unpark without a fence bump", func(p, n *Snapshot) {
			p.find(1).Status, p.find(1).ParkReason, p.find(1).Lease = ShardParked, Some(ParkOther), None[LeaseHolder]()
			n.find(1).Lease = None[LeaseHolder]()
		}, "C.FenceMonotonicity"},
		{"fence decreases", func(p, _ *Snapshot) { p.find(1).Fence = 5 }, "C.FenceMonotonicity"},
		{"cursor moves back", func(p, _ *Snapshot) { p.find(1).Cursor = cur("d") }, "C.CursorMonotonicity"},
		{"cursor returns to none", func(_, n *Snapshot) { n.find(1).Cursor = Cursor{} }, "C.CursorMonotonicity"},
		{"live lease handed to another worker", func(_, n *Snapshot) {
			n.find(1).Lease = Some(LeaseHolder{Owner: w2, Deadline: 120})
			n.find(1).Fence = 3
		}, "C.MutualExclusion"},
		{"expired lease taken over at the same fence", func(p, n *Snapshot) {
			p.find(1).Lease = Some(LeaseHolder{Owner: w2, Deadline: 90})
		}, "C.FenceMonotonicity"},
		{"op-log entry rewritten", func(p, _ *Snapshot) {
			e := p.find(1).OpLog.Entries()
			e[0].PayloadHash++
			p.find(1).OpLog = NewShardOpLog(e...)
		}, "C.Idempotency"},
		{"split children leave a gap", func(p, n *Snapshot) {
			// Step from "shard 2 = [m, ∞), nothing spawned" to the residual
			// split, with the residual's start moved.
			p.find(2).Spec, p.find(2).Spawned = spec("m", ""), nil
			p.Shards = p.Shards[:len(p.Shards)-1]
			n.find(n.find(2).Spawned[0]).Spec = spec("u", "")
		}, "C.SplitCoverage"},
		{"run reopened", func(p, n *Snapshot) {
			p.Runs[0].Status, p.Runs[0].CompletedAt = RunFailed, Some(LogicalTime(100))
			n.Runs[0].Status, n.Runs[0].CompletedAt = RunDone, Some(LogicalTime(100))
		}, "C.RunTerminalIrreversibility"},
		{"shard of an ended run unparked", func(p, n *Snapshot) {
			p.find(1).Status, p.find(1).ParkReason, p.find(1).Lease = ShardParked, Some(ParkOther), None[LeaseHolder]()
			n.find(1).Lease, n.find(1).Fence = None[LeaseHolder](), 3
			for _, s := range []*Snapshot{p, n} {
				s.Runs[0].Status, s.Runs[0].CompletedAt = RunFailed, Some(LogicalTime(100))
			}
		}, "C.RunTerminalIrreversibility"},
		{"run disappears", func(p, n *Snapshot) {
			p.Runs = append(p.Runs, RunRecord{Tenant: tenantA, Run: 9, Config: RunConfig{LeaseDuration: 1}})
		}, "C.RecordInvariants"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, n := base.clone(), base.clone()
			tc.mut(&p, &n)
			wantViolation(t, CheckDurableStep(&p, &n), tc.property)
		})
	}
	// And the unchanged step passes, as does an unpark in an Active run.
	p, n := base.clone(), base.clone()
	if err := CheckDurableStep(&p, &n); err != nil {
		t.Fatal(err)
	}
	p.find(1).Status, p.find(1).ParkReason, p.find(1).Lease = ShardParked, Some(ParkOther), None[LeaseHolder]()
	n.find(1).Lease, n.find(1).Fence = None[LeaseHolder](), 3
	if err := CheckDurableStep(&p, &n); err != nil {
		t.Fatal(err)
	}
}

func TestCheckTenantStepAndAcceptedLease(t *testing.T) {
	base, l := baseSnapshot(t)
	next := base.clone()
	next.find(1).Cursor = cur("d")
	if err := CheckTenantStep(&base, &next, tenantA); err != nil {
		t.Fatal(err)
	}
	wantViolation(t, CheckTenantStep(&base, &next, tenantB), "C.TenantIsolation")
	if err := CheckAcceptedLease(&base, l); err != nil {
		t.Fatal(err)
	}
	zombie := l
	zombie.Fence--
	wantViolation(t, CheckAcceptedLease(&base, zombie), "C.ZombieRejection")
	missing := l
	missing.Shard = 42
	wantViolation(t, CheckAcceptedLease(&base, missing), "C.ZombieRejection")
}
