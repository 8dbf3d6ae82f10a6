package coord

import "bytes"

// ShardSpec is a shard's key range [Start, End) in lexicographic byte order
// plus opaque connector metadata. An empty Start means the beginning of the
// keyspace; an empty End means the range is unbounded above.
//
// Byte slices held by records are never modified in place, so record copies
// may share them.
type ShardSpec struct {
	Start    []byte
	End      []byte
	Metadata []byte
}

// Unbounded reports whether the range has no upper end.
func (s ShardSpec) Unbounded() bool { return len(s.End) == 0 }

// WellFormed reports whether the range is non-empty: Start < End, or End is
// unbounded.
func (s ShardSpec) WellFormed() bool {
	return s.Unbounded() || bytes.Compare(s.Start, s.End) < 0
}

// Contains reports whether key lies in [Start, End).
func (s ShardSpec) Contains(key []byte) bool {
	if bytes.Compare(key, s.Start) < 0 {
		return false
	}
	return s.Unbounded() || bytes.Compare(key, s.End) < 0
}

// SameRange reports whether s and o cover exactly the same keys.
func (s ShardSpec) SameRange(o ShardSpec) bool {
	return bytes.Equal(s.Start, o.Start) && bytes.Equal(s.End, o.End)
}

// Equal reports whether s and o have the same range and metadata.
func (s ShardSpec) Equal(o ShardSpec) bool {
	return s.SameRange(o) && bytes.Equal(s.Metadata, o.Metadata)
}

// Clone returns a deep copy, so that the caller's later writes to its
// buffers cannot reach a stored record.
func (s ShardSpec) Clone() ShardSpec {
	return ShardSpec{Start: cloneBytes(s.Start), End: cloneBytes(s.End), Metadata: cloneBytes(s.Metadata)}
}

// cloneBytes copies b, mapping empty to nil so that equal values compare
// equal however they were built.
func cloneBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}
