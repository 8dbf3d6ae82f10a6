package migratecheck

import (
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
// violation must be reported in order).
func (c *NoLostWriteChecker) registerAcks(acked []AckedWrite) bool {
	c.growAcks(acked)
	memos := c.acks[:len(acked)] // one load of the memos for the loop
	for i := range acked {
		a, m := &acked[i], &memos[i]
		if m.op != a.Op {
			c.dropIndex()
			return false
		}
		if !m.applied {
			if m.writes == nil {
				m.writes = c.oracle.ops[a.Op]
			}
			var ws []AppliedWrite
			if m.writes != nil {
				ws = m.writes.ws
			}
			skip, v := ackApplied(*a, ws)
			if v != nil {
				return false
			}
			if skip {
				continue
			}
			// ws only grows and ws[0] stays: it passes from now on.
			m.applied = true
		}
		if len(m.writes.ws) > m.registered {
			c.register(int32(i), a.Key, m)
		}
	}
	return true
}

// growAcks gives every acknowledged write a memo (new ones name their
// operation).
func (c *NoLostWriteChecker) growAcks(acked []AckedWrite) {
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
		k.refs, k.settled, k.settledN = nil, readStamp{}, 0
	}
	c.keyed = c.keyed[:0]
	for i := range c.acks {
		c.acks[i].registered = 0
	}
}

// settledStillPass reports whether the versions that read back under the
// key's settled stamp read back under this pass's stamp too, though the two
// differ: with the floor and the oracle's versions alike, when another
// store (or staging job) holds the same versions of the key (stillPasses's
// second rule, for all of them at once).
func (c *NoLostWriteChecker) settledStillPass(k *keyMemo, key string) bool {
	old, now := k.settled, k.stamp
	return old.valid && old.owned && now.owned && old.floor == now.floor && old.known == now.known && c.sameContent(k, key, old.src)
}

// checkKeys judges the indexed versions key by key and returns a violation
// if it meets one (not necessarily the first in CheckNoLostWrite's order).
// A key whose stamp is the one its first settledN versions all read back
// under judges only the versions indexed since.
func (c *NoLostWriteChecker) checkKeys(owners Owners, when string, spans []keys.Span) *property.Violation {
	for _, id := range c.keyed {
		k := c.keys.at(id)
		first := k.refs[0]
		key := c.acks[first.ack].writes.ws[first.j].Key
		if !c.inPass(k, id, key, owners, spans) {
			continue
		}
		from := 0
		if k.settled.equal(&k.stamp) || c.settledStillPass(k, key) {
			from = k.settledN
		}
		for _, r := range k.refs[from:] {
			m := &c.acks[r.ack]
			if v := c.judgeWrite(k, id, &m.writes.ws[r.j], &m.ws[r.j], when); v != nil {
				return v
			}
		}
		k.settled, k.settledN = k.stamp, len(k.refs)
	}
	return nil
}
