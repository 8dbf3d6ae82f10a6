package coord

import (
	"strings"
	"testing"

	"shardsim/model/bugs"
)

// etcdOnlyBugs are coord bugs of the etcd backend's storage logic, which
// the reference has none of.
var etcdOnlyBugs = map[string]bool{bugs.CoordEtcdBlindWrite: true, bugs.CoordSplitTwoTxns: true}

// bugCases show, for each coord bug the reference implements, the
// behaviour BUGS.md describes: run returns nil with the bug on, and an
// error naming the guard's refusal with it off.
var bugCases = map[string]func(t *testing.T, cfg Config) error{
	bugs.CoordNoFenceBumpOnAcquire: func(t *testing.T, cfg Config) error {
		// A worker pauses past its lease; its restarted incarnation (same
		// id) takes the shard over; the paused one resumes and checkpoints.
		w, _ := refWorld(t, cfg)
		zombie := w.acquire(1, w1)
		w.now += 20
		fresh := w.acquire(1, w1)
		if cfg.Bugs.Has(bugs.CoordNoFenceBumpOnAcquire) && fresh.Fence != zombie.Fence {
			t.Fatal("fence raised despite the bug")
		}
		_, _, err := w.c.Checkpoint(w.now, tenantA, zombie, cur("c"), 1)
		return err
	},
	bugs.CoordNoFenceCheck: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		zombie := w.acquire(1, w1)
		w.now += 20
		w.acquire(1, w1)
		_, _, err := w.c.Checkpoint(w.now, tenantA, zombie, cur("c"), 1)
		return err
	},
	bugs.CoordAcquireLiveLease: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		first := w.acquire(1, w1)
		res, _, err := w.c.AcquireAndRestore(w.now+1, tenantA, ShardKey{run1, 1}, w2)
		if err == nil && (res.Lease.Owner != w2 || first.Deadline <= w.now+1) {
			t.Fatal("second lease not granted while the first is live")
		}
		return err
	},
	bugs.CoordLeaseBeforeReplay: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		l := w.acquire(1, w1)
		if _, _, err := w.c.Checkpoint(w.now, tenantA, l, cur("c"), 1); err != nil {
			t.Fatal(err)
		}
		w.now += 20 // the lease lapsed
		out, _, err := w.c.Checkpoint(w.now, tenantA, l, cur("c"), 1)
		if err == nil && out != Replayed {
			t.Fatalf("retry answered %v", out)
		}
		if err != nil {
			return nil // refused: the bug
		}
		return errRefused
	},
	bugs.CoordRenewMisreports: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		l := w.acquire(1, w1)
		r, _, err := w.c.Renew(w.now+2, tenantA, l)
		if err != nil {
			t.Fatal(err)
		}
		if r.Deadline != w.record(1).Lease.Val.Deadline {
			return nil
		}
		return errRefused
	},
	bugs.CoordParkDropsReason: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		l := w.acquire(1, w1)
		if _, _, err := w.c.ParkShard(w.now, tenantA, l, ParkOther, 1); err != nil {
			t.Fatal(err)
		}
		if w.record(1).ParkReason.Set {
			return errRefused
		}
		return nil
	},
	bugs.CoordClaimIgnoresCooldown: func(t *testing.T, cfg Config) error {
		cfg.ClaimCooldown = 5
		w, _ := refWorld(t, cfg)
		if _, _, err := w.c.ClaimNextAvailable(w.now, tenantA, w1); err != nil {
			t.Fatal(err)
		}
		_, _, err := w.c.ClaimNextAvailable(w.now+1, tenantA, w1)
		return err
	},
	bugs.CoordClaimSkipsExpired: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		w.acquire(1, w1)
		w.acquire(2, w1)
		w.now += 20 // both leases lapsed
		if _, _, err := w.c.ClaimNextAvailable(w.now, tenantA, w2); err != nil {
			return nil // the lapsed shards were passed over
		}
		return errRefused
	},
	bugs.CoordErrorNamesTenant: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		l := w.acquire(1, w1)
		_, _, err := w.c.Checkpoint(w.now, tenantB, l, cur("c"), 1)
		if CodeOf(err) != CodeTenantMismatch {
			t.Fatalf("foreign lease: %v", err)
		}
		if strings.Contains(err.Error(), tenantA.String()) {
			return nil // the refusal named the lease's tenant
		}
		return errRefused
	},
	bugs.CoordAcquireOwnLiveLease: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		first := w.acquire(1, w1)
		res, _, err := w.c.AcquireAndRestore(w.now+1, tenantA, ShardKey{run1, 1}, w1)
		if err == nil && res.Lease.Fence != first.Fence+1 {
			t.Fatal("second grant to the holder did not raise the fence")
		}
		return err
	},
	bugs.CoordEndedRunAccepts: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		l := w.acquire(1, w1)
		if _, _, err := w.c.CancelRun(w.now, tenantA, run1, 50); err != nil {
			t.Fatal(err)
		}
		_, _, err := w.c.Checkpoint(w.now, tenantA, l, cur("c"), 1)
		return err
	},
	bugs.CoordUnparkBumpsFirst: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		l := w.acquire(1, w1)
		if _, _, err := w.c.Complete(w.now, tenantA, l, cur("c"), 1); err != nil {
			t.Fatal(err)
		}
		before := w.record(1)
		_, _, err := w.c.UnparkShard(w.now, tenantA, ShardKey{run1, 1}, 2)
		if CodeOf(err) != CodeShardNotParked {
			t.Fatalf("unpark of a Done shard: %v", err)
		}
		if after := w.record(1); after.Fence == before.Fence {
			return errRefused // the record was left alone
		}
		return nil
	},
	bugs.CoordAcquireTerminal: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		l := w.acquire(1, w1)
		if _, _, err := w.c.Complete(w.now, tenantA, l, Cursor{}, 1); err != nil {
			t.Fatal(err)
		}
		_, _, err := w.c.AcquireAndRestore(w.now, tenantA, ShardKey{run1, 1}, w2)
		if err == nil {
			if r := w.record(1); r.Status != ShardDone || !r.Lease.Set {
				t.Fatalf("Done shard not leased: %+v", r)
			}
		}
		return err
	},
	bugs.CoordCompleteKeepsLease: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		l := w.acquire(1, w1)
		if _, _, err := w.c.Complete(w.now, tenantA, l, Cursor{}, 1); err != nil {
			t.Fatal(err)
		}
		if r := w.record(1); r.Lease.Set {
			return nil // the terminal shard still holds its lease
		}
		return errRefused
	},
	bugs.CoordSplitGap: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		l := w.acquire(1, w1)
		// Overlaps stay refused under the bug; gaps get through.
		_, _, err := w.c.SplitResidual(w.now, tenantA, l, SplitResidualPlan{spec("a", "h"), spec("g", "m")}, 1)
		wantCode(t, err, CodeSplitInvalid)
		_, _, err = w.c.SplitReplace(w.now, tenantA, l, SplitReplacePlan{[]ShardSpec{spec("a", "c"), spec("d", "m")}}, 2)
		return err
	},
	bugs.CoordUnparkDone: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		l := w.acquire(1, w1)
		if _, _, err := w.c.Complete(w.now, tenantA, l, Cursor{}, 1); err != nil {
			t.Fatal(err)
		}
		_, _, err := w.c.UnparkShard(w.now, tenantA, ShardKey{run1, 1}, 2)
		if err == nil && w.record(1).Status != ShardActive {
			t.Fatal("Done shard not reactivated")
		}
		return err
	},
	bugs.CoordCursorRegression: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		l := w.acquire(1, w1)
		if _, _, err := w.c.Checkpoint(w.now, tenantA, l, cur("f"), 1); err != nil {
			t.Fatal(err)
		}
		_, _, err := w.c.Checkpoint(w.now, tenantA, l, cur("c"), 2)
		if err == nil && string(w.record(1).Cursor.LastKey) != "c" {
			t.Fatal("cursor did not move back")
		}
		return err
	},
	bugs.CoordCursorOutOfBounds: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		l := w.acquire(1, w1)
		_, _, err := w.c.Checkpoint(w.now, tenantA, l, cur("x"), 1) // range is [a, m)
		return err
	},
	bugs.CoordOpIDConflictIgnored: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		l := w.acquire(1, w1)
		if _, _, err := w.c.Checkpoint(w.now, tenantA, l, cur("c"), 1); err != nil {
			t.Fatal(err)
		}
		out, evs, err := w.c.Checkpoint(w.now, tenantA, l, cur("d"), 1)
		if err == nil {
			r := w.record(1)
			if out != Executed || len(evs) != 1 || string(r.Cursor.LastKey) != "d" || r.OpLog.Len() != 1 {
				t.Fatalf("second execution: %v %v %+v", out, evs, r)
			}
		}
		return err
	},
	bugs.CoordNoTenantCheck: func(t *testing.T, cfg Config) error {
		r := newRef(t, cfg)
		for _, tn := range []TenantID{tenantA, tenantB} {
			if _, _, err := createRunWithShards(r, 1, tn, run1, RunConfig{}, []InitialShard{{1, spec("a", "m")}}, 1); err != nil {
				t.Fatal(err)
			}
		}
		res, _, err := r.AcquireAndRestore(1, tenantB, ShardKey{run1, 1}, w1)
		if err != nil {
			t.Fatal(err)
		}
		// A request scoped to tenant A presents tenant B's lease.
		_, _, err = r.Checkpoint(2, tenantA, res.Lease, cur("c"), 2)
		if err == nil {
			_, rec, _ := r.shard(tenantB, ShardKey{run1, 1})
			if string(rec.Cursor.LastKey) != "c" {
				t.Fatal("tenant B's shard unchanged")
			}
		}
		return err
	},
	bugs.CoordRunReopen: func(t *testing.T, cfg Config) error {
		w, _ := refWorld(t, cfg)
		if _, _, err := w.c.FailRun(w.now, tenantA, run1, 1); err != nil {
			t.Fatal(err)
		}
		_, _, err := w.c.CompleteRun(w.now, tenantA, run1, 2)
		if err == nil {
			if rec, _ := w.c.GetRun(tenantA, run1); rec.Status != RunDone {
				t.Fatalf("run is %s", rec.Status)
			}
		}
		return err
	},
}

type refusedError struct{}

func (refusedError) Error() string { return "guard held" }

var errRefused error = refusedError{}

func TestBugsChangeBehaviour(t *testing.T) {
	for _, b := range bugs.ForProtocol("coord") {
		run, ok := bugCases[b.Name]
		if etcdOnlyBugs[b.Name] {
			if ok {
				t.Errorf("%s is etcd-only but has a reference case", b.Name)
			}
			continue
		}
		if !ok {
			t.Errorf("coord bug %s has no reference test", b.Name)
			continue
		}
		t.Run(b.Name, func(t *testing.T) {
			if err := run(t, DefaultConfig()); err == nil {
				t.Fatal("without the bug the guard did not hold")
			}
			if err := run(t, cfgWith(b.Name)); err != nil {
				t.Fatalf("with the bug the guard still held: %v", err)
			}
		})
	}
}

func TestBugsDoNotLeakIntoOtherPaths(t *testing.T) {
	// With every reference bug on at once, ordinary operation still works
	// (the bugs change only the guarded decisions).
	var names []string
	for n := range bugCases {
		names = append(names, n)
	}
	w, _ := refWorld(t, cfgWith(names...))
	l := w.acquire(1, w1)
	if _, _, err := w.c.Checkpoint(w.now, tenantA, l, cur("b"), 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.c.SplitReplace(w.now, tenantA, l, SplitReplacePlan{[]ShardSpec{spec("a", "f"), spec("f", "m")}}, 2); err != nil {
		t.Fatal(err)
	}
}
