// Package slab hands out values of one type carved from larger chunks, for
// the data plane's many small, long-lived objects (log entries, key
// records): a chunk costs one allocation for many of them.
package slab

// firstChunk and maxChunk bound a slab's chunks: the first holds
// firstChunk values and each next one twice the last, up to maxChunk, so a
// slab that hands out a few values carries few idle ones, and one that
// hands out many allocates once per maxChunk.
const (
	firstChunk = 4
	maxChunk   = 32
)

// Slab hands out fresh values of type T. A value handed out is the
// caller's for good: it is never handed out again, and the slab never
// writes to it. The zero Slab is ready to use. A Slab holds no pointer to
// the values it handed out beyond the chunk they share, so a copy of a
// Slab must not be used alongside the original (both would hand out the
// same values): give a copy a zero Slab instead.
type Slab[T any] struct {
	free []T // the rest of the current chunk
	size int // the length of the current chunk
}

// next returns a fresh one-value slice whose capacity ends at its length
// (an append to it reallocates rather than running into the next value).
func (s *Slab[T]) next() []T {
	if len(s.free) == 0 {
		s.size = min(max(2*s.size, firstChunk), maxChunk)
		s.free = make([]T, s.size)
	}
	out := s.free[:1:1]
	s.free = s.free[1:]
	return out
}

// New returns a pointer to a fresh zero value.
func (s *Slab[T]) New() *T { return &s.next()[0] }

// Keep returns a pointer to a fresh copy of v.
func (s *Slab[T]) Keep(v T) *T {
	p := s.New()
	*p = v
	return p
}
