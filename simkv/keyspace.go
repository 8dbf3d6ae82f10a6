package simkv

import (
	"maps"
	"slices"
	"sort"
)

// entry is one write to a key: a put (a version, as read back but for the
// key, which its history holds once for all its writes) or a tombstone
// (version 0: a put's version is at least 1). Keeping the key and a tomb
// flag out makes an entry 64 bytes, not 104: histories hold every write
// of a run that never compacts.
type entry struct {
	value   []byte
	mod     int64 // the revision of the write
	sub     int64 // its position within the revision
	create  int64
	version int64 // 0 for a tombstone
	lease   int64
}

// tomb reports whether the entry is a delete.
func (e *entry) tomb() bool { return e.version == 0 }

// keyspace is the multi-version key index: every key that has a history,
// in byte order, with its writes in revision order. etcd keeps the same
// information in its in-memory tree index plus the backend.
type keyspace struct {
	keys []string           // sorted
	hist map[string]history // writes by ascending (mod, sub)
	cow  bool               // keys and hist may be shared with a clone: own them before changing
}

// history is one key's writes. Its entries are never modified once
// written, so clones of a store share them; tail lets the first clone to
// write the key again append in place (appendShared).
type history struct {
	key      string // the key, as the index holds it (so a write finds it without a copy)
	keyBytes []byte // the key as every version and event of it carries it (never changed)
	e        []entry
	tail     *sharedTail
}

func newKeyspace() keyspace { return keyspace{hist: map[string]history{}} }

// own makes a shared index this keyspace's own before a change, in
// O(keys). The copy still shares the histories (see history).
func (ks *keyspace) own() {
	if !ks.cow {
		return
	}
	ks.keys, ks.hist, ks.cow = append([]string(nil), ks.keys...), maps.Clone(ks.hist), false
}

// fork returns a copy of the index of its own, reading ks only (see
// Store.Fork): the histories are the same values without their tails, so
// the copy's next write to a key copies its entries.
func (ks keyspace) fork() keyspace {
	c := keyspace{keys: slices.Clone(ks.keys), hist: make(map[string]history, len(ks.hist))}
	for _, k := range ks.keys {
		h := ks.hist[k]
		h.tail = nil
		c.hist[k] = h
	}
	return c
}

// at returns the version of key visible at revision rev, and false when
// the key did not exist then (never written, or its last write was a
// delete). Its key and value share the store's bytes.
func (ks keyspace) at(key string, rev int64) (KeyValue, bool) {
	return ks.hist[key].visible(rev)
}

// atBytes is at for a key held as bytes; the map lookup converts it
// without allocating.
func (ks keyspace) atBytes(key []byte, rev int64) (KeyValue, bool) {
	return ks.hist[string(key)].visible(rev)
}

// visible returns the version of the key visible at rev, if any.
func (h history) visible(rev int64) (KeyValue, bool) {
	for i := len(h.e) - 1; i >= 0; i-- {
		if e := &h.e[i]; e.mod <= rev {
			if e.tomb() {
				return KeyValue{}, false
			}
			return KeyValue{Key: h.keyBytes, Value: e.value, CreateRevision: e.create, ModRevision: e.mod,
				Version: e.version, Lease: e.lease}, true
		}
	}
	return KeyValue{}, false
}

// span is a key range read once from etcd's key/range_end convention:
// the single key, every key >= key, or [key, end). Its bytes are the
// request's own: reading a request's range copies nothing, and a span kept
// beyond its request (a watcher's) must be made from copies.
type span struct {
	key, end []byte
	kind     spanKind
}

// spanKind is the shape of a span.
type spanKind uint8

const (
	spanSingle  spanKind = iota // the one key
	spanFromKey                 // every key >= key (range end "\x00")
	spanBetween                 // [key, end)
)

// spanOf reads etcd's key/range_end convention: an empty range end is the
// single key, "\x00" means from key, anything else is [key, end). This is
// the only place that reads it.
func spanOf(key, end []byte) span {
	switch {
	case len(end) == 0:
		return span{key: key, kind: spanSingle}
	case len(end) == 1 && end[0] == 0:
		return span{key: key, kind: spanFromKey}
	}
	return span{key: key, end: end, kind: spanBetween}
}

// empty reports whether no key can lie in the span: [key, end) with end
// at or below key.
func (sp span) empty() bool {
	return sp.kind == spanBetween && string(sp.end) <= string(sp.key)
}

// contains reports whether k lies in the span. The comparisons convert
// bytes to strings without allocating.
func (sp span) contains(k []byte) bool {
	switch sp.kind {
	case spanSingle:
		return string(k) == string(sp.key)
	case spanFromKey:
		return string(k) >= string(sp.key)
	}
	return string(k) >= string(sp.key) && string(k) < string(sp.end)
}

// inRange returns the keys with a history in the span, in byte order. The
// result shares the index: read it before the next change. Searching with
// the request's bytes, not a string copy of them, keeps a range read free
// of allocations until it has something to return.
func (ks keyspace) inRange(sp span) []string {
	lo := sort.Search(len(ks.keys), func(i int) bool { return ks.keys[i] >= string(sp.key) })
	rest := ks.keys[lo:]
	switch sp.kind {
	case spanSingle:
		if len(rest) == 0 || rest[0] != string(sp.key) {
			return nil
		}
		return rest[:1]
	case spanFromKey:
		return rest
	}
	return rest[:sort.Search(len(rest), func(i int) bool { return rest[i] >= string(sp.end) })]
}

// live returns the versions visible at rev in the span, in key order, at
// most limit of them when limit > 0 (none when limit < 0), and how many
// there are in all.
func (ks keyspace) live(sp span, rev int64, limit int) (kvs []KeyValue, count int) {
	if sp.kind == spanSingle {
		kv, ok := ks.atBytes(sp.key, rev)
		if !ok {
			return nil, 0
		}
		if limit >= 0 {
			kvs = []KeyValue{kv}
		}
		return kvs, 1
	}
	keys := ks.inRange(sp)
	room := len(keys) // at most one version per key
	if limit > 0 {
		room = min(room, limit)
	}
	for _, k := range keys {
		if kv, ok := ks.at(k, rev); ok {
			if limit == 0 || len(kvs) < limit {
				if kvs == nil {
					// Made on the first find: a range with nothing
					// live answers nil, not an empty slice (callers
					// and checkers compare answers deeply).
					kvs = make([]KeyValue, 0, room)
				}
				kvs = append(kvs, kv)
			}
			count++
		}
	}
	return kvs, count
}

// append records a write to key, adding the key to the sorted index if
// new, and returns the key as the index holds it (leases name their keys
// with that string) and as its versions carry it. Only a new key's string
// and bytes are made; they are copies, never the caller's bytes.
func (ks *keyspace) append(key []byte, e entry) (string, []byte) {
	h, ok := ks.hist[string(key)]
	return ks.appendTo(h, ok, key, e)
}

// appendTo is append for a caller that has looked the key's history up
// already (found: it exists): a put reads the live version from it first,
// and the key is hashed once less.
func (ks *keyspace) appendTo(h history, found bool, key []byte, e entry) (string, []byte) {
	ks.own() // the copy holds the same history values: h is still the key's
	if !found {
		h.key, h.keyBytes = string(key), cloneBytes(key)
		i, _ := slices.BinarySearch(ks.keys, h.key)
		ks.keys = slices.Insert(ks.keys, i, h.key)
	}
	h.e, h.tail = appendShared(h.e, h.tail, e)
	ks.hist[h.key] = h
	return h.key, h.keyBytes
}

// compact drops every write that no read at a revision >= rev can see: for
// each key, the writes before its last write at or below rev, and that last
// write too when it is a delete. Keys left without history leave the index.
func (ks *keyspace) compact(rev int64) {
	ks.own()
	kept := ks.keys[:0]
	for _, k := range ks.keys {
		hist := ks.hist[k]
		h := hist.e
		last := -1 // index of the last write at or below rev
		for i := range h {
			if h[i].mod <= rev {
				last = i
			}
		}
		drop := last // writes before the last one go
		if last >= 0 && h[last].tomb() {
			drop = last + 1
		}
		if len(h) == drop {
			delete(ks.hist, k)
			continue
		}
		if drop > 0 {
			// A copy of our own, and no tail: the old array may be shared.
			ks.hist[k] = history{key: k, keyBytes: hist.keyBytes, e: append([]entry(nil), h[drop:]...)}
		}
		kept = append(kept, k)
	}
	ks.keys = kept
}
