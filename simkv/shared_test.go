package simkv

import (
	"slices"
	"testing"
)

// TestAppendSharedKeepsHoldersApart appends to prefixes of one array in
// every order and checks each holder sees exactly its own appends.
func TestAppendSharedKeepsHoldersApart(t *testing.T) {
	var base []int
	var bt *sharedTail
	for i := range 5 {
		base, bt = appendShared(base, bt, i)
	}
	a, at := base, bt
	b, btail := base, bt
	a, at = appendShared(a, at, 100) // first past the common end: in place
	if &a[0] != &base[0] {
		t.Fatal("the first holder to append copied the array")
	}
	b, btail = appendShared(b, btail, 200) // a wrote past b's end: b copies
	if &b[0] == &base[0] {
		t.Fatal("a second holder appended into an array another holder had extended")
	}
	a, _ = appendShared(a, at, 101)
	b, _ = appendShared(b, btail, 201)
	if want := []int{0, 1, 2, 3, 4, 100, 101}; !slices.Equal(a, want) {
		t.Fatalf("a = %v, want %v", a, want)
	}
	if want := []int{0, 1, 2, 3, 4, 200, 201}; !slices.Equal(b, want) {
		t.Fatalf("b = %v, want %v", b, want)
	}
	if want := []int{0, 1, 2, 3, 4}; !slices.Equal(base, want) {
		t.Fatalf("base = %v, want %v", base, want)
	}
}
