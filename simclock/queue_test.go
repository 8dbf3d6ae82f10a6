package simclock

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// pushOdds returns how likely op number op of a round of the queue tests
// is a push (given something to pop): a round first grows the queue past
// maxSorted, so that it turns into a heap, then shrinks it below minSorted,
// so that it is sorted again, and so on.
func pushOdds(op int) float64 {
	if op%(4*maxSorted) < 2*maxSorted {
		return 0.8
	}
	return 0.25
}

// byTimeThenSeq orders events the way the queue pops them.
func byTimeThenSeq(a, b *event) int {
	if a.at < b.at || a.at == b.at && a.seq < b.seq {
		return -1
	}
	if a == b {
		return 0
	}
	return 1
}

// The queue pops events in (at, seq) order whatever the mix of pushes and
// pops, sorted or as a heap: checked against a sorted list on random
// workloads with many equal times, the case where the order among them is
// up to seq.
func TestEventQueuePopsInTimeThenSeqOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sawHeap, sawSortedAgain := false, false
	for round := 0; round < 40; round++ {
		var q eventQueue
		var model []*event // sorted by (at, seq)
		seq := uint64(0)
		for op := 0; op < 8*maxSorted; op++ {
			if len(model) == 0 || rng.Float64() < pushOdds(op) {
				seq++
				e := &event{at: Time(rng.IntN(4 * maxSorted)), seq: seq}
				q.push(e)
				i, _ := slices.BinarySearchFunc(model, e, byTimeThenSeq)
				model = slices.Insert(model, i, e)
				sawHeap = sawHeap || q.heap
				continue
			}
			wasHeap := q.heap
			want := model[0]
			model = model[1:]
			if got := q.pop(); got != want {
				t.Fatalf("round %d op %d: popped (%d, %d), want (%d, %d)", round, op, got.at, got.seq, want.at, want.seq)
			}
			sawSortedAgain = sawSortedAgain || wasHeap && !q.heap
			if q.len() != len(model) {
				t.Fatalf("round %d: queue holds %d, want %d", round, q.len(), len(model))
			}
		}
	}
	if !sawHeap || !sawSortedAgain {
		t.Fatalf("the queue turned into a heap: %v, and back: %v; the test misses a case", sawHeap, sawSortedAgain)
	}
}

// Dropping the cancelled events at any moment leaves the live ones popping
// in the same (at, seq) order, and frees exactly the cancelled ones, in a
// sorted queue and in a heap (which a drop can make short enough to sort);
// before each drop, appendLive lists the live ones in that order.
func TestEventQueueDropCancelledKeepsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sawHeapDrop, sawDropSorts := false, false
	for round := 0; round < 40; round++ {
		var q eventQueue
		var free eventPool
		var live []*event // the model: live events pushed and not popped
		seq := uint64(0)
		for op := 0; op < 8*maxSorted; op++ {
			r := rng.Float64()
			if op%(4*maxSorted) >= 2*maxSorted { // shrinking: fewer pushes
				r = 0.6 + 0.4*r
			}
			switch {
			case r < 0.7 || len(live) == 0:
				seq++
				e := &event{at: Time(rng.IntN(20)), seq: seq, pending: true}
				q.push(e)
				live = append(live, e)
			case r < 0.85: // cancel a random live event
				i := rng.IntN(len(live))
				live[i].cancelled = true
				live = slices.Delete(live, i, i+1)
			case r < 0.9:
				slices.SortFunc(live, byTimeThenSeq)
				if got := q.appendLive(nil); !slices.Equal(got, live) {
					t.Fatalf("round %d op %d: appendLive gave %d events out of order or not all live (heap %v), want the %d live ones in (at, seq) order", round, op, len(got), q.heap, len(live))
				}
				wasHeap := q.heap
				before := len(free)
				kept := q.dropCancelled(&free)
				if kept != len(live) || q.len() != len(live) {
					t.Fatalf("round %d: kept %d, queue %d, want %d", round, kept, q.len(), len(live))
				}
				for _, e := range free[before:] {
					if e.queued || e.pending {
						t.Fatalf("round %d: a freed event still counts as queued or pending", round)
					}
				}
				sawHeapDrop = sawHeapDrop || wasHeap
				sawDropSorts = sawDropSorts || wasHeap && !q.heap
			default: // pop the first live event, skipping cancelled ones
				slices.SortFunc(live, byTimeThenSeq)
				got := q.pop()
				for got.cancelled {
					got = q.pop()
				}
				if got != live[0] {
					t.Fatalf("round %d op %d: popped (%d, %d), want (%d, %d)", round, op, got.at, got.seq, live[0].at, live[0].seq)
				}
				live = live[1:]
			}
		}
	}
	if !sawHeapDrop || !sawDropSorts {
		t.Fatalf("drops in a heap: %v, drops that sorted it again: %v; the test misses a case", sawHeapDrop, sawDropSorts)
	}
}
