package simclock

import "sort"

// eventQueue holds the queued events sorted by (at, seq), latest first: the
// next event is the last one, so taking it is a slice shrink. Every event
// has a distinct seq, so the order is total and the queue pops the same
// sequence as any other correct priority queue: the loop's behaviour does
// not depend on how the queue is built, nor on which cancelled events it
// still holds.
//
// A sorted slice replaced a binary heap (whose sift-down on every pop was
// about 4% of a migrate world's instructions): a world's queue is short
// (a migrate world's holds 23 events on average, at most about 80) and a
// new event is mostly due soon, so it lands near the end, past 5 events
// on average. push walks back over those few; a long way (a timer far
// ahead in a large queue) is found by binary search and made with one copy.
type eventQueue []*event

// before reports whether a runs before b.
func before(a, b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// walkLimit is how many events push steps over one at a time before it
// looks for the place by binary search instead.
const walkLimit = 8

// push adds e, which must have a larger seq than every queued event (the
// loop's events are numbered as they are made, and each is queued once):
// an event queued earlier then runs before e exactly when it is not due
// later, so finding e's place compares times alone.
func (q *eventQueue) push(e *event) {
	e.queued = true
	h := append(*q, e)
	i := len(h) - 1
	for stop := max(i-walkLimit, 0); i > stop && h[i-1].at <= e.at; i-- {
		h[i] = h[i-1]
	}
	if i > 0 && h[i-1].at <= e.at { // still earlier events below: a long way
		j := sort.Search(i, func(k int) bool { return h[k].at <= e.at })
		copy(h[j+1:i+1], h[j:i])
		i = j
	}
	h[i] = e
	*q = h
}

// first returns the next event without taking it; the queue must not be
// empty.
func (q eventQueue) first() *event { return q[len(q)-1] }

// pop removes and returns the next event; the queue must not be empty.
func (q *eventQueue) pop() *event {
	h := *q
	n := len(h) - 1
	e := h[n]
	h[n] = nil
	*q = h[:n]
	e.queued = false
	return e
}

// dropCancelled removes the cancelled events, returning them to free, and
// keeps the rest in order. It returns how many it kept.
func (q *eventQueue) dropCancelled(free *eventPool) int {
	h := *q
	kept := h[:0]
	for _, e := range h {
		if e.cancelled {
			e.queued, e.pending = false, false
			free.put(e)
			continue
		}
		kept = append(kept, e)
	}
	clear(h[len(kept):])
	*q = kept
	return len(kept)
}

// eventPool keeps the events that have run or were discarded, for At to
// reuse: a world schedules an event for every message, timer and task
// wake-up, and allocating each one was an eighth of a migration world's
// allocations. Timer handles tell a reused event from theirs by its seq.
type eventPool []*event

// get returns a free event, or a new one.
func (p *eventPool) get() *event {
	if n := len(*p); n > 0 {
		e := (*p)[n-1]
		(*p)[n-1] = nil
		*p = (*p)[:n-1]
		return e
	}
	return new(event)
}

// put returns e, which no queue holds any more, to the pool, dropping
// what it refers to.
func (p *eventPool) put(e *event) {
	*e = event{}
	*p = append(*p, e)
}
