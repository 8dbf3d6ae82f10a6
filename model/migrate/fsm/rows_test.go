package fsm

import (
	"fmt"
	"testing"

	"shardsim/model/bugs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// The one-row Puts of a write live in the write itself, shared by every
// voter that applies it: each must stay what its write made whatever the
// voter (or a clone of it) applies later and whatever a holder appends to
// another one, and a second voter applying the same write hands out the
// same row.
func TestWritePutsNeverAlias(t *testing.T) {
	a := newApplier(bugs.None)
	b := newApplier(bugs.None)
	var results []Result
	var clones []applier
	const n = 100
	for i := 0; i < n; i++ {
		w := write(fmt.Sprintf("k%03d", i), hlc.TS(10+i))
		results = append(results, a.apply(w))
		other := b.apply(w)
		if len(other.Puts) != 1 || &other.Puts[0] != &results[len(results)-1].Puts[0] {
			t.Fatalf("write %d: the second voter's puts %v are not the first's", i, other.Puts)
		}
		if i%50 == 7 {
			c := applier{a.f.Clone()}
			clones = append(clones, c)
			results = append(results, c.apply(write("clone", hlc.TS(100000+i))))
		}
	}
	for _, c := range clones {
		for i := 0; i < 40; i++ {
			c.apply(write(fmt.Sprintf("c%03d", i), hlc.TS(200000+i)))
		}
	}
	for i := 0; i < n; i++ {
		a.apply(write(fmt.Sprintf("z%03d", i), hlc.TS(300000+i)))
	}
	k := 0
	for _, r := range results {
		if len(r.Puts) != 1 || cap(r.Puts) != 1 {
			t.Fatalf("puts %v (cap %d), want one row of capacity one", r.Puts, cap(r.Puts))
		}
		p := r.Puts[0]
		if p.Key == "clone" {
			if p.TS < 100000 {
				t.Fatalf("clone's row changed: %+v", p)
			}
			continue
		}
		if want := fmt.Sprintf("k%03d", k); p.Key != want || p.TS != hlc.TS(10+k) || p.Value != "v@"+hlc.TS(10+k).String() {
			t.Fatalf("row %d is %+v, want %s@%d", k, p, want, 10+k)
		}
		k++
	}
}

// An import batch's staged keys are made once and shared by the voters
// that apply it: each voter stores the batch's rows under exactly the keys
// keys.StageKey names, and a second batch of the same rows for another job
// gets its own keys.
func TestImportStagedKeysShared(t *testing.T) {
	rows := []mvcc.Row{{Key: "k1", Version: mvcc.Version{TS: 5, Value: "a"}}, {Key: "k2", Version: mvcc.Version{TS: 6, Value: "b"}}}
	im := &Import{Job: 7, Bracket: 1, Seq: 1, Rows: rows, Moving: keys.Span{Start: "k"}}
	a, b := newApplier(bugs.None), newApplier(bugs.None)
	for _, v := range []applier{a, b} {
		if r := v.apply(Entry{Kind: KindImport, Import: im}); r.Err != nil || r.Applied != 2 {
			t.Fatalf("import: %+v", r)
		}
		for _, row := range rows {
			if !v.f.Store.Has(keys.StageKey(7, row.Key), row.Version) {
				t.Fatalf("voter lacks %s staged under job 7", row.Key)
			}
		}
	}
	other := &Import{Job: 8, Bracket: 1, Seq: 1, Rows: rows, Moving: keys.Span{Start: "k"}}
	if r := a.apply(Entry{Kind: KindImport, Import: other}); r.Err != nil {
		t.Fatalf("import of job 8: %+v", r)
	}
	if !a.f.Store.Has(keys.StageKey(8, "k2"), rows[1].Version) || a.f.StagedRows(8) != 2 || a.f.StagedRows(7) != 2 {
		t.Fatalf("staged rows: job 7 %d, job 8 %d", a.f.StagedRows(7), a.f.StagedRows(8))
	}
}

// A transaction step's lock value is what encodeLock makes of its fields,
// made again when they change (a copy that changes them gets its own and
// leaves the original's alone), and a lock found by lockFor through it
// equals the decoded row.
func TestTxnLockValue(t *testing.T) {
	tx := &Txn{ID: "t1", Primary: "k1", Keys: []string{"k1", "k2"}, Values: []string{"a", "b"}, Deletes: []bool{false, false},
		ReadTS: 5, StartTS: 10, CommitTS: 12}
	want := encodeLock(lockInfo{txn: "t1", primary: "k1", start: 10, commit: 12})
	if got := tx.lockValue().value; got != want {
		t.Fatalf("lock value %q, want %q", got, want)
	}
	cp := *tx
	cp.StartTS, cp.CommitTS = 20, 22
	if got, w := cp.lockValue().value, encodeLock(lockInfo{txn: "t1", primary: "k1", start: 20, commit: 22}); got != w {
		t.Fatalf("copy's lock value %q, want %q", got, w)
	}
	if got := tx.lockValue().value; got != want {
		t.Fatalf("original's lock value changed to %q", got)
	}
	a := newApplier(bugs.None)
	if r := a.apply(Entry{Kind: KindPrepare, Txn: tx}); r.Err != nil {
		t.Fatalf("prepare: %+v", r)
	}
	other := &Txn{ID: "t2", Primary: "k1", StartTS: 1, CommitTS: 2}
	for _, k := range tx.Keys {
		decoded, ok1 := a.f.lock(k)
		own, ok2 := a.f.lockFor(k, tx)
		via, ok3 := a.f.lockFor(k, other)
		if !ok1 || !ok2 || !ok3 || own != decoded || via != decoded || decoded.txn != "t1" || decoded.start != 10 || decoded.commit != 12 {
			t.Fatalf("%s: decoded %+v, through its txn %+v, through another %+v", k, decoded, own, via)
		}
	}
}

// A transaction step's record and lock row keys are what CommitRecordKey,
// RollbackRecordKey and LockKey make, whatever copies of the step that
// change its keys, id or primary ask for meanwhile.
func TestTxnRowKeys(t *testing.T) {
	tx := &Txn{ID: "t1", Primary: "k1", Keys: []string{"k1", "k2", "k3"}}
	check := func(name string, x *Txn) {
		t.Helper()
		if got, want := x.commitKey(), CommitRecordKey(x.Primary, x.ID); got != want {
			t.Fatalf("%s: commit key %q, want %q", name, got, want)
		}
		if got, want := x.rollbackKey(), RollbackRecordKey(x.Primary, x.ID); got != want {
			t.Fatalf("%s: rollback key %q, want %q", name, got, want)
		}
		for i, k := range x.Keys {
			if got, want := x.lockKey(i), LockKey(k); got != want {
				t.Fatalf("%s: lock key %d %q, want %q", name, i, got, want)
			}
		}
	}
	tx.lockKey(0) // the struct exists, half filled, when the copies are made
	a := *tx
	a.Keys = []string{"k1", "kX", "k3"} // a stamped key
	b := *tx
	b.ID = "t2"
	c := *tx
	c.Keys = []string{"k1"}
	check("copy with a new key", &a)
	check("copy with a new id", &b)
	check("copy with fewer keys", &c)
	check("original", tx)
	check("copy with a new key, again", &a)

	// More keys than a txnKeys holds in its own room.
	big := &Txn{ID: "t3", Primary: "k1", Keys: []string{"k1", "k2", "k3", "k4", "k5", "k6"}}
	big.lockKey(5)
	d := *big
	d.Keys = []string{"k1", "k2", "k3", "k4", "k5", "kY"}
	check("many keys, copy with a new key", &d)
	check("many keys, original", big)
}
