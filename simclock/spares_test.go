package simclock

import (
	"slices"
	"testing"
)

// drain empties the list and returns what it held.
func (s *spareList[T]) drain() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.list
	s.list = nil
	return list
}

// snapshot returns a copy of the spares kept.
func (s *spareList[T]) snapshot() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.list)
}

// A spare list keeps at most its bound, hands back what does not fit, and
// takes the newest spare that fits.
func TestSpareListKeepsItsBoundAndTakesTheNewestFit(t *testing.T) {
	s := spareList[int]{max: 3}
	if rest := s.keep(1, 2); len(rest) != 0 {
		t.Fatalf("keep(1, 2) on an empty list of 3 returned %v, want nothing", rest)
	}
	if rest := s.keep(3, 4, 5); !slices.Equal(rest, []int{4, 5}) {
		t.Fatalf("keep(3, 4, 5) on a list holding 2 of 3 returned %v, want [4 5]", rest)
	}
	odd := func(n int) bool { return n%2 == 1 }
	if got, ok := s.take(odd); !ok || got != 3 {
		t.Fatalf("take(odd) = %d, %v; want 3, true (the newest odd)", got, ok)
	}
	if got, ok := s.take(odd); !ok || got != 1 {
		t.Fatalf("second take(odd) = %d, %v; want 1, true", got, ok)
	}
	if got, ok := s.take(odd); ok {
		t.Fatalf("third take(odd) = %d, true; want none (only 2 is left)", got)
	}
	if got := s.snapshot(); !slices.Equal(got, []int{2}) {
		t.Fatalf("left %v, want [2]", got)
	}
	if got, ok := s.take(nil); !ok || got != 2 {
		t.Fatalf("take(nil) = %d, %v; want 2, true", got, ok)
	}
	if _, ok := s.take(nil); ok {
		t.Fatalf("take(nil) on an empty list found a spare")
	}
}
