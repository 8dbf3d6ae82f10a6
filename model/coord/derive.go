package coord

import "encoding/binary"

// derivedBit marks a shard id as derived by a split. Root ids never carry
// it, so "has a parent" and "is derived" can be checked against each other.
const derivedBit ShardID = 1 << 63

// splitIDs hashes split-derived shard ids; its own context keeps these
// hashes apart from any other use of blake3 in the harness.
var splitIDs = newHashDomain("shardsim coord v1 split-derived shard id")

// DerivedShardKind says which split created a derived shard. Its values are
// hashed into derived ids, so they are stable.
type DerivedShardKind uint8

const (
	// DerivedChild is a child created by split_replace.
	DerivedChild DerivedShardKind = 0
	// DerivedResidual is a residual created by split_residual.
	DerivedResidual DerivedShardKind = 1
)

// String names the kind.
func (k DerivedShardKind) String() string {
	switch k {
	case DerivedChild:
		return "child"
	case DerivedResidual:
		return "residual"
	}
	return "derived-kind(?)"
}

// IsDerived reports whether id was derived by a split (bit 63 set).
func (id ShardID) IsDerived() bool { return id&derivedBit != 0 }

// deriveShardID returns the id of the shard that the split op creates as
// its index-th spawned shard of parent. The same inputs always give the same
// id, which is what lets a retried split find the shards it already made.
// index is the position in the parent's spawned list.
func deriveShardID(run RunID, parent ShardID, op OpID, kind DerivedShardKind, index uint32) ShardID {
	var in [8 + 8 + 8 + 1 + 4]byte
	binary.LittleEndian.PutUint64(in[0:], uint64(run))
	binary.LittleEndian.PutUint64(in[8:], uint64(parent))
	binary.LittleEndian.PutUint64(in[16:], uint64(op))
	in[24] = byte(kind)
	binary.LittleEndian.PutUint32(in[25:], index)
	return ShardID(splitIDs.sum64(in[:])) | derivedBit
}

// findDerived returns the positions in spawned whose id is the one the
// split op of the given kind would have derived at that position. A retried
// split uses it to recover the ids it created, even after its op-log entry
// was evicted.
func findDerived(run RunID, parent ShardID, spawned []ShardID, op OpID, kind DerivedShardKind) []int {
	var at []int
	for i, id := range spawned {
		if deriveShardID(run, parent, op, kind, uint32(i)) == id {
			at = append(at, i)
		}
	}
	return at
}
