package migrate

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWaitQueueMatchesSortedSlice drives the queue and the plain sorted
// slice it replaced with the same random inserts, pops and take-alls, and
// requires the same waiters in the same order throughout.
func TestWaitQueueMatchesSortedSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		var q waitQueue
		var ref []uint64 // index*1000+arrival, sorted by index then arrival
		arrival := uint64(0)
		for op := 0; op < 300; op++ {
			switch x := r.IntN(10); {
			case x < 6:
				arrival++
				idx := uint64(r.IntN(20))
				id := idx*1000 + arrival
				q.insert(waiter{index: idx, term: id})
				i := 0 // after every waiter whose index is at most idx
				for i < len(ref) && ref[i]/1000 <= idx {
					i++
				}
				ref = slices.Insert(ref, i, id)
			case x < 9:
				if len(ref) == 0 {
					if q.len() != 0 {
						t.Fatalf("round %d op %d: queue holds %d, want 0", round, op, q.len())
					}
					continue
				}
				if got := q.front().term; got != ref[0] {
					t.Fatalf("round %d op %d: front %d, want %d", round, op, got, ref[0])
				}
				if got := q.pop().term; got != ref[0] {
					t.Fatalf("round %d op %d: popped %d, want %d", round, op, got, ref[0])
				}
				ref = ref[1:]
			default:
				ws := q.takeAll()
				// Inserting after takeAll must not change what it returned.
				q.insert(waiter{index: 0, term: 999999})
				if len(ws) != len(ref) {
					t.Fatalf("round %d op %d: took %d, want %d", round, op, len(ws), len(ref))
				}
				for i, w := range ws {
					if w.term != ref[i] {
						t.Fatalf("round %d op %d: took[%d] = %d, want %d", round, op, i, w.term, ref[i])
					}
				}
				q.pop()
				ref = nil
			}
			if q.len() != len(ref) {
				t.Fatalf("round %d op %d: len %d, want %d", round, op, q.len(), len(ref))
			}
		}
	}
}
