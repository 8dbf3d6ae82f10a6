package simkv

// sharedTail lets stores cloned from one another share the backing array
// of an append-only slice they all hold a prefix of: n is how many of the
// array's elements some holder has written. A holder whose slice ends at n
// appends in place; any other must copy first, since another holder's
// writes lie beyond its end. Without it every append after a clone copies
// the whole slice, and a linearizability check clones the store at every
// step it tries.
type sharedTail struct{ n int }

// appendShared appends v to s, whose backing array t describes (nil: not
// known to be shared safely), without disturbing other holders of that
// array. It returns the new slice and the tail of its array.
func appendShared[T any](s []T, t *sharedTail, v T) ([]T, *sharedTail) {
	if t != nil && len(s) == t.n && len(s) < cap(s) {
		t.n++
		return append(s, v), t
	}
	out := make([]T, len(s), max(2*len(s), 4))
	copy(out, s)
	out = append(out, v)
	return out, &sharedTail{n: len(out)}
}
