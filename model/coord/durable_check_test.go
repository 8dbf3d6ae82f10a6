package coord

import (
	"errors"
	"testing"

	"shardsim/property"
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
	if err := judgeState(&s); err != nil {
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

func wantViolation(t *testing.T, err error, want property.Name) {
	t.Helper()
	var v *property.Violation
	if !errors.As(err, &v) || v.Property != want {
		t.Fatalf("error = %v, want a %s violation", err, want)
	}
}

func TestCheckSnapshotFails(t *testing.T) {
	base, _ := baseSnapshot(t)
	residual := base.find(2).Spawned[0]
	for _, tc := range []struct {
		name string
		mut  func(s *Snapshot)
		want property.Name
	}{
		{"park reason on an active shard", func(s *Snapshot) { s.find(1).ParkReason = Some(ParkOther) }, property.CRecordInvariants},
		{"run record broken", func(s *Snapshot) { s.Runs[0].Config.LeaseDuration = 0 }, property.CRecordInvariants},
		{"shard without a run", func(s *Snapshot) { s.Runs = nil }, property.CRecordInvariants},
		{"root outside the manifest", func(s *Snapshot) { s.Runs[0].RootShards = []ShardID{1} }, property.CRecordInvariants},
		{"terminal and leased", func(s *Snapshot) { s.find(1).Status = ShardDone }, property.CTerminalUnleased},
		{"cursor outside the range", func(s *Snapshot) { s.find(1).Cursor = cur("x") }, property.CCursorBounds},
		{"spawned shard missing", func(s *Snapshot) { s.Shards = s.Shards[:len(s.Shards)-1] }, property.CSplitAtomicity},
		{"derived shard disowned", func(s *Snapshot) { s.find(2).Spawned = nil }, property.CSplitAtomicity},
		{"child names another parent", func(s *Snapshot) { s.find(residual).Parent = Some(ShardID(1)) }, property.CSplitAtomicity},
		{"overlapping leaves", func(s *Snapshot) { s.find(residual).Spec = spec("s", "") }, property.CSplitCoverage},
		{"gap between leaves", func(s *Snapshot) { s.find(residual).Spec = spec("u", "") }, property.CSplitCoverage},
		{"binding disagrees", func(s *Snapshot) {
			s.Bindings = []TenantBinding{{Tenant: tenantA, Shard: ShardKey{run1, 1}, Binding: OwnerBinding{Worker: w2, Fence: 2, Deadline: 110}}}
		}, property.CMutualExclusion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base.clone()
			tc.mut(&s)
			wantViolation(t, judgeState(&s), tc.want)
		})
	}
}

func TestCheckDurableStepFails(t *testing.T) {
	base, _ := baseSnapshot(t)
	for _, tc := range []struct {
		name string
		mut  func(prev, next *Snapshot)
		want property.Name
	}{
		{"record disappears", func(_, n *Snapshot) { n.Shards = n.Shards[1:]; n.Runs[0].RootShards = []ShardID{2} }, property.CRecordInvariants},
		{"done becomes active", func(p, _ *Snapshot) { p.find(1).Status, p.find(1).Lease = ShardDone, None[LeaseHolder]() }, property.CTerminalIrreversibility},
		{"unpark without a fence bump", func(p, n *Snapshot) {
			p.find(1).Status, p.find(1).ParkReason, p.find(1).Lease = ShardParked, Some(ParkOther), None[LeaseHolder]()
			n.find(1).Lease = None[LeaseHolder]()
		}, property.CFenceMonotonicity},
		{"fence decreases", func(p, _ *Snapshot) { p.find(1).Fence = 5 }, property.CFenceMonotonicity},
		{"cursor moves back", func(p, _ *Snapshot) { p.find(1).Cursor = cur("d") }, property.CCursorMonotonicity},
		{"cursor returns to none", func(_, n *Snapshot) { n.find(1).Cursor = Cursor{} }, property.CCursorMonotonicity},
		{"live lease handed to another worker", func(_, n *Snapshot) {
			n.find(1).Lease = Some(LeaseHolder{Owner: w2, Deadline: 120})
			n.find(1).Fence = 3
		}, property.CMutualExclusion},
		{"expired lease taken over at the same fence", func(p, n *Snapshot) {
			p.find(1).Lease = Some(LeaseHolder{Owner: w2, Deadline: 90})
		}, property.CFenceMonotonicity},
		{"op-log entry rewritten", func(p, _ *Snapshot) {
			e := p.find(1).OpLog.Entries()
			e[0].PayloadHash++
			p.find(1).OpLog = newShardOpLog(e...)
		}, property.CIdempotency},
		{"split children leave a gap", func(p, n *Snapshot) {
			// Step from "shard 2 = [m, ∞), nothing spawned" to the residual
			// split, with the residual's start moved.
			p.find(2).Spec, p.find(2).Spawned = spec("m", ""), nil
			p.Shards = p.Shards[:len(p.Shards)-1]
			n.find(n.find(2).Spawned[0]).Spec = spec("u", "")
		}, property.CSplitCoverage},
		{"run reopened", func(p, n *Snapshot) {
			p.Runs[0].Status, p.Runs[0].CompletedAt = RunFailed, Some(LogicalTime(100))
			n.Runs[0].Status, n.Runs[0].CompletedAt = RunDone, Some(LogicalTime(100))
		}, property.CRunTerminalIrreversibility},
		{"shard of an ended run unparked", func(p, n *Snapshot) {
			p.find(1).Status, p.find(1).ParkReason, p.find(1).Lease = ShardParked, Some(ParkOther), None[LeaseHolder]()
			n.find(1).Lease, n.find(1).Fence = None[LeaseHolder](), 3
			for _, s := range []*Snapshot{p, n} {
				s.Runs[0].Status, s.Runs[0].CompletedAt = RunFailed, Some(LogicalTime(100))
			}
		}, property.CRunTerminalIrreversibility},
		{"run disappears", func(p, n *Snapshot) {
			p.Runs = append(p.Runs, RunRecord{Tenant: tenantA, Run: 9, Config: RunConfig{LeaseDuration: 1}})
		}, property.CRecordInvariants},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, n := base.clone(), base.clone()
			tc.mut(&p, &n)
			wantViolation(t, judgeStep(&p, &n), tc.want)
		})
	}
	// And the unchanged step passes, as does an unpark in an Active run.
	p, n := base.clone(), base.clone()
	if err := judgeStep(&p, &n); err != nil {
		t.Fatal(err)
	}
	p.find(1).Status, p.find(1).ParkReason, p.find(1).Lease = ShardParked, Some(ParkOther), None[LeaseHolder]()
	n.find(1).Lease, n.find(1).Fence = None[LeaseHolder](), 3
	if err := judgeStep(&p, &n); err != nil {
		t.Fatal(err)
	}
}

func TestCheckTenantStepAndAcceptedLease(t *testing.T) {
	base, l := baseSnapshot(t)
	next := base.clone()
	next.find(1).Cursor = cur("d")
	if err := judgeTenantStep(&base, &next, tenantA); err != nil {
		t.Fatal(err)
	}
	wantViolation(t, judgeTenantStep(&base, &next, tenantB), property.CTenantIsolation)
	if err := judgeAcceptedLease(&base, l); err != nil {
		t.Fatal(err)
	}
	zombie := l
	zombie.Fence--
	wantViolation(t, judgeAcceptedLease(&base, zombie), property.CZombieRejection)
	missing := l
	missing.Shard = 42
	wantViolation(t, judgeAcceptedLease(&base, missing), property.CZombieRejection)
}
