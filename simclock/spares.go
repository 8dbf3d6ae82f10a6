package simclock

import "sync"

// spareList keeps what closed loops leave for the next loops of the
// process (idle coroutines, event pools, trace buffers), so that a sweep
// does not build them afresh for every world. Worlds run in parallel, so
// the list is behind a lock. Which spare a world gets must change none of
// its runs; each list's doc says why that holds for what it keeps. At most
// max spares are kept.
type spareList[T any] struct {
	mu   sync.Mutex
	max  int
	list []T
}

// take removes and returns the newest spare that fits (all do if fits is
// nil); ok is false when none does.
func (s *spareList[T]) take(fits func(T) bool) (spare T, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.list) - 1; i >= 0; i-- {
		if fits != nil && !fits(s.list[i]) {
			continue
		}
		spare = s.list[i]
		last := len(s.list) - 1
		copy(s.list[i:], s.list[i+1:])
		var zero T
		s.list[last] = zero // drop the list's hold on it
		s.list = s.list[:last]
		return spare, true
	}
	return spare, false
}

// keep adds spares while there is room and returns those that did not
// fit, for the caller to dispose of.
func (s *spareList[T]) keep(spares ...T) (rest []T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := max(0, min(len(spares), s.max-len(s.list)))
	s.list = append(s.list, spares[:n]...)
	return spares[n:]
}
