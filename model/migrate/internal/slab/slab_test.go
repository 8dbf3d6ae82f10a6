package slab

import "testing"

// Values handed out are distinct, keep what they were given while later
// values fill the same and further chunks, and the chunks grow from
// firstChunk to maxChunk.
func TestSlabKeepsValuesApart(t *testing.T) {
	var s Slab[[2]int]
	var kept []*[2]int
	chunks := 0
	for i := 0; i < 4*maxChunk+3; i++ {
		if len(s.free) == 0 {
			chunks++
		}
		kept = append(kept, s.Keep([2]int{i, -i}))
		if s.size > maxChunk || s.size < firstChunk {
			t.Fatalf("chunk of %d values", s.size)
		}
	}
	seen := map[*[2]int]bool{}
	for i, p := range kept {
		if seen[p] {
			t.Fatalf("value %d shares storage with an earlier one", i)
		}
		seen[p] = true
		if *p != [2]int{i, -i} {
			t.Fatalf("value %d holds %v", i, *p)
		}
	}
	// 4 + 8 + 16 values, then chunks of 32.
	if want := 3 + (4*maxChunk+3-28+maxChunk-1)/maxChunk; chunks != want {
		t.Fatalf("%d chunks, want %d", chunks, want)
	}
}

// A fresh value is zero even when the slab handed out its neighbours
// with contents.
func TestSlabNewIsZero(t *testing.T) {
	var s Slab[int]
	for i := 0; i < 3*maxChunk; i++ {
		p := s.New()
		if *p != 0 {
			t.Fatalf("value %d is %d, want 0", i, *p)
		}
		*p = i + 1
	}
}
