package migrate

import "sort"

// waitQueue holds a leader's waiters sorted by index (equal indexes in
// arrival order). Applies answer them from the front: popping advances a
// head offset instead of reslicing the front away, so the slice keeps its
// capacity and a leader that proposes steadily reuses it rather than
// reallocating it for every few proposals.
type waitQueue struct {
	ws   []waiter // ws[head:] are the waiting ones
	head int
}

// len returns the number of waiters.
func (q *waitQueue) len() int { return len(q.ws) - q.head }

// front returns the waiter with the lowest index; the queue must not be
// empty.
func (q *waitQueue) front() waiter { return q.ws[q.head] }

// pop removes and returns the front waiter.
func (q *waitQueue) pop() waiter {
	w := q.ws[q.head]
	q.ws[q.head] = waiter{} // the callback may hold much: let it go
	q.head++
	if q.head == len(q.ws) {
		q.ws, q.head = q.ws[:0], 0
	}
	return w
}

// insert adds w after every waiter whose index is at most w's.
func (q *waitQueue) insert(w waiter) {
	if q.head > 0 && len(q.ws) == cap(q.ws) {
		// Reuse the popped front before growing.
		n := copy(q.ws, q.ws[q.head:])
		clear(q.ws[n:])
		q.ws, q.head = q.ws[:n], 0
	}
	live := q.ws[q.head:]
	if n := len(live); n == 0 || live[n-1].index <= w.index {
		q.ws = append(q.ws, w) // the common case: proposals come in index order
		return
	}
	i := sort.Search(len(live), func(i int) bool { return live[i].index > w.index })
	q.ws = append(q.ws, waiter{})
	live = q.ws[q.head:]
	copy(live[i+1:], live[i:])
	live[i] = w
}

// takeAll empties the queue and returns its waiters in order; waiters
// inserted afterwards go to a fresh queue and are not among them.
func (q *waitQueue) takeAll() []waiter {
	ws := q.ws[q.head:]
	q.ws, q.head = nil, 0
	return ws
}
