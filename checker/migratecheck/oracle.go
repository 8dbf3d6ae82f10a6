package migratecheck

import (
	"sort"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/property"
	"shardsim/simclock"
)

// VersionOracle is the ground truth of a migration run: every version a
// user write created, taken from the state machine's apply events (first
// apply of each entry), with the operation that wrote it. Imports and
// promotions copy versions and never create one, so a correct store holds,
// for every key, exactly the oracle's versions.
type VersionOracle struct {
	keys   map[string][]mvcc.Version // raw key -> versions, newest first
	ops    map[string]AppliedWrite
	sorted []string // the keys, sorted; nil when stale
}

// AppliedWrite is one version the oracle knows, and when it was applied.
type AppliedWrite struct {
	Op    string
	Group int
	Key   string
	mvcc.Version
	At simclock.Time
}

// NewVersionOracle returns an empty oracle.
func NewVersionOracle() *VersionOracle {
	return &VersionOracle{keys: map[string][]mvcc.Version{}, ops: map[string]AppliedWrite{}}
}

// Add records a version a write created.
func (o *VersionOracle) Add(w AppliedWrite) {
	vs, seen := o.keys[w.Key]
	if !seen {
		o.sorted = nil
	}
	i := sort.Search(len(vs), func(i int) bool { return vs[i].TS <= w.TS })
	vs = append(vs, mvcc.Version{})
	copy(vs[i+1:], vs[i:])
	vs[i] = w.Version
	o.keys[w.Key] = vs
	o.ops[w.Op] = w
}

// Op returns the version op created, if it was applied.
func (o *VersionOracle) Op(op string) (AppliedWrite, bool) {
	w, ok := o.ops[op]
	return w, ok
}

// Newest returns key's newest version at or below ts.
func (o *VersionOracle) Newest(key string, ts hlc.TS) (mvcc.Version, bool) {
	vs := o.keys[key]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].TS <= ts })
	if i < len(vs) {
		return vs[i], true
	}
	return mvcc.Version{}, false
}

// Has reports whether key has exactly version v.
func (o *VersionOracle) Has(key string, v mvcc.Version) bool {
	for _, x := range o.keys[key] {
		if x == v {
			return true
		}
	}
	return false
}

// Keys returns every raw key written, sorted. The slice is shared.
func (o *VersionOracle) Keys() []string {
	if o.sorted == nil {
		o.sorted = make([]string, 0, len(o.keys))
		for k := range o.keys {
			o.sorted = append(o.sorted, k)
		}
		sort.Strings(o.sorted)
	}
	return o.sorted
}

// ReadObs is one successful point read: key at TS saw Found/Version.
type ReadObs struct {
	Op      string
	Key     string
	TS      hlc.TS
	Found   bool
	Version mvcc.Version
}

// ScanObs is one successful scan of a family over a route-key span at TS.
type ScanObs struct {
	Op     string
	Family keys.Family
	Span   keys.Span
	TS     hlc.TS
	Limit  int
	Rows   []mvcc.ScanRow
}

// CheckRead checks M.SnapshotReads for one point read.
func (o *VersionOracle) CheckRead(r ReadObs) *property.Violation {
	want, ok := o.Newest(r.Key, r.TS)
	vis := ok && want.VisibleAt(r.TS)
	switch {
	case vis != r.Found:
		if vis {
			return property.Violated(property.MSnapshotReads, "read %s of %s at %s found nothing; the newest version at or below is %s", r.Op, keys.Quote(r.Key), r.TS, want)
		}
		return property.Violated(property.MSnapshotReads, "read %s of %s at %s returned %s; nothing is visible there (newest %v %s)", r.Op, keys.Quote(r.Key), r.TS, r.Version, ok, want)
	case vis && want != r.Version:
		return property.Violated(property.MSnapshotReads, "read %s of %s at %s returned %s, want %s", r.Op, keys.Quote(r.Key), r.TS, r.Version, want)
	}
	return nil
}

// CheckScan checks M.SnapshotReads for a scan: every row is the newest
// visible version of its key, and no written key of the family in the span
// that is visible at TS is missing (unless the scan hit its limit).
func (o *VersionOracle) CheckScan(s ScanObs) *property.Violation {
	got := map[string]mvcc.Version{}
	for _, r := range s.Rows {
		if err := o.CheckRead(ReadObs{Op: s.Op, Key: r.Key, TS: s.TS, Found: true, Version: r.Version}); err != nil {
			return err
		}
		got[r.Key] = r.Version
	}
	if s.Limit > 0 && len(s.Rows) >= s.Limit {
		return nil
	}
	for _, k := range o.Keys() {
		if fam, _ := familyOf(k); fam != s.Family.Prefix() || !routedIn(k, s.Span.Start, s.Span.End) {
			continue
		}
		if _, ok := got[k]; ok {
			continue
		}
		if v, ok := o.Newest(k, s.TS); ok && v.VisibleAt(s.TS) {
			return property.Violated(property.MSnapshotReads, "scan %s of %s %s at %s missed %s %s", s.Op, s.Family, s.Span, s.TS, keys.Quote(k), v)
		}
	}
	return nil
}

// CheckImported checks that a copied row is a version some write created,
// unchanged (original timestamp, tombstone and expiry): M.SnapshotReads.
func (o *VersionOracle) CheckImported(job uint64, row mvcc.Row) *property.Violation {
	if !o.Has(row.Key, row.Version) {
		return property.Violated(property.MSnapshotReads, "job %d imported %s %s, which no write created", job, keys.Quote(row.Key), row.Version)
	}
	return nil
}

// AckedWrite is a write whose client got a commit timestamp.
type AckedWrite struct {
	Op  string
	Key string
	TS  hlc.TS
}

// CheckNoLostWrite checks M.NoLostWrite: each acknowledged write is still
// readable at its commit timestamp, where read answers as the key's owner
// does now (ok false: no owner could answer, which is not a loss). With
// spans, only writes whose route key lies in one of them are checked (an
// event that can only have touched those).
func (o *VersionOracle) CheckNoLostWrite(acked []AckedWrite, read func(key string, ts hlc.TS) (mvcc.Read, bool), when string, spans ...keys.Span) *property.Violation {
	for _, a := range acked {
		if len(spans) > 0 && !inAny(a.Key, spans) {
			continue
		}
		w, ok := o.Op(a.Op)
		if !ok || w.TS != a.TS {
			return property.Violated(property.MNoLostWrite, "write %s acknowledged at %s was never applied so (oracle %v %s)", a.Op, a.TS, ok, w.TS)
		}
		r, ok := read(a.Key, a.TS)
		if !ok {
			continue
		}
		if !r.Chosen || r.Version != w.Version {
			return property.Violated(property.MNoLostWrite, "%s: write %s of %s at %s reads back as %v %s", when, a.Op, keys.Quote(a.Key), a.TS, r.Chosen, r.Version)
		}
	}
	return nil
}

func inAny(raw string, spans []keys.Span) bool {
	for _, s := range spans {
		if routedIn(raw, s.Start, s.End) {
			return true
		}
	}
	return false
}
