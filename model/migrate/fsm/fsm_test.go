package fsm

import (
	"errors"
	"testing"

	"shardsim/model/bugs"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

func base() catalog.Catalog {
	return catalog.Catalog{Version: 1, NextRouteID: 3, Routes: []catalog.Route{
		{ID: 1, Start: "", End: "k", Group: 0},
		{ID: 2, Start: "k", End: "", Group: 1},
	}}
}

// applier feeds entries with consecutive indexes.
type applier struct{ f *FSM }

func (a applier) apply(e Entry) Result {
	e.Index = a.f.Applied + 1
	return a.f.Apply(e)
}

func write(key string, ts hlc.TS, versioned bool) Entry {
	return Entry{Kind: KindWrite, Write: &Write{Key: key, Value: "v", TS: ts, HasVersion: versioned, Op: "op"}}
}

func TestWriteChecks(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		set := bugs.None
		if buggy {
			set = bugs.MustParse(bugs.MigrateFenceNeedsVersion)
		}
		a := applier{New(1, base(), set)}
		if r := a.apply(write("k1", 10, true)); r.Err != nil || r.TS != 10 || a.f.LastCommit != 10 {
			t.Fatalf("plain write: %+v", r)
		}
		if r := a.apply(write("a", 11, true)); !errors.Is(r.Err, errs.ErrWrongGroup) {
			t.Fatalf("write to another group's route: %v", r.Err)
		}
		fenced, moving, _ := base().Fence(2, "k5")
		a.apply(Entry{Kind: KindCatalog, Catalog: &fenced})
		if r := a.apply(write("k7", 12, true)); !errors.Is(r.Err, errs.ErrWriteFenced) {
			t.Fatalf("versioned write to a fenced route: %v", r.Err)
		}
		// Unconditional: no observed version, still rejected (unless the bug).
		r := a.apply(write(keys.Encode(keys.FamilyListItem, "k7", "1"), 13, false))
		if buggy != (r.Err == nil) {
			t.Fatalf("bug=%v: unversioned write to a fenced route: %v", buggy, r.Err)
		}
		if r := a.apply(write("k1", 14, false)); r.Err != nil {
			t.Fatalf("left part still writable: %v", r.Err)
		}
		cut, _ := fenced.Cutover(moving, 2, 9, 100)
		b := applier{New(2, cut, bugs.None)}
		if r := b.apply(write("k7", 100, true)); !errors.Is(r.Err, errs.ErrBelowFloor) {
			t.Fatalf("write at the floor: %v", r.Err)
		}
		if r := b.apply(write("k7", 101, true)); r.Err != nil {
			t.Fatalf("write above the floor: %v", r.Err)
		}
	}
}

func row(key string, ts hlc.TS) mvcc.Row {
	return mvcc.Row{Key: key, Version: mvcc.Version{TS: ts, Value: key}}
}

func imp(seq uint64, rows ...mvcc.Row) Entry {
	return Entry{Kind: KindImport, Import: &Import{Job: 9, Bracket: job.BracketID(1, keys.FamilyUser), Seq: seq, Rows: rows,
		Cursor: []byte{byte(seq)}, Moving: keys.Span{Start: "k5"}}}
}

func TestImportIsIdempotent(t *testing.T) {
	a := applier{New(2, base(), bugs.None)}
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
	nb := applier{New(2, base(), bugs.MustParse(bugs.MigrateNoHLCAdvance))}
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
		a := applier{New(2, base(), set)}
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
	src := applier{New(1, base(), bugs.None)}
	src.apply(write("k6", 10, true))
	src.apply(write("k6", 20, true))
	src.apply(write(keys.Encode(keys.FamilyTxnLock, "k6", ""), 15, true))
	src.apply(write("k1", 5, true))
	r := src.apply(Entry{Kind: KindCleanup, Cleanup: &Cleanup{Job: 9, Moving: keys.Span{Start: "k5"}, FenceTS: 15}})
	if r.Applied != 2 || !src.f.Cleaned(9) || src.f.Store.Len() != 2 {
		t.Fatalf("cleanup removed %d, %d left", r.Applied, src.f.Store.Len())
	}
}

func TestReadsAndAbandon(t *testing.T) {
	a := applier{New(2, base(), bugs.None)}
	if _, err := a.f.Read("k6", 10); !errors.Is(err, errs.ErrWrongGroup) {
		t.Fatal("read of a route the group does not own")
	}
	a.apply(imp(1, row("k6", 10)))
	fenced, moving, _ := base().Fence(2, "k5")
	cut, _ := fenced.Cutover(moving, 2, 9, 10)
	a.apply(Entry{Kind: KindCatalog, Catalog: &cut})
	r, err := a.f.Read("k6", 10)
	if err != nil || !r.Found || r.Version.Value != "k6" {
		t.Fatalf("merged read %+v %v", r, err)
	}
	if _, err := a.f.Scan(keys.FamilyUser, keys.Span{Start: "k1", End: "k9"}, 10, 0); !errors.Is(err, errs.ErrWrongGroup) {
		t.Fatal("a scan crossing the route's start was served")
	}
	rows, err := a.f.Scan(keys.FamilyUser, keys.Span{Start: "k5"}, 10, 0)
	if err != nil || len(rows) != 1 {
		t.Fatalf("scan %v %v", rows, err)
	}
	a.apply(Entry{Kind: KindAbandonStaged, Job: 9})
	if a.f.StagedRows(9) != 0 {
		t.Fatal("abandon left staged rows")
	}
	if seq, _ := a.f.ImportState(9, job.BracketID(1, keys.FamilyUser)); seq != 0 {
		t.Fatal("abandon left import state")
	}
	old := base()
	a.apply(Entry{Kind: KindCatalog, Catalog: &old})
	if a.f.View.Version != cut.Version {
		t.Fatal("the view moved backwards")
	}
}
