package fsm

import (
	"shardsim/model/bugs"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/hlc"
	jobpkg "shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

func (f *FSM) applyImport(im *Import) Result {
	k := importKey{im.Job, im.Bracket}
	st := f.imports[k]
	if f.aborted[im.Job] && !f.bugs.Has(bugs.MigrateImportAfterAbandon) {
		// A migrator that has not learned the job was abandoned (or a
		// delayed duplicate of one of its batches) must not leave staged
		// rows behind.
		return Result{Err: errs.ErrJobAborted, Cursor: st.cursor, Seq: st.seq}
	}
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
	for i, row := range im.Rows {
		f.Store.Put(im.stagedKey(i), row.Version)
		if row.TS > max {
			max = row.TS
		}
	}
	if len(im.Rows) > 0 && !f.bugs.Has(bugs.MigrateNoHLCAdvance) {
		f.observe(max)
	}
	// The batch's own cursor, not a copy: nothing changes a cursor's
	// bytes (they are only decoded; a new cursor replaces an old one), and
	// the result hands out the same bytes already.
	setIn(&f.imports, k, importState{seq: im.Seq, cursor: im.Cursor})
	return Result{Cursor: im.Cursor, Seq: im.Seq, Applied: len(im.Rows)}
}

// stagedKey returns the staged key of row i (keys.StageKey of the batch's
// job and the row's key). The keys are made once, by the batch's first
// apply, and shared by every voter that applies it: they depend on the
// batch alone, which never changes once proposed.
func (im *Import) stagedKey(i int) string {
	if len(im.staged) != len(im.Rows) {
		im.staged = make([]string, len(im.Rows))
		for j, row := range im.Rows {
			im.staged[j] = keys.StageKey(im.Job, row.Key)
		}
	}
	return im.staged[i]
}

// stageSpan returns keys.StageSpan(job), remembering the last job's: a
// migration's promotion batches all ask for the same one.
func (f *FSM) stageSpan(job uint64) keys.Span {
	if f.staged.job != job || f.staged.span.Start == "" {
		f.staged.job, f.staged.span = job, keys.StageSpan(job)
	}
	return f.staged.span
}

// ImportState returns the stored sequence number and cursor of a stream.
func (f *FSM) ImportState(job uint64, bracket uint32) (uint64, []byte) {
	st := f.imports[importKey{job, bracket}]
	return st.seq, st.cursor
}

// applyPromote moves the next batch of job p.Job's staged versions to
// live (d's batch, see Decision).
func (f *FSM) applyPromote(p *Promote, d *Decision) Result {
	if f.promoted[p.Job] {
		return Result{Done: true}
	}
	span := f.stageSpan(p.Job)
	if !d.made {
		d.work = f.promotionBatch(span, p.Max, d.work[:0])
	}
	n := 0
	for i := range d.work {
		it := &d.work[i]
		if !d.made {
			// Decided here, between the batch's own changes, as it always
			// was: an earlier version of the same key is put first.
			it.raw, _ = keys.Unstage(p.Job, it.staged)
			it.put = f.promotes(it.raw, it.v)
		}
		if it.put {
			f.Store.Put(it.raw, it.v)
			n++
		}
		f.Store.Delete(it.staged, it.v.TS)
	}
	if !d.made {
		d.done = !f.anyStaged(span)
	}
	if d.done {
		setIn(&f.promoted, p.Job, true)
	}
	return Result{Applied: n, Done: d.done}
}

// promotionBatch appends to work up to max staged versions of span (a
// job's staged keyspace), in key order, each key's oldest first.
func (f *FSM) promotionBatch(span keys.Span, max int, work []promotion) []promotion {
	if cap(work) < max {
		// A batch's room at once (a batch mostly fills it), not grown by
		// doubling from one; capped, as Max may be far above what is staged.
		work = make([]promotion, 0, min(max, maxBatchRoom))
	}
	f.Store.Ascend(span.Start, span.End, func(k string, vs []mvcc.Version) bool {
		for i := len(vs) - 1; i >= 0 && len(work) < max; i-- { // oldest first
			work = append(work, promotion{staged: k, v: vs[i]})
		}
		return len(work) < max
	})
	return work
}

// maxBatchRoom caps the room promotionBatch makes for a batch up front.
const maxBatchRoom = 64

// promotes reports whether promotion puts staged version v of raw live:
// not when live holds this exact version already (promoted before), nor,
// in the wrong variant, when a newer live version shadows it.
func (f *FSM) promotes(raw string, v mvcc.Version) bool {
	switch {
	case f.Store.Has(raw, v):
		return false
	case f.bugs.Has(bugs.MigratePromoteSkipsShadowed) && f.newerLive(raw, v.TS):
		return false
	}
	return true
}

func (f *FSM) newerLive(raw string, ts hlc.TS) bool {
	vs := f.Store.Versions(raw)
	return len(vs) > 0 && vs[0].TS > ts
}

// Promoted reports whether every staged row of job has been promoted.
func (f *FSM) Promoted(job uint64) bool { return f.promoted[job] }

// anyStaged reports whether a staged version remains in span (a job's
// staged keyspace): StagedRows(job) > 0 without counting them all, which
// after every promotion batch would scan the rest of the staged rows.
func (f *FSM) anyStaged(span keys.Span) bool {
	found := false
	f.Store.Ascend(span.Start, span.End, func(string, []mvcc.Version) bool {
		found = true
		return false
	})
	return found
}

// StagedRows returns how many staged versions of job remain.
func (f *FSM) StagedRows(job uint64) int {
	span := f.stageSpan(job)
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

// applyCleanup deletes the moved span's versions at or below the fence
// timestamp, in d's keys (the span's keys of every family, see Decision).
func (f *FSM) applyCleanup(c *Cleanup, d *Decision) Result {
	if !d.made {
		d.keys = d.keys[:0] // as the other lists: the decision is this apply's alone
		f.MovedRows(c.Moving, func(raw string, _ []mvcc.Version) { d.keys = append(d.keys, raw) })
	}
	n := 0
	for _, k := range d.keys {
		n += f.Store.DeleteAtOrBelow(k, c.FenceTS)
	}
	setIn(&f.cleaned, c.Job, true)
	return Result{Applied: n}
}

// Cleaned reports whether the job's source cleanup has been applied.
func (f *FSM) Cleaned(job uint64) bool { return f.cleaned[job] }

// applyAbandon deletes job's staged rows and import state and refuses the
// job's later imports.
func (f *FSM) applyAbandon(job uint64) Result {
	span := f.stageSpan(job)
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
	setIn(&f.aborted, job, true)
	return Result{Applied: len(victims)}
}

// Aborted reports whether job was abandoned here.
func (f *FSM) Aborted(job uint64) bool { return f.aborted[job] }

// Fences returns the armed cutover read fences.
func (f *FSM) Fences() []Guard { return f.fences }

// Fence returns job's armed read fence, if any.
func (f *FSM) Fence(job uint64) (Guard, bool) {
	for _, g := range f.fences {
		if g.Job == job {
			return g, true
		}
	}
	return Guard{}, false
}
