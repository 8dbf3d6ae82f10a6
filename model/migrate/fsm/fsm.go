package fsm

import (
	"fmt"

	"shardsim/model/bugs"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/hlc"
	jobpkg "shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// importKey identifies one import stream.
type importKey struct {
	job     uint64
	bracket uint32
}

type importState struct {
	seq    uint64
	cursor []byte
}

// FSM is one voter's applied state of a group.
type FSM struct {
	Group      int
	Store      *mvcc.Store
	View       catalog.Catalog
	LastCommit hlc.TS
	Ceiling    uint64 // physical ms
	Applied    uint64 // index of the last applied entry

	imports  map[importKey]importState
	promoted map[uint64]bool // job -> every staged row promoted
	cleaned  map[uint64]bool // job -> source versions deleted
	bugs     bugs.Set
}

// New returns the state of a fresh voter of group holding view.
func New(group int, view catalog.Catalog, set bugs.Set) *FSM {
	return &FSM{
		Group: group, Store: mvcc.New(), View: view.Clone(),
		imports: map[importKey]importState{}, promoted: map[uint64]bool{}, cleaned: map[uint64]bool{},
		bugs: set,
	}
}

// Apply applies the next entry. Entries must come in index order.
func (f *FSM) Apply(e Entry) Result {
	if e.Index != f.Applied+1 {
		panic(fmt.Sprintf("fsm: group %d applying %d after %d", f.Group, e.Index, f.Applied))
	}
	f.Applied = e.Index
	var r Result
	switch e.Kind {
	case KindWrite:
		r = f.applyWrite(e.Write)
	case KindCeiling:
		f.raiseCeiling(e.Ceiling)
	case KindCatalog:
		if e.Catalog.Version > f.View.Version {
			f.View = e.Catalog.Clone()
		}
	case KindImport:
		r = f.applyImport(e.Import)
	case KindFloor:
		if !f.bugs.Has(bugs.MigrateNoHLCAdvance) {
			f.observe(e.Floor)
		}
	case KindPromote:
		r = f.applyPromote(e.Promote)
	case KindCleanup:
		r = f.applyCleanup(e.Cleanup)
	case KindAbandonStaged:
		r = f.applyAbandon(e.Job)
	case KindBarrier:
	default:
		panic("fsm: unknown entry kind")
	}
	r.LastCommit, r.Version = f.LastCommit, f.View.Version
	r.Horizon = f.Horizon()
	return r
}

// Horizon returns the highest timestamp any leader of the group can have
// issued or observed (a read timestamp) so far: leaders stay at or below
// the ceiling, and commits at or below the last commit ts.
func (f *FSM) Horizon() hlc.TS {
	h := hlc.CeilingTop(f.Ceiling)
	if f.LastCommit > h {
		h = f.LastCommit
	}
	return h
}

func (f *FSM) raiseCeiling(ms uint64) {
	if ms > f.Ceiling {
		f.Ceiling = ms
	}
}

// observe makes t durable as a lower bound of every later commit ts.
func (f *FSM) observe(t hlc.TS) {
	if t > f.LastCommit {
		f.LastCommit = t
	}
	f.raiseCeiling(t.Phys())
}

// WriteCheck returns why the group would reject a write to raw, or nil: the
// route must be the group's, not WriteFenced, and the ts above its floor.
// hasVersion says whether the coordinator stamped a catalog version; the
// fence check runs regardless of it (unless the fence-needs-version bug).
func (f *FSM) WriteCheck(raw string, ts hlc.TS, hasVersion bool) error {
	r, ok := f.View.Lookup(keys.RouteKey(raw))
	if !ok || r.Group != f.Group {
		return errs.ErrWrongGroup
	}
	if r.State == catalog.WriteFenced && (hasVersion || !f.bugs.Has(bugs.MigrateFenceNeedsVersion)) {
		return errs.ErrWriteFenced
	}
	if r.MinWriteTSExclusive != 0 && ts <= r.MinWriteTSExclusive && !f.bugs.Has(bugs.MigrateNoHLCAdvance) {
		return errs.ErrBelowFloor
	}
	return nil
}

func (f *FSM) applyWrite(w *Write) Result {
	if err := f.WriteCheck(w.Key, w.TS, w.HasVersion); err != nil {
		return Result{Err: err}
	}
	v := mvcc.Version{TS: w.TS, Value: w.Value, Tombstone: w.Tombstone}
	if w.TTLms > 0 && !w.Tombstone {
		v.ExpireAt = w.TS + hlc.TS(w.TTLms<<hlc.LogicalBits)
	}
	f.Store.Put(w.Key, v)
	if w.TS > f.LastCommit {
		f.LastCommit = w.TS
	}
	return Result{TS: w.TS}
}

func (f *FSM) applyImport(im *Import) Result {
	k := importKey{im.Job, im.Bracket}
	st := f.imports[k]
	if im.Seq <= st.seq {
		return Result{Cursor: st.cursor, Seq: st.seq, Duplicate: true}
	}
	if im.Seq > st.seq+1 {
		return Result{Err: errs.ErrImportGap, Cursor: st.cursor, Seq: st.seq}
	}
	for _, row := range im.Rows {
		if !im.Moving.Contains(keys.RouteKey(row.Key)) {
			return Result{Err: errs.ErrForeignRow, Cursor: st.cursor, Seq: st.seq}
		}
	}
	var max hlc.TS
	for _, row := range im.Rows {
		f.Store.Put(keys.StageKey(im.Job, row.Key), row.Version)
		if row.TS > max {
			max = row.TS
		}
	}
	if len(im.Rows) > 0 && !f.bugs.Has(bugs.MigrateNoHLCAdvance) {
		f.observe(max)
	}
	f.imports[k] = importState{seq: im.Seq, cursor: append([]byte(nil), im.Cursor...)}
	return Result{Cursor: im.Cursor, Seq: im.Seq, Applied: len(im.Rows)}
}

// ImportState returns the stored sequence number and cursor of a stream.
func (f *FSM) ImportState(job uint64, bracket uint32) (uint64, []byte) {
	st := f.imports[importKey{job, bracket}]
	return st.seq, st.cursor
}

func (f *FSM) applyPromote(p *Promote) Result {
	if f.promoted[p.Job] {
		return Result{Done: true}
	}
	span := keys.StageSpan(p.Job)
	type item struct {
		staged string
		v      mvcc.Version
	}
	var work []item
	f.Store.Ascend(span.Start, span.End, func(k string, vs []mvcc.Version) bool {
		for i := len(vs) - 1; i >= 0 && len(work) < p.Max; i-- { // oldest first
			work = append(work, item{k, vs[i]})
		}
		return len(work) < p.Max
	})
	n := 0
	for _, it := range work {
		raw, _ := keys.Unstage(p.Job, it.staged)
		switch {
		case f.Store.Has(raw, it.v):
			// already promoted (live holds this exact version)
		case f.bugs.Has(bugs.MigratePromoteSkipsShadowed) && f.newerLive(raw, it.v.TS):
			// the wrong variant drops a staged version a newer live one shadows
		default:
			f.Store.Put(raw, it.v)
			n++
		}
		f.Store.Delete(it.staged, it.v.TS)
	}
	done := false
	if f.StagedRows(p.Job) == 0 {
		f.promoted[p.Job] = true
		done = true
	}
	return Result{Applied: n, Done: done}
}

func (f *FSM) newerLive(raw string, ts hlc.TS) bool {
	vs := f.Store.Versions(raw)
	return len(vs) > 0 && vs[0].TS > ts
}

// Promoted reports whether every staged row of job has been promoted.
func (f *FSM) Promoted(job uint64) bool { return f.promoted[job] }

// StagedRows returns how many staged versions of job remain.
func (f *FSM) StagedRows(job uint64) int {
	span := keys.StageSpan(job)
	n := 0
	f.Store.Ascend(span.Start, span.End, func(_ string, vs []mvcc.Version) bool {
		n += len(vs)
		return true
	})
	return n
}

// MovedRows calls fn for every raw key of the moving span (all families).
func (f *FSM) MovedRows(moving keys.Span, fn func(raw string, vs []mvcc.Version)) {
	for _, b := range keys.Brackets(moving) {
		f.Store.Ascend(b.Raw.Start, b.Raw.End, func(k string, vs []mvcc.Version) bool {
			if keys.InBracket(k, b, moving) {
				fn(k, vs)
			}
			return true
		})
	}
}

func (f *FSM) applyCleanup(c *Cleanup) Result {
	var victims []string
	f.MovedRows(c.Moving, func(raw string, _ []mvcc.Version) { victims = append(victims, raw) })
	n := 0
	for _, k := range victims {
		n += f.Store.DeleteAtOrBelow(k, c.FenceTS)
	}
	f.cleaned[c.Job] = true
	return Result{Applied: n}
}

// Cleaned reports whether the job's source cleanup has been applied.
func (f *FSM) Cleaned(job uint64) bool { return f.cleaned[job] }

func (f *FSM) applyAbandon(job uint64) Result {
	span := keys.StageSpan(job)
	type kv struct {
		k  string
		ts hlc.TS
	}
	var victims []kv
	f.Store.Ascend(span.Start, span.End, func(k string, vs []mvcc.Version) bool {
		for _, v := range vs {
			victims = append(victims, kv{k, v.TS})
		}
		return true
	})
	for _, v := range victims {
		f.Store.Delete(v.k, v.ts)
	}
	for pass := uint8(1); pass <= 2; pass++ {
		for _, fam := range keys.Families() {
			delete(f.imports, importKey{job, jobpkg.BracketID(pass, fam)})
		}
	}
	return Result{Applied: len(victims)}
}
