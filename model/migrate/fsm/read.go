package fsm

import (
	"shardsim/model/bugs"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// ReadRoute returns the route a read of route-key span s must be served
// under: the group must own the route (Active or WriteFenced) in its view,
// and the route must cover s entirely.
func (f *FSM) ReadRoute(s keys.Span) (catalog.Route, error) {
	r, ok := f.View.Lookup(s.Start)
	if !ok || r.Group != f.Group {
		return catalog.Route{}, errs.ErrWrongGroup
	}
	rs := r.Span()
	if !rs.Contains(s.Start) || (rs.End != "" && (s.End == "" || s.End > rs.End)) {
		return catalog.Route{}, errs.ErrWrongGroup
	}
	return r, nil
}

func (f *FSM) readMode() mvcc.ReadMode {
	if f.bugs.Has(bugs.MigrateStagedFirstRead) {
		return mvcc.StagedFirst
	}
	return mvcc.MergeNewest
}

func staging(r catalog.Route) mvcc.Staging {
	return mvcc.StagingOf(r.StagedVisible, r.MigrationJob)
}

// Read serves a point read of raw at ts, merging staged rows while the
// route's staged visibility is on.
func (f *FSM) Read(raw string, ts hlc.TS) (mvcc.Read, error) {
	rk := keys.RouteKey(raw)
	r, err := f.ReadRoute(keys.Span{Start: rk, End: keys.KeyAfter(rk)})
	if err != nil {
		return mvcc.Read{}, err
	}
	return f.Store.Get(raw, ts, staging(r), f.readMode()), nil
}

// Scan serves a scan of family fam over route keys in s at ts.
func (f *FSM) Scan(fam keys.Family, s keys.Span, ts hlc.TS, limit int) ([]mvcc.ScanRow, error) {
	r, err := f.ReadRoute(s)
	if err != nil {
		return nil, err
	}
	b := keys.BracketFor(fam, s)
	return f.Store.Scan(fam, b.Raw, s, ts, staging(r), f.readMode(), limit), nil
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
