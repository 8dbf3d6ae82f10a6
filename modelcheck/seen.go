package modelcheck

import (
	"encoding/binary"
	"fmt"

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

// The limits of a budget packed into a seen slot: 8 bits of depth, 8 of
// faults, 16 of draw position. checkBounds refuses bounds beyond them.
const (
	maxDepth  = 1<<8 - 1
	maxFaults = 1<<8 - 1
	maxDraws  = 1<<16 - 1
)

// checkBounds refuses bounds whose budgets a seen slot cannot hold.
func checkBounds(b Bounds) error {
	switch {
	case b.Depth > maxDepth:
		return fmt.Errorf("depth %d is above the largest the seen set can hold (%d)", b.Depth, maxDepth)
	case b.Faults > maxFaults:
		return fmt.Errorf("faults %d is above the largest the seen set can hold (%d)", b.Faults, maxFaults)
	case b.Draws > maxDraws:
		return fmt.Errorf("draws %d is above the largest the seen set can hold (%d)", b.Draws, maxDraws)
	}
	return nil
}

func (b budget) pack() uint64 {
	return uint64(b.depth)<<24 | uint64(b.faults)<<16 | uint64(b.pos)
}

func unpack(v uint64) budget {
	return budget{depth: uint16(v >> 24 & 0xff), faults: uint16(v >> 16 & 0xff), pos: uint32(v & 0xffff)}
}

// seenSlotBytes is the size of one slot of the seen set.
const seenSlotBytes = 16

// seenSet maps state digests to the budget of their best visit: an
// open-addressing table (linear probing) of 16-byte slots, since a search
// keeps millions and a Go map spends three times the memory on them. A
// slot keeps 95 bits of the 128-bit digest (its first 8 bytes with the
// lowest bit set, so that no key is zero, and the next 4) beside the
// packed budget: two different states share a slot only if 95 bits of
// their digests agree, about one chance in 10^13 over 10^8 states (TLC
// keeps 64-bit fingerprints).
//
// It grows (doubling) at 70% load while room allows: room, when not nil,
// says whether a table of that many bytes may be allocated beside the old
// one. When it may not, the table fills up to 90% load and is then full.
type seenSet struct {
	slots []seenSlot
	n     int
	room  func(bytes int) bool
	grown func() // after the table grew (nil: nothing)
	full  bool   // no more states fit within the room
}

type seenSlot struct {
	lo uint64 // digest bytes 0-7 with the lowest bit set; 0 is an empty slot
	hi uint64 // digest bytes 8-11 in the top 32 bits, the packed budget below
}

func newSeenSet(room func(int) bool, grown func()) *seenSet {
	return &seenSet{slots: make([]seenSlot, 1<<12), room: room, grown: grown}
}

// Len returns how many states are in the set.
func (s *seenSet) Len() int { return s.n }

// Bytes is the size of the table.
func (s *seenSet) Bytes() int { return len(s.slots) * seenSlotBytes }

// Full reports whether the set reached its room: a new state no longer fits.
func (s *seenSet) Full() bool { return s.full }

func slotKey(key simclock.Digest) (lo, hi uint64) {
	lo = binary.LittleEndian.Uint64(key[:8]) | 1
	hi = uint64(binary.LittleEndian.Uint32(key[8:12])) << 32
	return lo, hi
}

// find returns the slot of the key (lo, hi), or the empty slot where it belongs.
func (s *seenSet) find(lo, hi uint64) *seenSlot {
	mask := uint64(len(s.slots) - 1)
	i := (lo >> 1) & mask
	for {
		sl := &s.slots[i]
		if sl.lo == 0 || (sl.lo == lo && sl.hi&^0xffffffff == hi) {
			return sl
		}
		i = (i + 1) & mask
	}
}

// visit records that key was reached having spent b. It reports whether
// an earlier visit covers this one (the caller prunes). Otherwise it keeps
// the visit that covers more: this one if it covers the stored one, else
// the stored one (keeping either is sound; only a covering visit prunes).
// A full set adds no new key and reports it not covered: the caller stops.
func (s *seenSet) visit(key simclock.Digest, b budget) (covered, fresh bool) {
	lo, hi := slotKey(key)
	sl := s.find(lo, hi)
	if sl.lo != 0 {
		old := unpack(sl.hi & 0xffffffff)
		if old.covers(b) {
			return true, false
		}
		if b.covers(old) {
			sl.hi = hi | b.pack()
		}
		return false, false
	}
	if s.full {
		return false, false
	}
	sl.lo, sl.hi = lo, hi|b.pack()
	s.n++
	switch {
	case s.n*10 <= len(s.slots)*7:
	case s.room == nil || s.room(2*s.Bytes()):
		s.grow()
	case s.n*10 >= len(s.slots)*9:
		s.full = true
	}
	return false, true
}

func (s *seenSet) grow() {
	old := s.slots
	s.slots = make([]seenSlot, 2*len(old))
	for _, sl := range old {
		if sl.lo != 0 {
			*s.find(sl.lo, sl.hi&^0xffffffff) = sl
		}
	}
	if s.grown != nil {
		s.grown()
	}
}
