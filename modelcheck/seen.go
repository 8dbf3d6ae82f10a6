package modelcheck

import (
	"encoding/binary"

	"shardsim/simclock"
)

// budget is what a path had spent when it reached a state: non-zero
// choices, non-zero choices on fault forks, and draws made. A state
// reached again having spent no less of each has no future within the
// bounds that the first visit did not have, so it is pruned.
type budget struct {
	depth, faults uint16
	pos           uint32
}

// covers reports whether a visit that had spent b has every future one
// that spent c has.
func (b budget) covers(c budget) bool {
	return b.depth <= c.depth && b.faults <= c.faults && b.pos <= c.pos
}

func (b budget) pack() uint64 {
	return uint64(b.depth)<<48 | uint64(b.faults)<<32 | uint64(b.pos)
}

func unpack(v uint64) budget {
	return budget{depth: uint16(v >> 48), faults: uint16(v >> 32), pos: uint32(v)}
}

// seenSet maps state digests to the budget of their best visit: an
// open-addressing table (linear probing) of 24-byte slots, since a search
// keeps millions and a Go map spends twice the memory on them.
type seenSet struct {
	slots []seenSlot
	n     int
}

type seenSlot struct {
	key  simclock.Digest
	used uint64 // budget.pack()+1; 0 is an empty slot
}

func newSeenSet() *seenSet { return &seenSet{slots: make([]seenSlot, 1<<12)} }

// Len returns how many states are in the set.
func (s *seenSet) Len() int { return s.n }

// find returns the slot of key, or the empty slot where it belongs.
func (s *seenSet) find(key simclock.Digest) *seenSlot {
	mask := uint64(len(s.slots) - 1)
	i := binary.LittleEndian.Uint64(key[:8]) & mask
	for {
		sl := &s.slots[i]
		if sl.used == 0 || sl.key == key {
			return sl
		}
		i = (i + 1) & mask
	}
}

// visit records that key was reached having spent b. It reports whether
// an earlier visit covers this one (the caller prunes). Otherwise it keeps
// the visit that covers more: this one if it covers the stored one, else
// the stored one (keeping either is sound; only a covering visit prunes).
func (s *seenSet) visit(key simclock.Digest, b budget) (covered, fresh bool) {
	sl := s.find(key)
	if sl.used != 0 {
		old := unpack(sl.used - 1)
		if old.covers(b) {
			return true, false
		}
		if b.covers(old) {
			sl.used = b.pack() + 1
		}
		return false, false
	}
	sl.key, sl.used = key, b.pack()+1
	s.n++
	if s.n*10 > len(s.slots)*7 {
		s.grow()
	}
	return false, true
}

func (s *seenSet) grow() {
	old := s.slots
	s.slots = make([]seenSlot, 2*len(old))
	for _, sl := range old {
		if sl.used != 0 {
			*s.find(sl.key) = sl
		}
	}
}
