package listdelta

import (
	"shardsim/model/bugs"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// resolved is a collection's metadata at an attempt's snapshot: the base
// row (if any) plus every unapplied delta.
type resolved struct {
	Meta
	base   Meta
	exists bool           // a base row or a delta exists
	hasRow bool           // the base row exists
	deltas []mvcc.ScanRow // the deltas read, in key order
}

// resolve reads kind's metadata of uk at the attempt's snapshot: the base
// row (not in the read set: writers never conflict on it, seed 001) and
// the deltas, at most limit of them (0: all). With limit, finding that
// many fails with ErrDeltaScanTruncated, since the rest cannot be summed
// (seed 001, rounds 1 and 4); the no-truncation-check variant sums what it
// found.
func (a *attempt) resolve(kind Kind, uk string, limit int) (resolved, error) {
	var r resolved
	b, err := a.get(a.s.lay.metaKey(kind, uk), false)
	if err != nil {
		return r, err
	}
	if b.Found {
		m, err := DecodeMeta(b.Version.Value)
		if err != nil {
			return r, err
		}
		r.base, r.hasRow, r.exists = m, true, true
	}
	fam, span := a.s.lay.deltaSpan(kind, uk)
	rows, err := a.scan(fam, uk, span, limit, false)
	if err != nil {
		return r, err
	}
	if limit > 0 && len(rows) >= limit {
		a.s.stats.Truncated++
		if a.s.OnTruncated != nil {
			a.s.OnTruncated(kind, uk)
		}
		if !a.s.bugs.Has(bugs.ListdeltaNoTruncationCheck) {
			return r, ErrDeltaScanTruncated
		}
	}
	return r.fold(rows)
}

// fold adds delta rows to the resolution.
func (r resolved) fold(rows []mvcc.ScanRow) (resolved, error) {
	r.Meta = r.base
	for _, row := range rows {
		d, err := DecodeMeta(row.Value)
		if err != nil {
			return r, err
		}
		r.Meta = r.Meta.Add(d)
	}
	r.deltas = rows
	r.exists = r.exists || len(rows) > 0
	return r, nil
}

// resolveLimit is the resolution every command uses.
func (a *attempt) resolveLimit(kind Kind, uk string) (resolved, error) {
	return a.resolve(kind, uk, a.s.cfg.MaxDeltaScanLimit)
}

// item reads the item at position seq of list uk (at the snapshot, or at
// the latest timestamp in the torn-snapshot variant).
func (a *attempt) item(uk string, seq int64, register bool) (mvcc.Read, error) {
	k := a.s.lay.itemKey(uk, seq)
	if a.s.bugs.Has(bugs.ListdeltaRangeTornSnapshot) && !register {
		return a.getLatest(k)
	}
	return a.get(k, register)
}

// claims reads the claimed positions of list uk in [lo, hi).
func (a *attempt) claims(uk string, lo, hi int64, register bool) (map[int64]bool, error) {
	out := map[int64]bool{}
	if hi <= lo {
		return out, nil
	}
	span := a.s.lay.posSpan(keys.FamilyListClaim, uk, lo, hi)
	var rows []mvcc.ScanRow
	var err error
	if a.s.bugs.Has(bugs.ListdeltaRangeTornSnapshot) && !register {
		rows, _, err = a.scanLatest(keys.FamilyListClaim, uk, span)
	} else {
		rows, err = a.scan(keys.FamilyListClaim, uk, span, 0, register)
	}
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		if p, ok := posOf(row.Key); ok {
			out[p] = true
		}
	}
	return out, nil
}
