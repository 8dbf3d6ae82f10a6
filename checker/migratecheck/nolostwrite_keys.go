package migratecheck

import (
	"math"
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
// entry changed since the last pass (the index is dropped, to be built
// again by the next pass) or an acknowledged write fails ackApplied (its
// violation must be reported in order). Every entry has a memo (growAcks).
func (c *NoLostWriteChecker) registerAcks(acked []AckedWrite) bool {
	memos := c.acks[:len(acked)] // one load of the memos for the loop
	for i := range acked {
		a, m := &acked[i], &memos[i]
		if !sameString(m.op, a.Op) {
			c.dropIndex()
			return false
		}
		if !m.applied { // once applied, always (ackVersions)
			if _, skip, v := c.ackVersions(a, m); v != nil {
				return false
			} else if skip {
				continue
			}
		}
		if len(m.writes.ws) > m.registered {
			c.register(int32(i), a.Key, m)
		}
	}
	return true
}

// growAcks gives every acknowledged write a memo (new ones name their
// operation). The memos get the capacity of acked at once: the list grows
// pass by pass into the room its owner made for it.
func (c *NoLostWriteChecker) growAcks(acked []AckedWrite) {
	if len(acked) <= len(c.acks) {
		return
	}
	c.acks = slices.Grow(c.acks, max(len(acked), cap(acked))-len(c.acks))
	for i := len(c.acks); i < len(acked); i++ {
		c.acks = append(c.acks, ackMemo{op: acked[i].Op})
	}
}

// register indexes the versions of the acknowledged write at index ack
// (memo m) that are new since the last pass under their keys (only those
// of key, unless key is empty).
func (c *NoLostWriteChecker) register(ack int32, key string, m *ackMemo) {
	ws := m.writes.ws
	c.growMemos(m, len(ws))
	for j := m.registered; j < len(ws); j++ {
		if key != "" && ws[j].Key != key {
			continue
		}
		id := m.writes.ids[j]
		k := c.keys.at(id)
		if len(k.refs) == 0 {
			c.keyed = append(c.keyed, id)
		}
		k.refs = append(k.refs, writeRef{ack: ack, j: int32(j)})
	}
	m.registered = len(ws)
}

// dropIndex forgets the index of acknowledged versions by key (an entry of
// the acknowledged writes changed under it).
func (c *NoLostWriteChecker) dropIndex() {
	for _, id := range c.keyed {
		k := c.keys.at(id)
		k.refs, k.settled, k.settledN, k.settledMin = nil, readStamp{}, 0, 0
		for i := range k.seen {
			m := &k.seen[i]
			m.passed, m.n, m.min = readStamp{}, 0, 0
		}
	}
	c.keyed = c.keyed[:0]
	for i := range c.acks {
		c.acks[i].registered = 0
	}
}

// checkKeys judges the indexed versions key by key and returns a violation
// if it meets one (not necessarily the first in CheckNoLostWrite's order).
// A key whose stamp is the one its first settledN versions all read back
// under, or one they all still read back under (stillPasses asked at the
// oldest of them), judges only the versions indexed since.
func (c *NoLostWriteChecker) checkKeys(owners Owners, when string, spans []keys.Span) *property.Violation {
	for _, id := range c.keyed {
		k := c.keys.at(id)
		first := k.refs[0]
		key := c.acks[first.ack].writes.ws[first.j].Key
		if !c.inPass(k, id, key, owners, spans) {
			continue
		}
		from, oldest := 0, hlc.TS(math.MaxUint64)
		same := k.settled.equal(&k.stamp)
		if same || c.stillPasses(k, key, k.settledMin, &k.settled) {
			from, oldest = k.settledN, k.settledMin
		} else if sm := k.cur; sm != nil && sm.n > 0 && (sm.passed.equal(&k.stamp) || c.stillPasses(k, key, sm.min, &sm.passed)) {
			from, oldest = sm.n, sm.min
		}
		for _, r := range k.refs[from:] {
			m := &c.acks[r.ack]
			w := &m.writes.ws[r.j]
			if v := c.judgeWrite(k, id, w, &m.ws[r.j], when); v != nil {
				return v
			}
			oldest = min(oldest, w.TS)
		}
		if !same {
			k.settled = k.stamp
		}
		k.settledN, k.settledMin = len(k.refs), oldest
		if sm := k.cur; sm != nil {
			sm.passed, sm.n, sm.min = k.stamp, len(k.refs), oldest
		}
	}
	return nil
}

// sameString reports whether a == b, without a call when both share their
// bytes: a memo's operation id is the acknowledged write's own string, so
// the walk over every acknowledgement on every pass almost always finds
// them shared.
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}
