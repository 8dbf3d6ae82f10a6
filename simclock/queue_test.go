package simclock

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The queue pops events in (at, seq) order whatever the mix of pushes and
// pops: checked against a sorted list on random workloads with many equal
// times, the case where the order among them is up to seq.
func TestEventQueuePopsInTimeThenSeqOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		var q eventQueue
		var model []*event
		seq := uint64(0)
		for op := 0; op < 500; op++ {
			if len(model) == 0 || rng.IntN(3) > 0 {
				seq++
				e := &event{at: Time(rng.IntN(20)), seq: seq}
				q.push(e)
				model = append(model, e)
				continue
			}
			slices.SortFunc(model, func(a, b *event) int {
				if a.at < b.at || a.at == b.at && a.seq < b.seq {
					return -1
				}
				return 1
			})
			want := model[0]
			model = model[1:]
			if got := q.pop(); got != want {
				t.Fatalf("round %d op %d: popped (%d, %d), want (%d, %d)", round, op, got.at, got.seq, want.at, want.seq)
			}
			if len(q) != len(model) {
				t.Fatalf("round %d: queue holds %d, want %d", round, len(q), len(model))
			}
		}
	}
}

// Dropping the cancelled events at any moment leaves the live ones popping
// in the same (at, seq) order, and frees exactly the cancelled ones.
func TestEventQueueDropCancelledKeepsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 200; round++ {
		var q eventQueue
		var free eventPool
		var live []*event // the model: live events pushed and not popped
		seq := uint64(0)
		for op := 0; op < 400; op++ {
			switch r := rng.IntN(10); {
			case r < 5 || len(live) == 0:
				seq++
				e := &event{at: Time(rng.IntN(20)), seq: seq, pending: true}
				q.push(e)
				live = append(live, e)
			case r < 7: // cancel a random live event
				i := rng.IntN(len(live))
				live[i].cancelled = true
				live = slices.Delete(live, i, i+1)
			case r < 8:
				before := len(free)
				kept := q.dropCancelled(&free)
				if kept != len(live) || len(q) != len(live) {
					t.Fatalf("round %d: kept %d, queue %d, want %d", round, kept, len(q), len(live))
				}
				for _, e := range free[before:] {
					if e.queued || e.pending {
						t.Fatalf("round %d: a freed event still counts as queued or pending", round)
					}
				}
			default: // pop the first live event, skipping cancelled ones
				slices.SortFunc(live, func(a, b *event) int {
					if a.at < b.at || a.at == b.at && a.seq < b.seq {
						return -1
					}
					return 1
				})
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
}
