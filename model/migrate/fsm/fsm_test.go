package fsm

import (
	"errors"
	"testing"

	"shardsim/model/bugs"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// applier feeds entries with consecutive indexes.
type applier struct{ f *FSM }

func (a applier) apply(e Entry) Result {
	e.Index = a.f.Applied + 1
	return a.f.Apply(e)
}

func newApplier(set bugs.Set) applier { return applier{New(1, set)} }

func write(key string, ts hlc.TS) Entry {
	return Entry{Kind: KindWrite, Write: &Write{Key: key, Value: "v@" + ts.String(), TS: ts, Op: "op"}}
}

var moving = keys.Span{Start: "k5"}

// A write lands unless it is at or below a durable floor of its span, under
// a lock, or at or below an existing version or the compaction watermark.
func TestWriteAdmission(t *testing.T) {
	a := newApplier(bugs.None)
	if r := a.apply(write("k1", 10)); r.Err != nil || r.TS != 10 || a.f.LastCommit != 10 {
		t.Fatalf("plain write: %+v", r)
	}
	if r := a.apply(write("k1", 10)); !errors.Is(r.Err, errs.ErrWriteTooOld) {
		t.Fatalf("a write at an existing version's ts: %v", r.Err)
	}
	a.apply(Entry{Kind: KindFloor, Guard: &Guard{Job: 9, Span: moving, TS: 100}})
	if a.f.LastCommit != 100 || a.f.Ceiling < hlc.TS(100).Phys() {
		t.Fatal("the floor did not raise the durable clock bound")
	}
	if r := a.apply(write("k7", 100)); !errors.Is(r.Err, errs.ErrBelowFloor) {
		t.Fatalf("write at the floor: %v", r.Err)
	}
	if r := a.apply(write("k7", 101)); r.Err != nil {
		t.Fatalf("write above the floor: %v", r.Err)
	}
	if r := a.apply(write("k1", 50)); r.Err != nil {
		t.Fatalf("the floor covers only its span: %v", r.Err)
	}
	a.apply(Entry{Kind: KindCompact, TS: 60})
	if r := a.apply(write("k2", 55)); !errors.Is(r.Err, errs.ErrWriteTooOld) {
		t.Fatalf("a write below the compaction watermark: %v", r.Err)
	}
	if !a.f.HasFloor(9, 100) || a.f.HasFloor(9, 101) {
		t.Fatal("HasFloor")
	}
}

func txn(id string, readTS, start, commit hlc.TS, ks ...string) *Txn {
	t := &Txn{ID: id, Primary: ks[0], Keys: ks, ReadTS: readTS, StartTS: start, CommitTS: commit}
	for range ks {
		t.Values = append(t.Values, id)
		t.Deletes = append(t.Deletes, false)
	}
	return t
}

// Prepare locks, a read at or above the commit ts waits, commit installs
// the versions and the commit record, a retried commit is a duplicate, and
// a rolled-back transaction cannot commit.
func TestTransactions(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		set := bugs.None
		if buggy {
			set = bugs.MustParse(bugs.MigrateRollbackProvesCommit)
		}
		a := newApplier(set)
		a.apply(write("k6", 10))
		tx := txn("t1", 10, 11, 20, "k6", "k2")
		if r := a.apply(Entry{Kind: KindPrepare, Txn: tx}); r.Err != nil || r.TS != 20 {
			t.Fatalf("prepare: %+v", r)
		}
		if r := a.apply(Entry{Kind: KindPrepare, Txn: tx}); !r.Duplicate {
			t.Fatalf("repeated prepare: %+v", r)
		}
		if a.f.LockCount(keys.Span{}) != 2 {
			t.Fatalf("locks %d", a.f.LockCount(keys.Span{}))
		}
		if _, err := a.f.Read("k6", 20, ReadOpts{}); !errors.Is(err, errs.ErrLocked) {
			t.Fatalf("read at the commit ts under a lock: %v", err)
		}
		if r, err := a.f.Read("k6", 19, ReadOpts{}); err != nil || r.Version.TS != 10 {
			t.Fatalf("read below the commit ts: %+v %v", r, err)
		}
		if r := a.apply(write("k2", 30)); !errors.Is(r.Err, errs.ErrLocked) {
			t.Fatalf("a write to a locked key: %v", r.Err)
		}
		other := txn("t2", 10, 12, 21, "k6")
		if r := a.apply(Entry{Kind: KindPrepare, Txn: other}); !errors.Is(r.Err, errs.ErrLocked) {
			t.Fatalf("a second prepare on a locked key: %v", r.Err)
		}
		if r := a.apply(Entry{Kind: KindCommit, Txn: tx}); r.Err != nil || r.TS != 20 {
			t.Fatalf("commit: %+v", r)
		}
		if r := a.apply(Entry{Kind: KindCommit, Txn: tx}); !r.Duplicate || r.TS != 20 {
			t.Fatalf("retried commit: %+v", r)
		}
		if r, _ := a.f.Read("k2", 20, ReadOpts{}); r.Version.Value != "t1" || a.f.LockCount(keys.Span{}) != 0 {
			t.Fatalf("committed read %+v", r)
		}
		if _, ok := a.f.Store.At(CommitRecordKey("k6", "t1"), 20); !ok {
			t.Fatal("no commit record")
		}
		late := txn("t3", 20, 22, 23, "k2")
		if r := a.apply(Entry{Kind: KindPrepare, Txn: txn("t9", 5, 22, 40, "k6")}); !errors.Is(r.Err, errs.ErrTxnConflict) {
			t.Fatalf("prepare over a newer committed version: %v", r.Err)
		}
		a.apply(Entry{Kind: KindPrepare, Txn: late})
		late.AbortTS = 24
		a.apply(Entry{Kind: KindRollback, Txn: late})
		r := a.apply(Entry{Kind: KindCommit, Txn: late})
		if buggy != (r.Err == nil) || !buggy && !errors.Is(r.Err, errs.ErrTxnAborted) {
			t.Fatalf("bug=%v: commit after rollback: %+v", buggy, r)
		}
		if r := a.apply(Entry{Kind: KindPrepare, Txn: late}); !errors.Is(r.Err, errs.ErrTxnAborted) {
			t.Fatalf("a late prepare after rollback: %v", r.Err)
		}
		if r := a.apply(Entry{Kind: KindCommit, Txn: txn("t8", 1, 2, 3, "k9")}); !errors.Is(r.Err, errs.ErrTxnNotFound) {
			t.Fatalf("commit of an unknown transaction: %v", r.Err)
		}
	}
}

// The tracker starts from the commit timestamps of transactions prepared
// before it was armed and follows every write admitted in its span.
func TestWriteTracker(t *testing.T) {
	a := newApplier(bugs.None)
	a.apply(write("k6", 50))
	a.apply(Entry{Kind: KindPrepare, Txn: txn("t1", 50, 51, 52, "k7")})
	a.apply(Entry{Kind: KindPrepare, Txn: txn("t0", 50, 53, 54, "k1")}) // outside the span
	a.apply(Entry{Kind: KindCompact, TS: 5})
	r := a.apply(Entry{Kind: KindArmTracker, Guard: &Guard{Job: 9, Span: moving}})
	if r.Tracked != 52 || r.Compacted != 5 || !a.f.Tracking(9) {
		t.Fatalf("arm: %+v", r)
	}
	a.apply(Entry{Kind: KindWrite, Write: &Write{Key: "k8", TS: 40, CallerTS: true}})
	a.apply(write("k2", 30))
	if r := a.apply(Entry{Kind: KindBarrier, Job: 9}); r.Tracked != 40 {
		t.Fatalf("tracked %s, want the caller-timestamped write at 40", r.Tracked)
	}
	a.apply(Entry{Kind: KindRelease, Job: 9})
	if a.f.Tracking(9) || a.f.TrackedMin(9) != 0 {
		t.Fatal("release left the tracker")
	}
}

// Compaction keeps each key's newest version at or below its effective
// timestamp (a retention pin caps it), drops what that hides, refuses
// reads below the watermark, and leaves staged and lock rows alone.
func TestCompactionAndRetentionPin(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		set := bugs.None
		if buggy {
			set = bugs.MustParse(bugs.MigrateNoRetentionPin)
		}
		a := newApplier(set)
		for _, ts := range []hlc.TS{10, 20, 30} {
			a.apply(write("k1", ts))
			a.apply(write("k6", ts))
		}
		a.apply(Entry{Kind: KindWrite, Write: &Write{Key: "k3", TS: 15, Tombstone: true}})
		a.apply(Entry{Kind: KindWrite, Write: &Write{Key: "k3", TS: 14, CallerTS: true}}) // under the tombstone
		a.apply(Entry{Kind: KindArmTracker, Guard: &Guard{Job: 9, Span: moving}})
		a.apply(Entry{Kind: KindCompact, TS: 25})
		if n := len(a.f.Store.Versions("k1")); n != 2 {
			t.Fatalf("k1 keeps %d versions, want 20 and 30", n)
		}
		if vs := a.f.Store.Versions("k3"); len(vs) != 1 || !vs[0].Tombstone {
			t.Fatalf("k3 keeps %v, want the tombstone alone (it may hide staged rows)", vs)
		}
		want := 3
		if buggy {
			want = 2
		}
		if n := len(a.f.Store.Versions("k6")); n != want {
			t.Fatalf("bug=%v: pinned k6 keeps %d versions", buggy, n)
		}
		if _, err := a.f.Read("k6", 24, ReadOpts{}); !errors.Is(err, errs.ErrCompacted) {
			t.Fatal("a read below the watermark was served")
		}
		if _, err := a.f.Read("k6", 26, ReadOpts{MinRead: 27}); !errors.Is(err, errs.ErrCompacted) {
			t.Fatal("a read below the route's oldest answerable ts was served")
		}
		a.apply(Entry{Kind: KindPin, Guard: &Guard{Job: 9, TS: 15}})
		a.apply(Entry{Kind: KindCompact, TS: 28})
		if p, _ := a.f.Pin(9); !buggy && (p.TS != 15 || len(a.f.Store.Versions("k6")) != 3) {
			t.Fatalf("moved pin %+v, k6 versions %d", p, len(a.f.Store.Versions("k6")))
		}
	}
}

func row(key string, ts hlc.TS) mvcc.Row {
	return mvcc.Row{Key: key, Version: mvcc.Version{TS: ts, Value: key}}
}

func imp(seq uint64, rows ...mvcc.Row) Entry {
	return Entry{Kind: KindImport, Import: &Import{Job: 9, Bracket: job.BracketID(1, keys.FamilyUser), Seq: seq, Rows: rows,
		Cursor: []byte{byte(seq)}, Moving: moving}}
}

func TestImportIsIdempotentAndRefusedAfterAbandon(t *testing.T) {
	a := applier{New(2, bugs.None)}
	if r := a.apply(imp(1, row("k6", 40))); r.Err != nil || r.Applied != 1 || r.Duplicate {
		t.Fatalf("first batch: %+v", r)
	}
	if a.f.LastCommit != 40 || a.f.Ceiling < hlc.TS(40).Phys() {
		t.Fatal("import did not raise the timestamp floor")
	}
	if r := a.apply(imp(1, row("k6", 40))); !r.Duplicate || r.Seq != 1 || r.Cursor[0] != 1 {
		t.Fatalf("replayed batch: %+v", r)
	}
	if r := a.apply(imp(3, row("k7", 50))); !errors.Is(r.Err, errs.ErrImportGap) {
		t.Fatalf("gap: %v", r.Err)
	}
	if r := a.apply(imp(2, row("a", 50))); !errors.Is(r.Err, errs.ErrForeignRow) {
		t.Fatalf("foreign row: %v", r.Err)
	}
	if a.f.StagedRows(9) != 1 {
		t.Fatalf("staged rows %d", a.f.StagedRows(9))
	}
	a.apply(Entry{Kind: KindAbandonStaged, Job: 9})
	if a.f.StagedRows(9) != 0 || !a.f.Aborted(9) {
		t.Fatal("abandon left staged rows")
	}
	if seq, _ := a.f.ImportState(9, job.BracketID(1, keys.FamilyUser)); seq != 0 {
		t.Fatal("abandon left import state")
	}
	if r := a.apply(imp(1, row("k6", 40))); !errors.Is(r.Err, errs.ErrJobAborted) || a.f.StagedRows(9) != 0 {
		t.Fatalf("a late import after abandon: %+v", r)
	}
	nb := applier{New(2, bugs.MustParse(bugs.MigrateNoHLCAdvance))}
	nb.apply(imp(1, row("k6", 40)))
	if nb.f.LastCommit != 0 {
		t.Fatal("the no-hlc-advance variant raised the floor")
	}
}

func TestPromotionAndCleanup(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		set := bugs.None
		if buggy {
			set = bugs.MustParse(bugs.MigratePromoteSkipsShadowed)
		}
		a := applier{New(2, set)}
		a.apply(imp(1, row("k6", 10), row("k6", 20), row("k7", 30)))
		a.f.Store.Put("k6", mvcc.Version{TS: 50, Value: "newer"}) // a post-cutover write
		r := a.apply(Entry{Kind: KindPromote, Promote: &Promote{Job: 9, Max: 2}})
		if r.Done || a.f.StagedRows(9) != 1 {
			t.Fatalf("first promotion batch: %+v staged=%d", r, a.f.StagedRows(9))
		}
		r = a.apply(Entry{Kind: KindPromote, Promote: &Promote{Job: 9, Max: 2}})
		if !r.Done || !a.f.Promoted(9) || a.f.StagedRows(9) != 0 {
			t.Fatalf("second batch: %+v", r)
		}
		_, kept := a.f.Store.At("k6", 10)
		if kept == buggy {
			t.Fatalf("bug=%v: the shadowed staged version was kept=%v", buggy, kept)
		}
		if _, ok := a.f.Store.At("k7", 30); !ok {
			t.Fatal("unshadowed version not promoted")
		}
	}
	src := newApplier(bugs.None)
	src.apply(write("k6", 10))
	src.apply(write("k6", 20))
	src.apply(write(keys.Encode(keys.FamilyListItem, "k6", "0"), 15))
	src.apply(write("k1", 5))
	r := src.apply(Entry{Kind: KindCleanup, Cleanup: &Cleanup{Job: 9, Moving: moving, FenceTS: 15}})
	if r.Applied != 2 || !src.f.Cleaned(9) || src.f.Store.Len() != 2 {
		t.Fatalf("cleanup removed %d, %d left", r.Applied, src.f.Store.Len())
	}
}

// Reads merge the staged rows of the route's job; scans of the user family
// wait for locks; a cloned state is independent.
func TestReadsScansAndClone(t *testing.T) {
	a := applier{New(2, bugs.None)}
	a.apply(imp(1, row("k6", 10), row("k8", 12)))
	a.apply(write("k6", 20))
	if r, err := a.f.Read("k6", 15, ReadOpts{Staging: 9}); err != nil || !r.Found || r.Version.Value != "k6" {
		t.Fatalf("merged read below the live write %+v %v", r, err)
	}
	if r, _ := a.f.Read("k6", 15, ReadOpts{}); r.Found {
		t.Fatal("a read without staging saw staged rows")
	}
	rows, err := a.f.Scan(keys.FamilyUser, moving, 30, ReadOpts{Staging: 9}, 0)
	if err != nil || len(rows) != 2 || rows[0].TS != 20 || rows[1].Value != "k8" {
		t.Fatalf("scan %v %v", rows, err)
	}
	a.apply(Entry{Kind: KindPrepare, Txn: txn("t1", 30, 31, 32, "k9")})
	if _, err := a.f.Scan(keys.FamilyUser, moving, 40, ReadOpts{Staging: 9}, 0); !errors.Is(err, errs.ErrLocked) {
		t.Fatalf("a scan over a lock: %v", err)
	}
	c := a.f.Clone()
	c.Apply(Entry{Index: c.Applied + 1, Kind: KindWrite, Write: &Write{Key: "k1", TS: 50}})
	if a.f.Store.Len() == c.Store.Len() || a.f.Applied == c.Applied {
		t.Fatal("the clone shares state")
	}
	a.apply(Entry{Kind: KindArmFence, Guard: &Guard{Job: 9, Span: moving, Expected: 4, Target: 2}})
	if g, ok := a.f.Fence(9); !ok || g.Expected != 4 {
		t.Fatal("arm fence")
	}
	a.apply(Entry{Kind: KindDisarmFence, Guard: &Guard{Job: 9}})
	if len(a.f.Fences()) != 0 {
		t.Fatal("disarm fence")
	}
	// A late or repeated arm of the fence just disarmed is refused; an arm
	// for a later cutover version is not.
	if r := a.apply(Entry{Kind: KindArmFence, Guard: &Guard{Job: 9, Span: moving, Expected: 4}}); !errors.Is(r.Err, errs.ErrStaleGuard) || len(a.f.Fences()) != 0 {
		t.Fatalf("stale arm: %+v", r)
	}
	if r := a.apply(Entry{Kind: KindArmFence, Guard: &Guard{Job: 9, Span: moving, Expected: 5}}); r.Err != nil {
		t.Fatalf("re-arm for a later version: %v", r.Err)
	}
	a.apply(Entry{Kind: KindArmTracker, Guard: &Guard{Job: 9, Span: moving}})
	a.apply(Entry{Kind: KindRelease, Job: 9})
	if r := a.apply(Entry{Kind: KindArmTracker, Guard: &Guard{Job: 9, Span: moving}}); !errors.Is(r.Err, errs.ErrStaleGuard) || a.f.Tracking(9) {
		t.Fatalf("a tracker armed again after its release: %+v", r)
	}
}

func onePhase(tx *Txn) Entry {
	tx.OnePhase = true
	return Entry{Kind: KindCommit, Txn: tx}
}

// The read set: a transaction whose point read, range read (a phantom
// included) or read key's lock changed since its snapshot fails with a
// conflict, though it writes nothing anyone else wrote; with an empty read
// set the same transaction commits (write-write detection alone).
func TestReadSetConflicts(t *testing.T) {
	cases := []struct {
		name  string
		setup []Entry
		reads []Read
	}{
		{"point read overwritten", []Entry{write("a", 20)}, []Read{{Start: "a"}}},
		{"range read gained a phantom", []Entry{write("b5", 20)}, []Read{{Start: "b", End: "c"}}},
		{"range read lost a row", []Entry{{Kind: KindWrite, Write: &Write{Key: "b1", Tombstone: true, TS: 20}}}, []Read{{Start: "b", End: "c"}}},
		{"point read locked", []Entry{{Kind: KindPrepare, Txn: txn("other", 0, 15, 30, "a")}}, []Read{{Start: "a"}}},
		{"range read locked", []Entry{{Kind: KindPrepare, Txn: txn("other", 0, 15, 30, "b7")}}, []Read{{Start: "b", End: "c"}}},
	}
	for _, c := range cases {
		for _, withReads := range []bool{true, false} {
			a := newApplier(bugs.None)
			a.apply(write("b1", 5))
			for _, e := range c.setup {
				if r := a.apply(e); r.Err != nil {
					t.Fatalf("%s: setup: %v", c.name, r.Err)
				}
			}
			tx := txn("t", 10, 40, 41, "z")
			if withReads {
				tx.Reads = c.reads
			}
			r := a.apply(onePhase(tx))
			switch {
			case withReads && !errors.Is(r.Err, errs.ErrTxnConflict):
				t.Errorf("%s: committed (%v) though its read set changed", c.name, r.Err)
			case !withReads && r.Err != nil:
				t.Errorf("%s: without a read set: %v", c.name, r.Err)
			}
		}
	}
	// Reads that did not change, and changes outside what was read, pass.
	a := newApplier(bugs.None)
	a.apply(write("b1", 5))
	a.apply(write("c", 20))
	a.apply(write("a", 8))
	tx := txn("t", 10, 40, 41, "z")
	tx.Reads = []Read{{Start: "a"}, {Start: "b", End: "c"}, {Start: "nothing"}}
	if r := a.apply(onePhase(tx)); r.Err != nil {
		t.Fatalf("unchanged read set: %v", r.Err)
	}
	// Staged rows count under the transaction's staging job.
	a.apply(Entry{Kind: KindImport, Import: &Import{Job: 3, Bracket: 1, Seq: 1, Moving: keys.Span{Start: "a"}, Rows: []mvcc.Row{row("q5", 30)}}})
	tx = txn("u", 25, 50, 51, "y")
	tx.Reads, tx.Staging = []Read{{Start: "q", End: "r"}}, 3
	if r := a.apply(onePhase(tx)); !errors.Is(r.Err, errs.ErrTxnConflict) {
		t.Fatalf("a staged row newer than the snapshot in a range read: %v", r.Err)
	}
	// A prepare validates its read set too.
	tx = txn("v", 5, 60, 61, "x")
	tx.Reads = []Read{{Start: "a"}}
	if r := a.apply(Entry{Kind: KindPrepare, Txn: tx}); !errors.Is(r.Err, errs.ErrTxnConflict) {
		t.Fatalf("prepare with a changed read: %v", r.Err)
	}
}

// lock probes a user key's lock row as lockPrefix+uk: that must be LockKey.
func TestLockPrefixIsLockKey(t *testing.T) {
	for _, uk := range []string{"", "k", "k5", "a\x00b", "!txn|lock|x", "\xff\xfe"} {
		if got := lockPrefix + uk; got != LockKey(uk) {
			t.Fatalf("lockPrefix+%q = %q, LockKey = %q", uk, got, LockKey(uk))
		}
	}
}
