// Package mvcc is a group's multi-version store: every committed version of
// a raw key, keyed by (raw key, commit timestamp), tombstones and TTL
// expiries included. It offers the reads a group serves (point and scan at a
// timestamp, merged over staged and live data), the chunked, resumable
// export a migration copies with, and the raw edits that import, promotion
// and cleanup make.
//
// The store is a plain value with ordered iteration: keys are kept sorted
// and each key's versions newest first, so no map order reaches a result.
package mvcc

import (
	"sort"
	"strconv"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/internal/slab"
	"shardsim/model/migrate/keys"
)

// Version is one committed version of a raw key.
type Version struct {
	TS        hlc.TS
	Value     string
	Tombstone bool
	ExpireAt  hlc.TS // 0: never; else invisible to reads at or after ExpireAt
}

// VisibleAt reports whether a read at ts that chose this version sees a
// value (not a tombstone, not expired).
func (v Version) VisibleAt(ts hlc.TS) bool {
	return !v.Tombstone && (v.ExpireAt == 0 || ts < v.ExpireAt)
}

// String renders the version compactly.
func (v Version) String() string {
	s := "@" + v.TS.String()
	if v.Tombstone {
		return s + " tombstone"
	}
	s += " " + strconv.Quote(v.Value)
	if v.ExpireAt != 0 {
		s += " exp=" + v.ExpireAt.String()
	}
	return s
}

// Row is a version with its raw key, the unit of export and import.
type Row struct {
	Key string
	Version
}

// Store holds versions by raw key.
//
// Each key's versions sit in a record of their own, so a write to a key the
// store holds changes no map. The record also carries the key's generation:
// a store-wide counter value taken at the key's last change, which lets an
// observer tell in O(1) that a key is exactly as it last saw it (Gen).
type Store struct {
	order  keyOrder                // the keys in order with their records (ordered walks look nothing up)
	vers   map[string]*keyVersions // the same records by key, none empty; nil until the first key (see New)
	n      int                     // number of versions
	gen    uint64                  // the last generation handed out
	added  uint64                  // how many times a key the store did not hold was added (see Probe)
	recs   slab.Slab[keyVersions]  // where new keys' records come from (see newRecord)
	spare  [maxSpare]*keyVersions  // records of dropped keys, handed out again first
	nspare int                     // how many of spare are held
	// scratch builds staged keys that are only looked up (stagedRecord).
	// Reads use it too, so a store is not safe for concurrent use, not even
	// by readers only (nothing in a world runs concurrently).
	scratch []byte
}

// keyVersions is one key's versions, newest first, and its generation.
// Most keys (locks, transaction records, staged rows) only ever hold one
// version: it lives in the record itself until a second arrives.
type keyVersions struct {
	vs    []Version
	gen   uint64
	first [1]Version
}

// maxSpare is the most records of dropped keys a store keeps for reuse:
// keys are dropped a few at a time (a transaction's locks at its commit, a
// promotion batch's staged rows) and new ones follow soon, so a few slots
// (no growing list to allocate) catch most of them.
const maxSpare = 8

// newRecord returns an empty record: a dropped key's if there is one (lock
// rows and staged rows come and go by the hundred in a run), else a fresh
// one carved from a chunk (a key's first version lives in its record, so a
// store that grows by many keys would otherwise allocate once per key). A
// record belongs to one key at a time.
func (s *Store) newRecord() *keyVersions {
	if s.nspare > 0 {
		s.nspare--
		kv := s.spare[s.nspare]
		s.spare[s.nspare] = nil
		return kv
	}
	kv := s.recs.New()
	kv.vs = kv.first[:0]
	return kv
}

// New returns an empty store. Its key map is made by the first Put: a
// migrate world builds a store for every voter, and Bootstrap replaces all
// but the first voter's of each group with a copy before any is written,
// so making the map up front would be wasted (about 12 KB a world).
func New() *Store { return &Store{} }

// Clone returns a deep copy of the store.
func (s *Store) Clone() *Store {
	// The copy keeps taking keys (a voter's store grows): its map starts
	// with at least a new store's room, not rehashing on its next key.
	n := &Store{vers: make(map[string]*keyVersions, max(len(s.vers), newStoreKeys)), n: s.n, gen: s.gen}
	// One array of records and one of versions for all keys (a snapshot
	// copies every key at once); each key's versions are a full slice of
	// the array, so its next Put reallocates rather than running into the
	// next key's.
	recs := make([]keyVersions, len(s.vers))
	vers := make([]Version, 0, s.n)
	r := 0
	n.order.blocks = make([]*block, 0, len(s.order.blocks))
	for _, bl := range s.order.blocks {
		nb := newBlock(max(len(bl.keys), firstBlockRoom), bl.keys, bl.recs)
		for i, kv := range bl.recs {
			c := &recs[r]
			r++
			at := len(vers)
			vers = append(vers, kv.vs...)
			c.vs, c.gen = vers[at:len(vers):len(vers)], kv.gen
			nb.recs[i], n.vers[bl.keys[i]] = c, c
		}
		n.order.blocks = append(n.order.blocks, nb)
	}
	return n
}

// Len returns the number of versions held.
func (s *Store) Len() int { return s.n }

// Keys returns the number of raw keys held.
func (s *Store) Keys() int { return len(s.vers) }

// Gen returns key's generation: 0 while the store holds no version of it,
// else a number no other content of key in this store has had (every change
// to a key's versions takes the next value of a store-wide counter). Two
// calls on the same store that return the same number saw the same versions
// of key.
func (s *Store) Gen(key string) uint64 {
	if kv := s.vers[key]; kv != nil {
		return kv.gen
	}
	return 0
}

// versions returns key's versions (nil if none).
func (s *Store) versions(key string) []Version {
	if kv := s.vers[key]; kv != nil {
		return kv.vs
	}
	return nil
}

// stagedRecord returns the record of raw's staged twin under job (nil if
// the store holds no version of it). The staged key is built in scratch and
// looked up as string(scratch), which copies nothing: reads probe staged
// twins of every key they read.
func (s *Store) stagedRecord(job uint64, raw string) *keyVersions {
	s.scratch = append(keys.AppendStagePrefix(s.scratch[:0], job), raw...)
	return s.vers[string(s.scratch)]
}

// VersionsJoined returns the versions of the key prefix+rest, newest first
// (a shared slice, valid until the store next changes: see Versions),
// without making that key a string (see stagedRecord):
// for probes of derived keys, such as a user key's lock row.
func (s *Store) VersionsJoined(prefix, rest string) []Version {
	s.scratch = append(append(s.scratch[:0], prefix...), rest...)
	if kv := s.vers[string(s.scratch)]; kv != nil {
		return kv.vs
	}
	return nil
}

// StagedVersions returns the versions of raw's staged twin under job
// (keys.StageKey(job, raw)), newest first. The slice is shared, valid
// until the store next changes (see Versions).
func (s *Store) StagedVersions(job uint64, raw string) []Version {
	if kv := s.stagedRecord(job, raw); kv != nil {
		return kv.vs
	}
	return nil
}

// changed marks kv as just changed.
func (s *Store) changed(kv *keyVersions) {
	s.gen++
	kv.gen = s.gen
}

// Put inserts v under key. A version with the same timestamp is replaced
// (the store never holds two versions of a key at one timestamp). It
// reports whether a version was added rather than replaced.
func (s *Store) Put(key string, v Version) bool {
	kv := s.vers[key]
	if kv == nil {
		if s.vers == nil {
			s.vers = make(map[string]*keyVersions, newStoreKeys)
		}
		kv = s.newRecord()
		s.order.insert(key, kv)
		s.vers[key] = kv
		s.added++
	}
	s.changed(kv)
	vs := kv.vs
	i := atOrBelow(vs, v.TS)
	if i < len(vs) && vs[i].TS == v.TS {
		vs[i] = v
		return false
	}
	if len(vs) == cap(vs) {
		vs = grow(vs)
	}
	vs = vs[:len(vs)+1]
	if i < len(vs)-1 { // older versions to shift (a key's first version moves none)
		copy(vs[i+1:], vs[i:])
	}
	vs[i] = v
	kv.vs = vs
	s.n++
	return true
}

// minHeapVersions is the fewest versions a key's first heap slice holds:
// a key that outgrows the one version its record holds mostly keeps
// growing (hot keys, rows rewritten by every write), and append would
// grow it one step at a time from 1 (2, then 4).
const minHeapVersions = 4

// grow returns vs with room for at least one more version.
func grow(vs []Version) []Version {
	out := make([]Version, len(vs), max(minHeapVersions, 2*cap(vs)))
	copy(out, vs)
	return out
}

// atOrBelow returns the index of the first version of vs (newest first)
// with TS <= ts, len(vs) if none. Most calls ask about the newest version
// (a write above every version, a read at the latest timestamp): that is
// answered without the search.
func atOrBelow(vs []Version, ts hlc.TS) int {
	if len(vs) == 0 || vs[0].TS <= ts {
		return 0
	}
	return sort.Search(len(vs), func(i int) bool { return vs[i].TS <= ts })
}

// Has reports whether key holds exactly version v (same timestamp and
// contents).
func (s *Store) Has(key string, v Version) bool {
	got, ok := s.At(key, v.TS)
	return ok && got == v
}

// At returns key's version with timestamp exactly ts.
func (s *Store) At(key string, ts hlc.TS) (Version, bool) {
	vs := s.versions(key)
	i := atOrBelow(vs, ts)
	if i < len(vs) && vs[i].TS == ts {
		return vs[i], true
	}
	return Version{}, false
}

// Newest returns key's newest version with TS <= ts, tombstones included.
func (s *Store) Newest(key string, ts hlc.TS) (Version, bool) {
	return newestIn(s.versions(key), ts)
}

// newestIn returns the newest of vs (newest first) with TS <= ts.
func newestIn(vs []Version, ts hlc.TS) (Version, bool) {
	i := atOrBelow(vs, ts)
	if i < len(vs) {
		return vs[i], true
	}
	return Version{}, false
}

// Versions returns key's versions, newest first. The slice is shared and
// valid until the store next changes: Put, Delete and the truncations
// edit a key's versions in place (shifting them, clearing freed slots).
func (s *Store) Versions(key string) []Version { return s.versions(key) }

// Delete removes key's version at ts, reporting whether it existed.
func (s *Store) Delete(key string, ts hlc.TS) bool {
	kv := s.vers[key]
	if kv == nil {
		return false
	}
	vs := kv.vs
	i := atOrBelow(vs, ts)
	if i >= len(vs) || vs[i].TS != ts {
		return false
	}
	copy(vs[i:], vs[i+1:])
	vs[len(vs)-1] = Version{} // the slot may be reused; it keeps no value alive meanwhile
	vs = vs[:len(vs)-1]
	s.n--
	if len(vs) == 0 {
		s.dropKey(key, kv)
		return true
	}
	kv.vs = vs
	s.changed(kv)
	return true
}

// DeleteAtOrBelow removes key's versions with TS <= ts and returns how many.
func (s *Store) DeleteAtOrBelow(key string, ts hlc.TS) int {
	kv := s.vers[key]
	if kv == nil {
		return 0
	}
	return s.truncate(key, kv, atOrBelow(kv.vs, ts))
}

// DeleteBelow removes key's versions with TS < ts and returns how many.
func (s *Store) DeleteBelow(key string, ts hlc.TS) int {
	kv := s.vers[key]
	if kv == nil {
		return 0
	}
	vs := kv.vs
	return s.truncate(key, kv, sort.Search(len(vs), func(i int) bool { return vs[i].TS < ts }))
}

// truncate keeps the versions kv.vs[:i] of key, whose record is kv (newest
// first, so what goes is the oldest) and returns how many it removed.
func (s *Store) truncate(key string, kv *keyVersions, i int) int {
	vs := kv.vs
	n := len(vs) - i
	if n == 0 {
		return 0
	}
	s.n -= n
	if i == 0 {
		s.dropKey(key, kv)
		return n
	}
	clear(vs[i:]) // the slots may be reused by a later Put; they keep no value alive meanwhile
	kv.vs = vs[:i]
	s.changed(kv)
	return n
}

// dropKey forgets key, whose record is kv. The record is emptied (it keeps
// no value alive) and kept for a later new key (newRecord), which takes it
// with a new generation (Put marks it changed): the versions slices handed
// out for key were valid only until the store changed, and it just did.
// The record itself is marked changed too, so that a Probe holding it sees
// the key gone while the record waits for its next key.
func (s *Store) dropKey(key string, kv *keyVersions) {
	s.changed(kv)
	delete(s.vers, key)
	s.order.remove(key)
	clear(kv.vs)
	kv.first[0] = Version{} // the inline slot may hold a version kv.vs has moved from
	if cap(kv.vs) > len(kv.first) {
		kv.vs = kv.vs[:0] // the next key keeps the room this one grew
	} else {
		kv.vs = kv.first[:0]
	}
	if s.nspare < maxSpare {
		s.spare[s.nspare] = kv
		s.nspare++
	}
}

// Ascend calls f for every key in [start, end) ("" end: no bound) in order,
// with its versions newest first, until f returns false. f must not change
// the store.
func (s *Store) Ascend(start, end string, f func(key string, vs []Version) bool) {
	o := &s.order
	for p := o.seek(start); o.valid(p); p = o.next(p) {
		k := o.key(p)
		if end != "" && k >= end {
			return
		}
		if !f(k, o.rec(p).vs) {
			return
		}
	}
}

// EachWithHistory calls f, in key order, for every key that holds more
// than one version (what compaction may trim), with its versions newest
// first. f must not change the store. The keys with one version (most:
// locks, transaction records, staged rows) are passed over without a call.
func (s *Store) EachWithHistory(f func(key string, vs []Version)) {
	for _, bl := range s.order.blocks {
		for i, kv := range bl.recs {
			if len(kv.vs) > 1 {
				f(bl.keys[i], kv.vs)
			}
		}
	}
}

// KeysIn returns the keys in [start, end), in order.
func (s *Store) KeysIn(start, end string) []string {
	var out []string
	s.Ascend(start, end, func(k string, _ []Version) bool {
		out = append(out, k)
		return true
	})
	return out
}

// newStoreKeys is the room a new store's key map starts with: a voter's
// store grows to dozens of keys, and a map grown from empty rehashes every
// key at each doubling on the way (32 measured 0.6% fewer instructions on
// migrate 1-30; 64 saved little more for twice the memory).
const newStoreKeys = 32
