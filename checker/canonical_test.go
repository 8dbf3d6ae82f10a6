package checker

import (
	"slices"
	"testing"
)

// CanonicalLongest picks the same linearization whatever the order the
// partial linearizations come in.
func TestCanonicalLongestIgnoresOrder(t *testing.T) {
	parts := [][]int{{0, 2}, {1}, {1, 0}, {0, 1}, {2}}
	want := []int{0, 1}
	for i := range parts {
		rotated := append(append([][]int{}, parts[i:]...), parts[:i]...)
		if got := CanonicalLongest(rotated); !slices.Equal(got, want) {
			t.Fatalf("rotation %d: got %v, want %v", i, got, want)
		}
	}
}
