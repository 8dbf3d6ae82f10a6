package fsm

import (
	"shardsim/model/bugs"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// ReadOpts is how the serving leader's route says a read must be answered:
// which job's staged rows to merge (0: none) and the oldest timestamp the
// route's data answers for.
type ReadOpts struct {
	Staging uint64
	MinRead hlc.TS
	Raw     keys.Span // a scan: only raw keys in it (zero: the whole bracket)
}

func (f *FSM) readMode() mvcc.ReadMode {
	if f.bugs.Has(bugs.MigrateStagedFirstRead) {
		return mvcc.StagedFirst
	}
	return mvcc.MergeNewest
}

func staging(job uint64) mvcc.Staging { return mvcc.StagingOf(job != 0, job) }

// readable refuses a read at ts below the compaction watermark or the
// route's oldest answerable timestamp.
func (f *FSM) readable(ts hlc.TS, o ReadOpts) error {
	if ts < f.CompactedTS || ts < o.MinRead {
		return errs.ErrCompacted
	}
	return nil
}

// Read serves a point read of raw at ts.
func (f *FSM) Read(raw string, ts hlc.TS, o ReadOpts) (mvcc.Read, error) {
	if err := f.readable(ts, o); err != nil {
		return mvcc.Read{}, err
	}
	if keys.Classify(raw) == keys.FamilyUser {
		if l, ok := f.lock(raw); ok && l.commit <= ts {
			return mvcc.Read{}, errs.ErrLocked
		}
	}
	return f.Store.Get(raw, ts, staging(o.Staging), f.readMode()), nil
}

// Scan serves a scan of family fam over route keys in s at ts.
func (f *FSM) Scan(fam keys.Family, s keys.Span, ts hlc.TS, o ReadOpts, limit int) ([]mvcc.ScanRow, error) {
	if err := f.readable(ts, o); err != nil {
		return nil, err
	}
	if fam == keys.FamilyUser {
		locked := false
		f.eachLock(s, func(_ string, l lockInfo) { locked = locked || l.commit <= ts })
		if locked {
			return nil, errs.ErrLocked
		}
	}
	b := keys.BracketFor(fam, s)
	if o.Raw != (keys.Span{}) {
		b.Raw = intersect(b.Raw, o.Raw)
	}
	st := staging(o.Staging)
	if f.bugs.Has(bugs.MigrateScanLiveOnly) {
		st = staging(0) // the wrong variant merges staged rows into point reads only
	}
	return f.Store.Scan(fam, b.Raw, s, ts, st, f.readMode(), limit), nil
}

// Export serves one export chunk from the applied state, in the mode the
// switched-on bugs dictate. Every row it returns maps into the moving span
// (asserted: a violation is an error, never a silent copy).
func (f *FSM) Export(req mvcc.ExportRequest) (mvcc.ExportResult, error) {
	switch {
	case f.bugs.Has(bugs.MigrateKeyOnlyCursor):
		req.Mode = mvcc.ExportKeyCursor
	case f.bugs.Has(bugs.MigrateReadVisibleExport):
		req.Mode = mvcc.ExportReadVisible
	}
	req.RawOnly = f.bugs.Has(bugs.MigrateRawRangeExport)
	res := f.Store.Export(req)
	for _, row := range res.Rows {
		if !req.Span.Contains(keys.RouteKey(row.Key)) {
			return mvcc.ExportResult{}, errs.ErrForeignRow
		}
	}
	return res, nil
}

// intersect returns the raw keys two spans share ("" ends are +inf).
func intersect(a, b keys.Span) keys.Span {
	out := a
	if b.Start > out.Start {
		out.Start = b.Start
	}
	if out.End == "" || b.End != "" && b.End < out.End {
		out.End = b.End
	}
	if out.End != "" && out.End < out.Start {
		out.End = out.Start
	}
	return out
}
