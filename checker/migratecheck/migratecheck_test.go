package migratecheck

import (
	"strings"
	"testing"
	"time"

	mcat "shardsim/model/migrate/catalog"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/property"
	"shardsim/simclock"
)

// Each M.* checker, fed a hand-built bad history, reports its property;
// fed the good variant, it stays quiet.

func wantProp(t *testing.T, v *property.Violation, prop property.Name) {
	t.Helper()
	if v == nil || v.Property != prop {
		t.Fatalf("got %v, want a %s violation", v, prop)
	}
}

func baseCat() mcat.Catalog {
	return mcat.Catalog{Version: 1, NextRouteID: 3, Routes: []mcat.Route{
		{ID: 1, Start: "", End: "k", Group: 0},
		{ID: 2, Start: "k", End: "", Group: 1},
	}}
}

func TestCatalogNonOverlapFails(t *testing.T) {
	c := NewCatalogChecker()
	if err := c.Published(baseCat()); err != nil {
		t.Fatal(err)
	}
	bad := baseCat().AddRoute(mcat.Route{Start: "k5", Group: 2})
	wantProp(t, c.Published(bad), property.MCatalogNonOverlap)
}

func TestCatalogVersionMonotoneFails(t *testing.T) {
	c := NewCatalogChecker()
	f, _, _ := baseCat().Fence(2, "k5")
	if err := c.Published(baseCat()); err != nil {
		t.Fatal(err)
	}
	if err := c.Published(f); err != nil {
		t.Fatal(err)
	}
	skip := f
	skip.Version += 2
	wantProp(t, c.Published(skip), property.MCatalogVersionMonotone)
	v := NewCatalogChecker()
	if err := v.Viewed("client0", 3); err != nil {
		t.Fatal(err)
	}
	wantProp(t, v.Viewed("client0", 2), property.MCatalogVersionMonotone)
}

func TestSingleWriterFails(t *testing.T) {
	f, moving, _ := baseCat().Fence(2, "k5")
	cut, _ := f.Cutover(moving, 2, 1, 0, 0)
	keys := []string{"b", "k1", "k7"}
	good := []GroupView{{Group: 0, Ready: true, View: f}, {Group: 1, Ready: true, View: f}, {Group: 2, Ready: true, View: cut}}
	if err := CheckSingleWriter(keys, good); err != nil {
		t.Fatalf("fenced source, target at cutover: %v", err)
	}
	// The source never saw the fence while the target took the route.
	bad := []GroupView{{Group: 1, Ready: true, View: baseCat()}, {Group: 2, Ready: true, View: cut}}
	wantProp(t, CheckSingleWriter(keys, bad), property.MSingleWriter)
	// A leader that does not serve yet accepts nothing.
	bad[0].Ready = false
	if err := CheckSingleWriter(keys, bad); err != nil {
		t.Fatal(err)
	}
	// Nor does one whose view is older than its group's last membership
	// change requires; once its view is new enough it counts again.
	bad[0].Ready, bad[0].MinView = true, 2
	if err := CheckSingleWriter(keys, bad); err != nil {
		t.Fatalf("a view-stale leader: %v", err)
	}
	bad[0].MinView = 1
	wantProp(t, CheckSingleWriter(keys, bad), property.MSingleWriter)
}

func rec(id uint64, p job.Phase) job.SplitJob {
	return job.SplitJob{ID: id, SourceGroup: 1, TargetGroup: 2, SplitKey: "k5", Phase: p}
}

func TestPhaseOrderFails(t *testing.T) {
	good := []job.SplitJob{rec(1, job.Planned), rec(1, job.Backfill), rec(1, job.Backfill), rec(1, job.Fence)}
	f := rec(1, job.Failed)
	f.RetryPhase = job.Fence
	good = append(good, f, rec(1, job.Fence), rec(1, job.DeltaCopy), rec(1, job.Cutover), rec(1, job.Cleanup), rec(1, job.Done))
	c := NewPhaseChecker()
	for _, j := range good {
		if err := c.Recorded(j); err != nil {
			t.Fatal(err)
		}
	}
	ab := rec(2, job.Abandoning)
	ab.AbandonFromPhase = job.DeltaCopy
	cases := map[string][]job.SplitJob{
		"skip":                  {rec(2, job.Planned), rec(2, job.Fence)},
		"first not planned":     {rec(2, job.Backfill)},
		"abandon after cutover": {rec(2, job.Planned), rec(2, job.Backfill), rec(2, job.Fence), rec(2, job.DeltaCopy), rec(2, job.Cutover), ab},
		"rewrite after done":    append(append([]job.SplitJob(nil), good...), rec(1, job.Cleanup)),
		"failed without retry":  {rec(2, job.Planned), rec(2, job.Failed)},
	}
	for name, seq := range cases {
		t.Run(name, func(t *testing.T) {
			c := NewPhaseChecker()
			var err *property.Violation
			for _, j := range seq {
				if err = c.Recorded(j); err != nil {
					break
				}
			}
			wantProp(t, err, property.MPhaseOrder)
		})
	}
}

func ver(ts hlc.TS, v string) mvcc.Version { return mvcc.Version{TS: ts, Value: v} }

func oracle() *VersionOracle {
	o := NewVersionOracle()
	o.Add(AppliedWrite{Op: "w1", Key: "k7", Version: ver(10, "w1")})
	o.Add(AppliedWrite{Op: "w2", Key: "k7", Version: ver(20, "w2")})
	o.Add(AppliedWrite{Op: "w3", Key: "k7", Version: mvcc.Version{TS: 30, Value: "w3", Tombstone: true}})
	o.Add(AppliedWrite{Op: "w4", Key: "k8", Version: mvcc.Version{TS: 5, Value: "w4", ExpireAt: 12}})
	return o
}

func TestSnapshotReadsFails(t *testing.T) {
	o := oracle()
	good := []ReadObs{
		{Key: "k7", TS: 15, Found: true, Version: ver(10, "w1")},
		{Key: "k7", TS: 25, Found: true, Version: ver(20, "w2")},
		{Key: "k7", TS: 35},
		{Key: "k8", TS: 20},
	}
	for _, r := range good {
		if err := o.CheckRead(r); err != nil {
			t.Fatal(err)
		}
	}
	// An older staged version shadows the newer one; a delete resurrects;
	// an expired value is served.
	for _, r := range []ReadObs{
		{Key: "k7", TS: 25, Found: true, Version: ver(10, "w1")},
		{Key: "k7", TS: 35, Found: true, Version: ver(20, "w2")},
		{Key: "k8", TS: 12, Found: true, Version: mvcc.Version{TS: 5, Value: "w4", ExpireAt: 12}},
		{Key: "k7", TS: 25},
	} {
		wantProp(t, o.CheckRead(r), property.MSnapshotReads)
	}
	wantProp(t, o.CheckScan(ScanObs{Family: keys.FamilyUser, Span: keys.Span{Start: "k"}, TS: 25}), property.MSnapshotReads)
	if err := o.CheckScan(ScanObs{Family: keys.FamilyUser, Span: keys.Span{Start: "k"}, TS: 25, Rows: []mvcc.ScanRow{{Key: "k7", Version: ver(20, "w2")}}}); err != nil {
		t.Fatal(err)
	}
	wantProp(t, o.CheckImported(1, mvcc.Row{Key: "k7", Version: ver(20, "w2-changed")}), property.MSnapshotReads)
}

func TestNoLostWriteFails(t *testing.T) {
	o := oracle()
	acked := []AckedWrite{{Op: "w1", Key: "k7", TS: 10}, {Op: "w2", Key: "k7", TS: 20}}
	store := mvcc.New()
	store.Put("k7", ver(20, "w2"))
	store.Put("k7", ver(10, "w1"))
	var floor hlc.TS
	read := func(k string, ts hlc.TS) (mvcc.Read, hlc.TS, bool) {
		return store.Get(k, ts, mvcc.Staging{}, mvcc.MergeNewest), floor, true
	}
	if err := o.CheckNoLostWrite(acked, read, "test"); err != nil {
		t.Fatal(err)
	}
	store.Delete("k7", 10) // promotion dropped the shadowed version
	wantProp(t, o.CheckNoLostWrite(acked, read, "test"), property.MNoLostWrite)
	// Below the owner's compaction floor a superseded version may be gone.
	floor = 25
	if err := o.CheckNoLostWrite(acked, read, "test"); err != nil {
		t.Fatalf("a version superseded below the floor: %v", err)
	}
	// But the newest version at the floor must stay.
	store.Delete("k7", 20)
	wantProp(t, o.CheckNoLostWrite(acked, read, "test"), property.MNoLostWrite)
	wantProp(t, o.CheckNoLostWrite([]AckedWrite{{Op: "lost", Key: "k7", TS: 40}}, read, "test"), property.MNoLostWrite)
	// A range delete that deleted nothing acknowledges nothing.
	if err := o.CheckNoLostWrite([]AckedWrite{{Op: "empty-range", TS: 50}}, read, "test"); err != nil {
		t.Fatal(err)
	}
}

func jobChecker() (*JobChecker, job.SplitJob) {
	c := NewJobChecker()
	j := rec(1, job.Planned)
	c.Recorded(j, nil)
	f, moving, _ := baseCat().Fence(2, "k5")
	j.Phase, j.MovingRouteID = job.Fence, moving
	c.Recorded(j, &f)
	j.Phase, j.FenceTS = job.DeltaCopy, 50
	c.Recorded(j, nil)
	return c, j
}

func TestFencedWritesRejectedFails(t *testing.T) {
	c, _ := jobChecker()
	if err := c.SourceWrite(1, "k1", 60, true); err != nil {
		t.Fatalf("write to the left part: %v", err)
	}
	if err := c.SourceWrite(1, "k7", 60, true); err != nil {
		t.Fatalf("write after a later move gave the span back: %v", err)
	}
	wantProp(t, c.SourceWrite(1, keys.Encode(keys.FamilyListItem, "k7", "1"), 60, false), property.MFencedWritesRejected)
	early := NewJobChecker()
	j := rec(1, job.Planned)
	early.Recorded(j, nil)
	f, moving, _ := baseCat().Fence(2, "k5")
	j.Phase, j.MovingRouteID = job.Fence, moving
	early.Recorded(j, &f)
	if err := early.SourceWrite(1, "k7", 40, false); err != nil {
		t.Fatalf("write before fence_ts was fixed: %v", err)
	}
}

func TestHLCMonotoneFails(t *testing.T) {
	c, j := jobChecker()
	c.Imported(1, 2, []mvcc.Row{{Key: "k7", Version: ver(45, "x")}})
	f, _, _ := baseCat().Fence(2, "k5")
	if err := c.TargetWrite(2, "k7", 30); err != nil {
		t.Fatalf("before the cutover: %v", err)
	}
	cut, _ := f.Cutover(j.MovingRouteID, 2, 1, 50, 0)
	j.Phase, j.CutoverVersion = job.Cutover, cut.Version
	if !c.Recorded(j, &cut) {
		t.Fatal("cutover not noticed")
	}
	if err := c.TargetWrite(2, "k7", 51); err != nil {
		t.Fatal(err)
	}
	if err := c.TargetWrite(2, "k1", 20); err != nil {
		t.Fatalf("outside the moving span: %v", err)
	}
	wantProp(t, c.TargetWrite(2, "k7", 50), property.MHLCMonotone)
}

func TestExactlyOnceCopyFails(t *testing.T) {
	source := []mvcc.Row{{Key: "k7", Version: ver(10, "a")}, {Key: "k7", Version: ver(20, "b")}, {Key: "k1", Version: ver(5, "left")}, {Key: "k8", Version: ver(60, "after")}}
	known := func(k string, ts hlc.TS) bool { return !strings.HasPrefix(k, "!txn|lock|") }
	good, _ := jobChecker()
	good.Imported(1, 1, source[:2])
	if err := good.CheckCopy(1, source, known); err != nil {
		t.Fatal(err)
	}
	missing, _ := jobChecker()
	missing.Imported(1, 1, source[:1])
	wantProp(t, missing.CheckCopy(1, source, known), property.MExactlyOnceCopy)
	twice, _ := jobChecker()
	twice.Imported(1, 1, source[:2])
	twice.Imported(1, 1, source[1:2])
	wantProp(t, twice.CheckCopy(1, source, known), property.MExactlyOnceCopy)
	extra, _ := jobChecker()
	extra.Imported(1, 1, source)
	wantProp(t, extra.CheckCopy(1, source, known), property.MExactlyOnceCopy)
	// Both passes may copy a version only inside their overlap
	// (delta_floor, snapshot_ts].
	overlap, j := jobChecker()
	j.SnapshotTS, j.DeltaFloor = 25, 15
	overlap.Recorded(j, nil)
	overlap.Imported(1, 1, source[:2])
	overlap.Imported(1, 2, source[1:2])
	if err := overlap.CheckCopy(1, source, known); err != nil {
		t.Fatalf("a re-copy inside the overlap: %v", err)
	}
	outside, j := jobChecker()
	j.SnapshotTS, j.DeltaFloor = 25, 15
	outside.Recorded(j, nil)
	outside.Imported(1, 1, source[:2])
	outside.Imported(1, 2, source[:1])
	wantProp(t, outside.CheckCopy(1, source, known), property.MExactlyOnceCopy)
	// Lock rows are drained, never copied: one copied is no write's version.
	locks, _ := jobChecker()
	locks.Imported(1, 1, append(source[:2:2], mvcc.Row{Key: "!txn|lock|k7", Version: ver(15, "t1")}))
	wantProp(t, locks.CheckCopy(1, source, known), property.MExactlyOnceCopy)
}

func TestCleanupSafeFails(t *testing.T) {
	c, _ := jobChecker()
	if err := c.Cleanup(1, true, 0, 0); err != nil {
		t.Fatal(err)
	}
	wantProp(t, c.Cleanup(1, false, 3, 0), property.MCleanupSafe)
	wantProp(t, c.Cleanup(1, true, 0, 1), property.MCleanupSafe)
}

func TestMigrateLinearizableFails(t *testing.T) {
	o := oracle()
	at := func(ms int) simclock.Time { return simclock.Time(time.Duration(ms) * time.Millisecond) }
	w := func(op string, call, ret int) KeyOp {
		return KeyOp{Client: 0, Key: "k7", Write: true, Op: op, Call: at(call), Return: at(ret)}
	}
	r := func(found bool, v string, call, ret int, ts hlc.TS) KeyOp {
		return KeyOp{Client: 1, Key: "k7", Found: found, Value: v, Call: at(call), Return: at(ret), ReadTS: ts}
	}
	good := []KeyOp{w("w1", 0, 1), r(true, "w1", 2, 3, 15), w("w2", 4, 5), r(true, "w2", 6, 7, 25)}
	if v, d := CheckLinearizable(good, o, 5*time.Second); v != property.VerdictOK {
		t.Fatalf("good history: %s %s", v, d)
	}
	// Reads travel back in time: after w2 completed, a read returns w1.
	bad := []KeyOp{w("w1", 0, 1), w("w2", 2, 3), r(true, "w1", 4, 5, 25)}
	v, d := CheckLinearizable(bad, o, 5*time.Second)
	if v != property.VerdictViolation || !strings.Contains(d.Detail, "k7") {
		t.Fatalf("stale read: %s %s", v, d)
	}
	// An ambiguous write the oracle never saw applied cannot explain a read.
	amb := KeyOp{Client: 0, Key: "k7", Write: true, Op: "ghost", Call: at(0), Ambiguous: true}
	if v, _ := CheckLinearizable([]KeyOp{amb, r(true, "ghost", 2, 3, 5)}, o, 5*time.Second); v != property.VerdictViolation {
		t.Fatal("a read of a never-applied write passed")
	}
	// A TTL expiry is part of the model: a read after expiry sees nothing.
	exp := []KeyOp{{Client: 0, Key: "k8", Write: true, Op: "w4", Call: at(0), Return: at(1)}, {Client: 1, Key: "k8", Call: at(2), Return: at(3), ReadTS: 12, Found: true, Value: "w4"}}
	if v, _ := CheckLinearizable(exp, o, 5*time.Second); v != property.VerdictViolation {
		t.Fatal("a read of an expired value passed")
	}
}

// The checker's route-key mapping is its own; it must agree with the
// protocol's on every key layout the workload makes, and leave group-local
// rows out.
func TestOwnRouteKeyMapping(t *testing.T) {
	for _, uk := range []string{"", "b0", "k07", "k", "q\x00r\x00"} {
		for _, f := range keys.Families() {
			if f == keys.FamilyUser && !keys.ValidUserKey(uk) {
				continue
			}
			for _, sub := range append([]string{""}, keys.Subs...) {
				raw := keys.EncodeSub(f, sub, uk, "12\x00")
				rk, ok := routeKeyOf(raw)
				if !ok || rk != uk || rk != keys.RouteKey(raw) {
					t.Errorf("%q: route key %q %v, want %q", raw, rk, ok, uk)
				}
				if fam, _ := familyOf(raw); fam != f.Prefix() {
					t.Errorf("%q: family %q, want %q", raw, fam, f.Prefix())
				}
			}
		}
	}
	// A row of the older NUL-separator layout routes by the key up to the NUL.
	if rk, _ := routeKeyOf("!lst|claim|q\x00r\x00\x07"); rk != "q" || keys.RouteKey("!lst|claim|q\x00r\x00\x07") != "q" {
		t.Errorf("legacy row: %q", rk)
	}
	for _, local := range []string{keys.StageKey(3, "k7"), "!dist|cursor|1"} {
		if _, ok := routeKeyOf(local); ok || routedIn(local, "", "") {
			t.Errorf("group-local %q was given a route", local)
		}
	}
}

// A copy that leaves an internal-family row of the moving span behind is
// caught although the row's raw key lies far outside the span's raw range.
func TestExactlyOnceCopyCountsInternalFamilies(t *testing.T) {
	item := keys.Encode(keys.FamilyListItem, "k7", "1")
	source := []mvcc.Row{{Key: "k7", Version: ver(10, "a")}, {Key: item, Version: ver(12, "i")},
		{Key: keys.StageKey(9, "k7"), Version: ver(11, "staged elsewhere")}}
	known := func(string, hlc.TS) bool { return true }
	c, _ := jobChecker()
	c.Imported(1, 1, source[:1])
	wantProp(t, c.CheckCopy(1, source, known), property.MExactlyOnceCopy)
	ok, _ := jobChecker()
	ok.Imported(1, 1, source[:2])
	if v := ok.CheckCopy(1, source, known); v != nil {
		t.Fatalf("the staged row of another job counted as source data: %v", v)
	}
}

// A span that moved away and came back by a later job: the first job's
// fence no longer binds the group that owns the span again, while the
// part that did not come back stays fenced, and the later job's own fence
// binds once its fence_ts is fixed.
func TestFencedWritesRejectedAfterMoveBack(t *testing.T) {
	c := NewJobChecker()
	step := func(j job.SplitJob, cat *mcat.Catalog) {
		t.Helper()
		c.Recorded(j, cat)
	}
	move := func(id uint64, from, to int, cat mcat.Catalog, route uint64, split string, fenceTS hlc.TS) (mcat.Catalog, uint64) {
		t.Helper()
		j := job.SplitJob{ID: id, SourceGroup: from, TargetGroup: to, SplitKey: split, Phase: job.Planned}
		step(j, nil)
		f, moving, err := cat.Fence(route, split)
		if err != nil {
			t.Fatal(err)
		}
		j.Phase, j.MovingRouteID = job.Fence, moving
		step(j, &f)
		if fenceTS == 0 {
			return f, moving
		}
		j.Phase, j.FenceTS = job.DeltaCopy, fenceTS
		step(j, nil)
		cut, err := f.Cutover(moving, to, id, fenceTS, 0)
		if err != nil {
			t.Fatal(err)
		}
		j.Phase = job.Cutover
		step(j, &cut)
		clear, err := cut.ClearStaged(moving, false)
		if err != nil {
			t.Fatal(err)
		}
		j.Phase = job.Done
		step(j, &clear)
		return clear, moving
	}
	cat, m1 := move(1, 1, 2, baseCat(), 2, "k5", 50)
	cat, m2 := move(2, 2, 1, cat, m1, "k6", 60)
	_, _ = move(3, 1, 2, cat, m2, "k8", 0)
	if err := c.SourceWrite(1, "k9", 70, false); err != nil {
		t.Fatalf("write to a span job 2 brought back, before job 3 fixed fence_ts: %v", err)
	}
	wantProp(t, c.SourceWrite(1, "k55", 70, false), property.MFencedWritesRejected)
	j3, _ := c.Job(3)
	j3.Phase, j3.FenceTS = job.DeltaCopy, 80
	c.Recorded(j3, nil)
	wantProp(t, c.SourceWrite(1, "k9", 90, false), property.MFencedWritesRejected)
}
