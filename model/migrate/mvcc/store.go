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
type Store struct {
	keys []string             // sorted
	vers map[string][]Version // newest first; never empty
	n    int                  // number of versions
}

// New returns an empty store.
func New() *Store { return &Store{vers: map[string][]Version{}} }

// Clone returns a deep copy of the store.
func (s *Store) Clone() *Store {
	n := &Store{keys: append([]string(nil), s.keys...), vers: make(map[string][]Version, len(s.vers)), n: s.n}
	for k, vs := range s.vers {
		n.vers[k] = append([]Version(nil), vs...)
	}
	return n
}

// Len returns the number of versions held.
func (s *Store) Len() int { return s.n }

// Keys returns the number of raw keys held.
func (s *Store) Keys() int { return len(s.keys) }

// Put inserts v under key. A version with the same timestamp is replaced
// (the store never holds two versions of a key at one timestamp). It
// reports whether a version was added rather than replaced.
func (s *Store) Put(key string, v Version) bool {
	vs, ok := s.vers[key]
	if !ok {
		i := sort.SearchStrings(s.keys, key)
		s.keys = append(s.keys, "")
		copy(s.keys[i+1:], s.keys[i:])
		s.keys[i] = key
	}
	i := sort.Search(len(vs), func(i int) bool { return vs[i].TS <= v.TS })
	if i < len(vs) && vs[i].TS == v.TS {
		vs[i] = v
		return false
	}
	vs = append(vs, Version{})
	copy(vs[i+1:], vs[i:])
	vs[i] = v
	s.vers[key] = vs
	s.n++
	return true
}

// Has reports whether key holds exactly version v (same timestamp and
// contents).
func (s *Store) Has(key string, v Version) bool {
	got, ok := s.At(key, v.TS)
	return ok && got == v
}

// At returns key's version with timestamp exactly ts.
func (s *Store) At(key string, ts hlc.TS) (Version, bool) {
	vs := s.vers[key]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].TS <= ts })
	if i < len(vs) && vs[i].TS == ts {
		return vs[i], true
	}
	return Version{}, false
}

// Newest returns key's newest version with TS <= ts, tombstones included.
func (s *Store) Newest(key string, ts hlc.TS) (Version, bool) {
	vs := s.vers[key]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].TS <= ts })
	if i < len(vs) {
		return vs[i], true
	}
	return Version{}, false
}

// Versions returns key's versions, newest first. The slice is shared.
func (s *Store) Versions(key string) []Version { return s.vers[key] }

// Delete removes key's version at ts, reporting whether it existed.
func (s *Store) Delete(key string, ts hlc.TS) bool {
	vs := s.vers[key]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].TS <= ts })
	if i >= len(vs) || vs[i].TS != ts {
		return false
	}
	vs = append(vs[:i:i], vs[i+1:]...)
	s.n--
	if len(vs) == 0 {
		s.dropKey(key)
		return true
	}
	s.vers[key] = vs
	return true
}

// DeleteAtOrBelow removes key's versions with TS <= ts and returns how many.
func (s *Store) DeleteAtOrBelow(key string, ts hlc.TS) int {
	vs := s.vers[key]
	return s.truncate(key, vs, sort.Search(len(vs), func(i int) bool { return vs[i].TS <= ts }))
}

// DeleteBelow removes key's versions with TS < ts and returns how many.
func (s *Store) DeleteBelow(key string, ts hlc.TS) int {
	vs := s.vers[key]
	return s.truncate(key, vs, sort.Search(len(vs), func(i int) bool { return vs[i].TS < ts }))
}

// truncate keeps key's versions vs[:i] (vs is newest first, so what goes
// is the oldest) and returns how many it removed.
func (s *Store) truncate(key string, vs []Version, i int) int {
	n := len(vs) - i
	if n == 0 {
		return 0
	}
	s.n -= n
	if i == 0 {
		s.dropKey(key)
		return n
	}
	s.vers[key] = vs[:i:i]
	return n
}

func (s *Store) dropKey(key string) {
	delete(s.vers, key)
	i := sort.SearchStrings(s.keys, key)
	if i < len(s.keys) && s.keys[i] == key {
		s.keys = append(s.keys[:i], s.keys[i+1:]...)
	}
}

// Ascend calls f for every key in [start, end) ("" end: no bound) in order,
// with its versions newest first, until f returns false. f must not change
// the store.
func (s *Store) Ascend(start, end string, f func(key string, vs []Version) bool) {
	for i := sort.SearchStrings(s.keys, start); i < len(s.keys); i++ {
		k := s.keys[i]
		if end != "" && k >= end {
			return
		}
		if !f(k, s.vers[k]) {
			return
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
