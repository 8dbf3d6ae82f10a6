package migratecheck

import (
	"shardsim/property"
	"sort"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/simclock"
)

// VersionOracle is the ground truth of a migration run: every version a
// write-like step created (client writes and range deletes, transaction
// commits with their commit records, rollback records), taken from the
// state machine's apply events (first apply of each entry), with the
// operation that wrote it and the group it landed on. Imports and
// promotions copy versions and never create one; transaction lock rows are
// not versions (they are drained, never moved). So a correct store holds,
// for every key, the oracle's versions (less what compaction may drop).
type VersionOracle struct {
	keys   map[string]*oracleKey
	byID   []*oracleKey // the same records by number
	ops    map[string]*opWrites
	sorted []string  // the keys, sorted; nil when stale
	info   []keyInfo // sorted's family and route keys; nil when stale
	// grown is the operation of every version added, in order (with
	// repeats): NoLostWriteChecker reads what was added since its last
	// pass, to index the new versions of acknowledged operations without
	// looking at every acknowledgement.
	grown []*opWrites

	// Where key and operation records come from, a chunk at a time
	// (records never move: they are cut from an array, never appended).
	keySlab []oracleKey
	opSlab  []opWrites
	// Room for keys' version lists beyond their first version (vsSlab
	// and bySlab are cut in step).
	vsSlab []mvcc.Version
	bySlab []opWrite
}

// oracleKey is a raw key's versions, newest first, the write that created
// each, and a small number of its own (NoLostWriteChecker's memo is
// indexed by it).
type oracleKey struct {
	vs    []mvcc.Version
	by    []opWrite // by[i] created vs[i]
	id    int32
	first [1]mvcc.Version // vs's array while the key has one version (many keys never get a second)
	byOne [1]opWrite      // by's array meanwhile
}

// newestAtOrBelow returns the key's newest version at or below ts.
func (k *oracleKey) newestAtOrBelow(ts hlc.TS) (mvcc.Version, bool) {
	vs := k.vs // newest first
	i := sort.Search(len(vs), func(i int) bool { return vs[i].TS <= ts })
	if i < len(vs) {
		return vs[i], true
	}
	return mvcc.Version{}, false
}

// versions returns key's versions, newest first (shared).
func (o *VersionOracle) versions(key string) []mvcc.Version {
	if k := o.keys[key]; k != nil {
		return k.vs
	}
	return nil
}

// opWrites is every version one operation created, in apply order, with
// each one's key number.
type opWrites struct {
	ws  []AppliedWrite
	ids []int32
	id  int32 // the operation's number, in order of first version
	// ws's and ids's arrays while the operation has one version (most
	// have): one allocation per operation rather than three.
	firstW  [1]AppliedWrite
	firstID [1]int32
}

// opWrite is one version of an operation: ws[i] of op.
type opWrite struct {
	op *opWrites
	i  int32
}

// AppliedWrite is one version the oracle knows, and when it was applied.
type AppliedWrite struct {
	Op    string
	Group int
	Key   string
	mvcc.Version
	At simclock.Time
}

// oracleSizeHint sizes an oracle's maps and log at once: room for this
// many operations (and versions), and a quarter as many keys. A migration
// run creates one or two hundred versions, and growing the maps step by
// step from empty costs more than the room.
const oracleSizeHint = 128

// Slab sizes: how many key and operation records an oracle allocates at
// once (a migration run has some dozens of keys and about a hundred
// operations).
const (
	keySlabChunk = 16
	opSlabChunk  = 32
	// A key that gets a second version gets room for versionRoomMin
	// (most keys of a run have a few); the version slabs hold
	// versionSlabChunk at a time.
	versionRoomMin   = 4
	versionSlabChunk = 64
)

// NewVersionOracle returns an empty oracle.
func NewVersionOracle() *VersionOracle {
	return &VersionOracle{keys: make(map[string]*oracleKey, oracleSizeHint/4), ops: make(map[string]*opWrites, oracleSizeHint),
		grown: make([]*opWrites, 0, oracleSizeHint)}
}

// Add records a version a write created.
func (o *VersionOracle) Add(w AppliedWrite) {
	k := o.keys[w.Key]
	if k == nil {
		o.sorted = nil
		k = o.newKey()
		o.keys[w.Key] = k
		o.byID = append(o.byID, k)
	}
	op := o.ops[w.Op]
	if op == nil {
		op = o.newOp()
		o.ops[w.Op] = op
	}
	op.ws = append(op.ws, w)
	op.ids = append(op.ids, k.id)
	o.grown = append(o.grown, op)
	// Newest first; a version at the timestamp of one already known goes
	// before it, so At finds the last one added.
	vs := k.vs
	i := sort.Search(len(vs), func(i int) bool { return vs[i].TS <= w.TS })
	if len(k.vs) == cap(k.vs) || len(k.by) == cap(k.by) {
		o.moveVersions(k)
	}
	k.vs = insertAt(k.vs, i, w.Version)
	k.by = insertAt(k.by, i, opWrite{op, int32(len(op.ws) - 1)})
}

// moveVersions gives key k's full version lists twice the room (at least
// versionRoomMin), cut from the oracle's slabs rather than grown by append
// (a growslice per doubling of each list was a quarter of Add's cost). As
// with append, lists handed out before stay shared only until the next
// version of their key moves them (Versions says shared).
func (o *VersionOracle) moveVersions(k *oracleKey) {
	n := max(versionRoomMin, 2*len(k.vs))
	if len(o.vsSlab) < n {
		o.vsSlab = make([]mvcc.Version, max(n, versionSlabChunk))
		o.bySlab = make([]opWrite, max(n, versionSlabChunk))
	}
	// Three-index slices: a list that fills its room must move again, never
	// append into the next key's room.
	k.vs = append(o.vsSlab[:0:n], k.vs...)
	k.by = append(o.bySlab[:0:n], k.by...)
	o.vsSlab, o.bySlab = o.vsSlab[n:], o.bySlab[n:]
}

// insertAt inserts v at s[i]: slices.Insert of one value, which takes it
// as a variadic slice that escapes (an allocation per call: two per
// version the oracle learns), written as one append and one shift.
func insertAt[T any](s []T, i int, v T) []T {
	s = append(s, v)
	copy(s[i+1:], s[i:len(s)-1])
	s[i] = v
	return s
}

// newKey returns a new key record, numbered next, from the slab.
func (o *VersionOracle) newKey() *oracleKey {
	if len(o.keySlab) == 0 {
		o.keySlab = make([]oracleKey, keySlabChunk)
	}
	k := &o.keySlab[0]
	o.keySlab = o.keySlab[1:]
	k.id = int32(len(o.byID))
	k.vs, k.by = k.first[:0], k.byOne[:0]
	return k
}

// newOp returns a new, empty operation record from the slab.
func (o *VersionOracle) newOp() *opWrites {
	if len(o.opSlab) == 0 {
		o.opSlab = make([]opWrites, opSlabChunk)
	}
	op := &o.opSlab[0]
	o.opSlab = o.opSlab[1:]
	op.ws, op.ids = op.firstW[:0], op.firstID[:0]
	op.id = int32(len(o.ops)) // Add records it in ops next, as newKey's key in byID
	return op
}

// Op returns the (first) version op created, if it was applied.
func (o *VersionOracle) Op(op string) (AppliedWrite, bool) {
	ws := o.OpWrites(op)
	if len(ws) == 0 {
		return AppliedWrite{}, false
	}
	return ws[0], true
}

// OpOn returns the version op created of key, if any.
func (o *VersionOracle) OpOn(op, key string) (AppliedWrite, bool) {
	for _, w := range o.OpWrites(op) {
		if w.Key == key {
			return w, true
		}
	}
	return AppliedWrite{}, false
}

// OpWrites returns every version op created (a transaction: one per key,
// and its commit record; a range delete: one tombstone per key).
func (o *VersionOracle) OpWrites(op string) []AppliedWrite {
	if w := o.ops[op]; w != nil {
		return w.ws
	}
	return nil
}

// At returns the write that created key's version at ts (the last one
// added, if several had that timestamp).
func (o *VersionOracle) At(key string, ts hlc.TS) (AppliedWrite, bool) {
	if w := o.keys[key].writerAt(ts); w != nil {
		return *w, true
	}
	return AppliedWrite{}, false
}

// writerAt returns the write that created the key's version at ts (the
// last one added, if several had that timestamp), nil if none did; k nil
// is a key with no versions. Shared: At for a caller that already holds
// the key's record and wants no copy.
func (k *oracleKey) writerAt(ts hlc.TS) *AppliedWrite {
	if k == nil {
		return nil
	}
	vs := k.vs
	i := sort.Search(len(vs), func(i int) bool { return vs[i].TS <= ts })
	if i == len(vs) || vs[i].TS != ts {
		return nil
	}
	w := k.by[i]
	return &w.op.ws[w.i]
}

// Versions returns key's versions, newest first (shared).
func (o *VersionOracle) Versions(key string) []mvcc.Version { return o.versions(key) }

// Newest returns key's newest version at or below ts.
func (o *VersionOracle) Newest(key string, ts hlc.TS) (mvcc.Version, bool) {
	vs := o.versions(key)
	i := sort.Search(len(vs), func(i int) bool { return vs[i].TS <= ts })
	if i < len(vs) {
		return vs[i], true
	}
	return mvcc.Version{}, false
}

// Has reports whether key has exactly version v.
func (o *VersionOracle) Has(key string, v mvcc.Version) bool {
	for _, x := range o.versions(key) {
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
		o.info = nil
	}
	return o.sorted
}

// keyInfo is a written raw key with its family prefix and route key (ok:
// it has one), worked out once for the scans that look at every key.
type keyInfo struct {
	key, family, route string
	routed             bool
}

// inFamilySpan reports whether the key is of the family with prefix family
// and routed into [start, end) (familyPrefix and routedIn of the key).
func (k keyInfo) inFamilySpan(family, start, end string) bool {
	return k.family == family && k.routed && inSpan(k.route, start, end)
}

// keyInfos returns Keys with their families and route keys. Shared.
func (o *VersionOracle) keyInfos() []keyInfo {
	ks := o.Keys()
	if o.info == nil {
		o.info = make([]keyInfo, len(ks))
		for i, k := range ks {
			fam, _ := familyOf(k)
			rk, ok := routeKeyOf(k)
			o.info[i] = keyInfo{key: k, family: fam, route: rk, routed: ok}
		}
	}
	return o.info
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
	for _, r := range s.Rows {
		if err := o.CheckRead(ReadObs{Op: s.Op, Key: r.Key, TS: s.TS, Found: true, Version: r.Version}); err != nil {
			return err
		}
	}
	if scanCutShort(s) {
		return nil
	}
	got := newRowFinder(s.Rows)
	fam := s.Family.Prefix()
	for _, ki := range o.keyInfos() {
		k := ki.key
		if !ki.inFamilySpan(fam, s.Span.Start, s.Span.End) {
			continue
		}
		if _, ok := got.find(k); ok {
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

// AckedWrite is a write whose client got a commit timestamp. A range
// delete's client does not know which keys it deleted: Key is empty and
// the oracle says (every version of the operation).
type AckedWrite struct {
	Op     string
	Key    string
	TS     hlc.TS
	Return simclock.Time // when the client got the answer
}

// OwnerRead is how the key's current owner answers a read at ts: the
// version it chooses, and the oldest timestamp it answers for at all
// (compaction, or a moved route's inherited watermark); ok false when no
// owner could answer.
type OwnerRead func(key string, ts hlc.TS) (r mvcc.Read, floor hlc.TS, ok bool)

// CheckNoLostWrite checks M.NoLostWrite: each acknowledged write is still
// readable at its commit timestamp, where read answers as the key's owner
// does now, until a later write to the same key supersedes it (below the
// owner's compaction floor a superseded version may be gone, and a version
// hiding nothing there may read as nothing). With spans, only writes whose
// route key lies in one of them are checked (an event that can only have
// touched those).
func (o *VersionOracle) CheckNoLostWrite(acked []AckedWrite, read OwnerRead, when string, spans ...keys.Span) *property.Violation {
	for _, a := range acked {
		ws := o.OpWrites(a.Op)
		if skip, v := ackApplied(a, ws); skip || v != nil {
			if v != nil {
				return v
			}
			continue
		}
		for i := range ws {
			w := &ws[i]
			if a.Key != "" && w.Key != a.Key {
				continue
			}
			if len(spans) > 0 && !inAny(w.Key, spans) {
				continue
			}
			if err := o.readBack(w, read, when); err != nil {
				return err
			}
		}
	}
	return nil
}

// ackApplied judges the oracle's versions ws of acknowledged write a:
// skip when there is nothing to read back (a range delete that found
// nothing to delete), a violation when the write was never applied at the
// timestamp its client was given.
func ackApplied(a AckedWrite, ws []AppliedWrite) (skip bool, v *property.Violation) {
	if a.Key == "" && len(ws) == 0 {
		return true, nil
	}
	if len(ws) == 0 || ws[0].TS != a.TS {
		return false, property.Violated(property.MNoLostWrite, "write %s acknowledged at %s was never applied so (oracle %d versions)", a.Op, a.TS, len(ws))
	}
	return false, nil
}

// readBack checks that w reads back from the key's owner. It reads at
// w.TS first (which also gives the floor); below the floor it reads again
// at the floor and uses only that answer.
func (o *VersionOracle) readBack(w *AppliedWrite, read OwnerRead, when string) *property.Violation {
	r, floor, ok := read(w.Key, w.TS)
	if !ok {
		return nil
	}
	at := w.TS
	if at < floor {
		for _, v := range o.versions(w.Key) {
			if v.TS > w.TS && v.TS <= floor {
				return nil // superseded below the floor: compaction may drop it
			}
		}
		at = floor
		if r, _, ok = read(w.Key, at); !ok {
			return nil
		}
		if !r.Chosen && !w.VisibleAt(at) {
			return nil // hides nothing at the floor: compaction may drop it
		}
	}
	if !r.Chosen || r.Version != w.Version {
		return property.Violated(property.MNoLostWrite, "%s: write %s of %s at %s reads back at %s as %v %s", when, w.Op, keys.Quote(w.Key), w.TS, at, r.Chosen, r.Version)
	}
	return nil
}

// inAny reports whether raw's route key lies in any of spans (routedIn for
// each, with the route key found once).
func inAny(raw string, spans []keys.Span) bool {
	if len(spans) == 0 {
		return false
	}
	rk, ok := routeKeyOf(raw)
	return ok && routeInAny(rk, spans)
}

// routeInAny reports whether route key rk lies in any of spans.
func routeInAny(rk string, spans []keys.Span) bool {
	for _, s := range spans {
		if inSpan(rk, s.Start, s.End) {
			return true
		}
	}
	return false
}
