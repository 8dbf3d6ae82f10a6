package mvcc

import "slices"

// keyOrder is the store's keys in order, each with its record, kept as a
// list of blocks of consecutive keys. A single sorted slice moved half the
// store on every insertion or deletion of a key (the list worlds add and
// drop keys constantly); a block moves at most blockMax entries, and
// finding a key takes one binary search over the blocks and one inside.
type keyOrder struct {
	blocks []*block // in key order; none is empty
}

// block is a run of consecutive keys and their records.
type block struct {
	keys []string
	recs []*keyVersions // recs[i] is keys[i]'s
}

// blockMax is the most keys a block holds; a fuller one splits in two.
const blockMax = 128

// pos is a position in the order: key i of block b. Positions past the
// last key have b == len(blocks).
type pos struct{ b, i int }

// seek returns the position of the first key at or after key.
func (o *keyOrder) seek(key string) pos {
	// The first block whose last key is at or after key (a plain binary
	// search: every read and write seeks, and sort.Search's callback costs
	// a call per probe).
	lo, hi := 0, len(o.blocks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ks := o.blocks[m].keys; ks[len(ks)-1] < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(o.blocks) {
		return pos{b: lo}
	}
	return pos{b: lo, i: lowerBound(o.blocks[lo].keys, key)}
}

// lowerBound returns the index of the first of the sorted keys at or after
// key (slices.BinarySearch's position, with one string comparison per
// probe where its generic compare makes two).
func lowerBound(keys []string, key string) int {
	lo, hi := 0, len(keys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if keys[m] < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// valid reports whether p is at a key.
func (o *keyOrder) valid(p pos) bool { return p.b < len(o.blocks) }

// key returns the key at p, which must be valid.
func (o *keyOrder) key(p pos) string { return o.blocks[p.b].keys[p.i] }

// rec returns the record at p, which must be valid.
func (o *keyOrder) rec(p pos) *keyVersions { return o.blocks[p.b].recs[p.i] }

// next returns the position after p, which must be valid.
func (o *keyOrder) next(p pos) pos {
	if p.i+1 < len(o.blocks[p.b].keys) {
		return pos{b: p.b, i: p.i + 1}
	}
	return pos{b: p.b + 1}
}

// insert adds key, which the order does not hold, with its record.
func (o *keyOrder) insert(key string, kv *keyVersions) {
	if len(o.blocks) == 0 {
		bl := newBlock(firstBlockRoom, nil, nil)
		bl.keys, bl.recs = append(bl.keys, key), append(bl.recs, kv)
		o.blocks = []*block{bl}
		return
	}
	p := o.seek(key)
	if p.b == len(o.blocks) { // after every key: the end of the last block
		p = pos{b: p.b - 1, i: len(o.blocks[p.b-1].keys)}
	}
	bl := o.blocks[p.b]
	bl.keys = insertAt(bl.keys, p.i, key)
	bl.recs = insertAt(bl.recs, p.i, kv)
	if len(bl.keys) > blockMax {
		half := len(bl.keys) / 2
		nb := newBlock(blockMax+1, bl.keys[half:], bl.recs[half:])
		clear(bl.keys[half:]) // the moved entries are nb's now
		clear(bl.recs[half:])
		bl.keys, bl.recs = bl.keys[:half], bl.recs[:half]
		o.blocks = slices.Insert(o.blocks, p.b+1, nb)
	}
}

// firstBlockRoom is the room for keys a store's first block starts with:
// a voter's store grows to dozens of keys, and a block grown from one key
// by doubling reallocates both its slices at 2, 4, 8 and 16 keys on the way.
const firstBlockRoom = 16

// newBlock returns a block holding copies of keys and their records, with
// room for at least room keys.
func newBlock(room int, keys []string, recs []*keyVersions) *block {
	bl := &block{keys: make([]string, len(keys), max(room, len(keys))), recs: make([]*keyVersions, len(recs), max(room, len(recs)))}
	copy(bl.keys, keys)
	copy(bl.recs, recs)
	return bl
}

// insertAt inserts v at s[i] (slices.Insert of one value, without its
// generality: one append and one shift of the tail).
func insertAt[T any](s []T, i int, v T) []T {
	s = append(s, v)
	copy(s[i+1:], s[i:len(s)-1])
	s[i] = v
	return s
}

// remove drops key, if held.
func (o *keyOrder) remove(key string) {
	p := o.seek(key)
	if !o.valid(p) || o.key(p) != key {
		return
	}
	bl := o.blocks[p.b]
	bl.keys = slices.Delete(bl.keys, p.i, p.i+1)
	bl.recs = slices.Delete(bl.recs, p.i, p.i+1)
	if len(bl.keys) == 0 {
		o.blocks = slices.Delete(o.blocks, p.b, p.b+1)
	}
}
