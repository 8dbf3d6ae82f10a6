package migratecheck

import (
	"bytes"
	"slices"
	"unsafe"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/property"
)

// writeRef names one version of an acknowledged write: version j of the
// acknowledged write at index ack.
type writeRef struct {
	ack, j int32
}

// registerAcks brings the index of acknowledged versions by key up to date
// with acked, and reports whether the pass may walk keys: false when an
// entry changed since the last pass (the index and every memo of the
// entries are dropped, to be built again by the next pass) or an
// acknowledged write fails ackApplied (its violation must be reported in
// order). Either way every entry has a memo, that of the entry as it is.
func (c *NoLostWriteChecker) registerAcks(acked []AckedWrite) bool {
	if len(acked) < len(c.seen) || !sameEntries(acked[:len(c.seen)], c.seen) {
		c.forgetAcks()
		c.growAcks(acked)
		return false
	}
	c.growAcks(acked)
	c.registerGrown(acked)
	return c.registerApplied(acked)
}

// sameEntries reports whether a and b hold the same entries word for word:
// the same strings (the same bytes at the same address), timestamps and
// return times. Equal words are equal entries, as every field of
// AckedWrite is a string (immutable) or an integer; entries equal in
// content but with strings held elsewhere count as different (the caller
// then judges them afresh). AckedWrite has no padding, whose bytes could
// differ between equal entries (TestAckedWriteComparesAsBytes).
//
// Why as bytes: every pass compares every entry, and one comparison of
// the lists' memory is the cheapest way. Callgrind, migrate seeds 1-30:
// slices.Equal (a memequal call per string) costs 4.7M instructions more
// (+1.6%), a loop over the fields comparing strings' pointers 2.5M more.
func sameEntries(a, b []AckedWrite) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	size := len(a) * int(unsafe.Sizeof(AckedWrite{}))
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), size), unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), size))
}

// growAcks gives every new entry of acked an empty memo, copies it to
// seen and counts it as not known applied. The memos and the copy get the
// capacity of acked at once: the list grows pass by pass into the room its
// owner made for it.
func (c *NoLostWriteChecker) growAcks(acked []AckedWrite) {
	old := len(c.seen)
	if len(acked) <= old {
		return
	}
	room := max(len(acked), cap(acked)) - old
	c.acks = slices.Grow(c.acks[:old], room)[:len(acked)]
	clear(c.acks[old:])
	c.seen = append(slices.Grow(c.seen, room), acked[old:]...)
	for i := old; i < len(acked); i++ {
		c.unapplied = append(c.unapplied, int32(i))
	}
}

// forgetAcks drops the index of acknowledged versions by key and every
// memo of the entries (one changed under them).
func (c *NoLostWriteChecker) forgetAcks() {
	c.dropIndex()
	c.acks, c.seen, c.unapplied = c.acks[:0], c.seen[:0], c.unapplied[:0]
	clear(c.opFirst)
}

// registerGrown indexes the versions the oracle added since the last pass
// to the operations of entries known applied (their versions are their
// operation's: a transaction's grow as its groups apply it).
func (c *NoLostWriteChecker) registerGrown(acked []AckedWrite) {
	grown := c.oracle.grown[c.grown:]
	c.grown = len(c.oracle.grown)
	for _, op := range grown {
		if int(op.id) >= len(c.opFirst) {
			continue // no entry of it is known applied
		}
		for i := c.opFirst[op.id] - 1; i >= 0; i = c.acks[i].next - 1 {
			if m := &c.acks[i]; len(op.ws) > int(m.registered) {
				c.register(i, acked[i].Key, m)
			}
		}
	}
}

// registerApplied judges the entries not known applied (ackVersions) and
// indexes the versions of those now known applied; it reports false at the
// first that fails ackApplied (the rest stay as they were).
func (c *NoLostWriteChecker) registerApplied(acked []AckedWrite) bool {
	kept := c.unapplied[:0] // in place: kept never passes the entry read
	for n, i := range c.unapplied {
		a, m := &acked[i], &c.acks[i]
		if !m.applied { // checkOrdered may have found it applied
			if _, skip, v := c.ackVersions(a, m); v != nil {
				c.unapplied = append(kept, c.unapplied[n:]...)
				return false
			} else if skip {
				kept = append(kept, i)
				continue
			}
		}
		c.linkApplied(i, m)
		c.register(i, a.Key, m)
	}
	c.unapplied = kept
	return true
}

// linkApplied chains entry i (memo m, known applied) to the entries of its
// operation (opFirst), for registerGrown.
func (c *NoLostWriteChecker) linkApplied(i int32, m *ackMemo) {
	id := m.writes.id
	if int(id) >= len(c.opFirst) {
		c.opFirst = append(c.opFirst, make([]int32, int(id)+1-len(c.opFirst))...)
	}
	m.next = c.opFirst[id]
	c.opFirst[id] = i + 1
}

// register indexes the versions of the acknowledged write at index ack
// (memo m) that are new since the last pass under their keys (only those
// of key, unless key is empty).
func (c *NoLostWriteChecker) register(ack int32, key string, m *ackMemo) {
	ws := m.writes.ws
	for j := int(m.registered); j < len(ws); j++ {
		if key != "" && ws[j].Key != key {
			continue
		}
		id := m.writes.ids[j]
		k := c.keys.at(id)
		if len(k.refs) == 0 {
			c.keyed = append(c.keyed, k)
			k.key = ws[j].Key
		}
		c.addRef(k, writeRef{ack: ack, j: int32(j)})
	}
	m.registered = int32(len(ws))
}

// Room of keys' version indexes: a key's full index moves to twice its
// room, at least refRoomMin, cut from slabs of refSlabChunk, rather than
// grown by append (a growslice per doubling of every key's index was
// most of register's allocations).
const (
	refRoomMin   = 4
	refSlabChunk = 256
)

// addRef appends r to key k's index of versions.
func (c *NoLostWriteChecker) addRef(k *keyMemo, r writeRef) {
	if len(k.refs) == cap(k.refs) {
		n := max(refRoomMin, 2*len(k.refs))
		if len(c.refSlab) < n {
			c.refSlab = make([]writeRef, max(n, refSlabChunk))
		}
		// A three-index slice: an index that fills its room moves again,
		// never appends into the next key's room.
		k.refs = append(c.refSlab[:0:n], k.refs...)
		c.refSlab = c.refSlab[n:]
	}
	k.refs = append(k.refs, r)
}

// dropIndex forgets the index of acknowledged versions by key (an entry of
// the acknowledged writes changed under it; forgetAcks drops the entries'
// memos, registered counts included).
func (c *NoLostWriteChecker) dropIndex() {
	for _, k := range c.keyed {
		k.refs, k.settled, k.settledN = nil, readStamp{}, 0
		for i := range k.seen {
			m := &k.seen[i]
			m.passed, m.n = readStamp{}, 0
		}
	}
	c.keyed = c.keyed[:0]
}

// checkKeys judges the indexed versions key by key and returns a violation
// if it meets one (not necessarily the first in CheckNoLostWrite's order).
// Of the versions known to read back under an earlier stamp (carried), it
// judges again only those whose answer the change of floor can touch;
// then those indexed since.
func (c *NoLostWriteChecker) checkKeys(owners Owners, when string, spans []keys.Span) *property.Violation {
	for _, k := range c.keyed {
		key := k.key
		if !c.inSpans(k, key, spans) || c.untouched(k, owners) {
			continue
		}
		c.resolve(k, key, owners)
		k.stampComputed = true
		old, n := c.carried(k, key)
		// refs[:n] read back under old, whose content is this pass's.
		// At the same floor they all still do. At another floor, those
		// at or above both floors do (read where they were), and so do
		// those readBack now excuses (older than excusedBelow); the rest,
		// with timestamps in [lo, hi), are judged again.
		from, lo, hi := n, hlc.TS(0), hlc.TS(0)
		if old != nil && old.floor != k.stamp.floor {
			from, lo, hi = 0, c.excusedBelow(k), max(old.floor, k.stamp.floor)
		}
		for i, r := range k.refs[from:] {
			m := &c.acks[r.ack]
			w := &m.writes.ws[r.j]
			if from+i < n && (w.TS < lo || w.TS >= hi) {
				continue
			}
			if v := c.judgeWrite(k, w, when); v != nil {
				return v
			}
		}
		k.settled, k.settledN = k.stamp, len(k.refs)
		if sm := k.cur; sm != nil {
			sm.passed, sm.n = k.stamp, len(k.refs)
		}
	}
	return nil
}

// carried returns an earlier stamp under which the key's first n indexed
// versions all read back and whose content (store's versions, staging)
// reads as this pass's view: the key's last stamp (settled), or the stamp
// last settled in this pass's store (its memo). nil, 0: none. The memo is
// asked first when it covers as many versions and its source is this
// pass's (the key is back on a store that did not change): that takes no
// comparison of contents.
func (c *NoLostWriteChecker) carried(k *keyMemo, key string) (*readStamp, int) {
	c.nsame = 0 // what sameContent found was of another key
	if k.settled.equal(&k.stamp) {
		return &k.settled, k.settledN
	}
	sm := k.cur
	if sm != nil && sm.n == k.settledN && sm.passed.valid && sm.passed.owned && sm.passed.src.equal(&k.stamp.src) {
		return &sm.passed, sm.n
	}
	if c.sameView(k, key, &k.settled) {
		return &k.settled, k.settledN
	}
	if sm != nil && sm.n > 0 && c.sameView(k, key, &sm.passed) {
		return &sm.passed, sm.n
	}
	return nil, 0
}
