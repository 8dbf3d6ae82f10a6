package simclock

import "slices"

// eventQueue holds the queued events in (at, seq) order. Every event has a
// distinct seq, so the order is total and the queue pops the same sequence
// whichever way it keeps them: the loop's behaviour does not depend on how
// the queue is built, nor on which cancelled events it still holds.
//
// A world's queue is short (a migrate world's holds 23 events on average;
// the longest in the first 30 seeds of migrate, coord, kv, hotspot, lists
// and keymove held 76) and a new event is mostly due soon: it is kept as a
// slice sorted latest first, so the next event is the last one and taking
// it is a slice shrink, and a message lands a few events from the end.
// That replaced a binary heap whose sift-down on every pop was about 4% of
// a migrate world's instructions. A timer, though, is mostly due after
// most queued events: placed from the end, it moved nearly the whole queue
// (a fifth of migrate's pushes made four fifths of the moves). So an event
// due no earlier than the middle one is placed from the latest end, into
// room kept free before the slice (see pushLate). A queue longer than
// maxSorted (a world built far larger than the drawn sizes) turns into a
// binary min-heap, where a push costs log(n) rather than a walk over up to
// n/2 events, and back into a sorted slice once it is short again.
type eventQueue struct {
	h    []*event
	heap bool // h is a binary min-heap, not sorted latest first
	// buf is the array h lies in (while sorted): buf[:cap(buf)-cap(h)] is
	// the free room before h's first, latest, event.
	buf []*event
}

// maxSorted is the longest queue kept sorted; minSorted the length at
// which a heap is sorted again (well below, so that a queue near the
// limit does not switch back and forth).
const (
	maxSorted = 256
	minSorted = maxSorted / 4
)

// before reports whether a runs before b.
func before(a, b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// len returns how many events the queue holds, cancelled ones included.
func (q *eventQueue) len() int { return len(q.h) }

// appendLive appends the queued events that are live (pending and not
// cancelled) to dst, in the order they run. A sorted queue is read
// backwards; only a heap is sorted, which a sorted queue, latest first,
// must not be: pdqsort sorts a short slice by insertion, and reversed
// input is its worst case (it made the coord small search 1.5% slower,
// state digests being taken at every step).
func (q *eventQueue) appendLive(dst []*event) []*event {
	if !q.heap {
		for i := len(q.h) - 1; i >= 0; i-- {
			if e := q.h[i]; !e.cancelled && e.pending {
				dst = append(dst, e)
			}
		}
		return dst
	}
	n := len(dst)
	for _, e := range q.h {
		if !e.cancelled && e.pending {
			dst = append(dst, e)
		}
	}
	slices.SortFunc(dst[n:], func(a, b *event) int {
		if before(a, b) {
			return -1
		}
		return 1
	})
	return dst
}

// push adds e, which must have a larger seq than every queued event (the
// loop's events are numbered as they are made, and each is queued once):
// an event queued earlier then runs before e exactly when it is not due
// later, so finding e's place in a sorted queue compares times alone. An
// event due before the middle one is placed from the end (its walk stops
// past the middle event at the latest); any other from the start, the
// latest end (pushLate).
func (q *eventQueue) push(e *event) {
	n := len(q.h)
	if q.heap || n == maxSorted {
		q.pushHeap(e)
		return
	}
	e.queued = true
	if n > 1 && q.h[n/2].at <= e.at {
		q.pushLate(e)
		return
	}
	if n == cap(q.h) {
		q.recentre()
	}
	h := q.h[:n+1]
	i := n
	for i > 0 && h[i-1].at <= e.at {
		h[i] = h[i-1]
		i--
	}
	h[i] = e
	q.h = h
}

// pushLate places e, due no earlier than the middle event, from the start
// of the queue: it moves the events due later than e one slot down, into
// the room before the queue.
func (q *eventQueue) pushLate(e *event) {
	head := cap(q.buf) - cap(q.h)
	if head == 0 {
		q.recentre()
		head = cap(q.buf) - cap(q.h)
	}
	h := q.buf[head-1 : head+len(q.h)]
	i := 1
	for h[i].at > e.at { // stops at the middle event at the latest
		h[i-1] = h[i]
		i++
	}
	h[i-1] = e
	q.h = h
}

// recentre moves the queue to a slot of buf (or of a larger array, if
// buf is short) with room for half as many events again (at least
// minRoom) both before and after it. The room is not cleared, as pop does
// not clear the slot it frees: every pointer left there is to an event
// the loop still holds (queued, running or pooled), so clearing would
// free nothing, and it cost a store per slot of buf at every recentre.
func (q *eventQueue) recentre() {
	n := len(q.h)
	room := max(n/2, minRoom)
	buf := q.buf[:cap(q.buf)]
	if len(buf) < n+2*room {
		buf = make([]*event, 2*(n+2*room))
	}
	copy(buf[room:], q.h) // overlapping moves are fine: copy is memmove
	q.buf, q.h = buf, buf[room:room+n]
}

// minRoom is the least free room recentre leaves on either side.
const minRoom = 8

// pushHeap is push for a heap, or for a sorted queue that is full, which
// it turns into a heap first.
func (q *eventQueue) pushHeap(e *event) {
	if !q.heap {
		q.toHeap()
	}
	e.queued = true
	q.h = append(q.h, e)
	heapUp(q.h, len(q.h)-1, e)
}

// first returns the next event without taking it; the queue must not be
// empty.
func (q *eventQueue) first() *event {
	if q.heap {
		return q.h[0]
	}
	return q.h[len(q.h)-1]
}

// pop removes and returns the next event; the queue must not be empty.
func (q *eventQueue) pop() *event {
	if q.heap {
		return q.popHeap()
	}
	// The slot past the end keeps its pointer: the event stays in use
	// (run, then pooled by the loop) whatever the queue holds, and a push
	// placed from the earliest end overwrites it (recentre leaves such
	// slots as they are too), so clearing it here would only cost a store.
	n := len(q.h) - 1
	e := q.h[n]
	q.h = q.h[:n]
	e.queued = false
	return e
}

// popHeap is pop for a heap, which it sorts once it is short.
func (q *eventQueue) popHeap() *event {
	h := q.h
	n := len(h) - 1
	e := h[0]
	last := h[n]
	h[n] = nil
	h = h[:n]
	if n > 0 {
		heapFillRoot(h, last)
	}
	q.h = h
	if n <= minSorted {
		q.toSorted()
	}
	e.queued = false
	return e
}

// toHeap turns a sorted queue into a heap: reversed, earliest first, it
// already is one.
func (q *eventQueue) toHeap() {
	slices.Reverse(q.h)
	q.heap = true
}

// toSorted turns a heap back into a sorted queue, in the array the heap
// grew in.
func (q *eventQueue) toSorted() {
	slices.SortFunc(q.h, func(a, b *event) int {
		if before(a, b) {
			return 1
		}
		return -1
	})
	q.heap = false
	q.buf = q.h[:cap(q.h)]
}

// dropCancelled removes the cancelled events, returning them to free, and
// keeps the rest in order. It returns how many it kept.
func (q *eventQueue) dropCancelled(free *eventPool) int {
	h := q.h
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
	q.h = kept
	if q.heap {
		for i := len(kept)/2 - 1; i >= 0; i-- {
			heapDown(kept, i, kept[i])
		}
		if len(kept) <= minSorted {
			q.toSorted()
		}
	}
	return len(kept)
}

// reset empties the queue, giving its events to free.
func (q *eventQueue) reset(free *eventPool) {
	for _, e := range q.h {
		free.put(e)
	}
	*q = eventQueue{}
}

// heapFillRoot refills the empty root of heap h with the earlier child,
// level by level down to a leaf, then puts e in the hole left there and
// sifts it up. e was the heap's last leaf, so it seldom rises far: this
// compares once per level where sifting e down from the root compares
// twice.
func heapFillRoot(h []*event, e *event) {
	i := 0
	for child := earlierChild(h, i); child >= 0; child = earlierChild(h, i) {
		h[i] = h[child]
		i = child
	}
	heapUp(h, i, e)
}

// earlierChild returns the slot of the earlier of slot i's children in
// heap h, or -1 when slot i is a leaf.
func earlierChild(h []*event, i int) int {
	child := 2*i + 1
	if child >= len(h) {
		return -1
	}
	if right := child + 1; right < len(h) && before(h[right], h[child]) {
		child = right
	}
	return child
}

// heapUp puts e in slot i of heap h, or above it, where the heap order
// holds.
func heapUp(h []*event, i int, e *event) {
	for i > 0 {
		parent := (i - 1) / 2
		if !before(e, h[parent]) {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i] = e
}

// heapDown puts e in slot i of heap h, or below it, where the heap order
// holds.
func heapDown(h []*event, i int, e *event) {
	for child := earlierChild(h, i); child >= 0 && before(h[child], e); child = earlierChild(h, i) {
		h[i] = h[child]
		i = child
	}
	h[i] = e
}

// eventPool keeps the events that have run or were discarded, for At to
// reuse: a world schedules an event for every message, timer and task
// wake-up, and allocating each one was an eighth of a migration world's
// allocations. Timer handles tell a reused event from theirs by its seq.
type eventPool []*event

// get returns a free event, or a new one. The slot it leaves keeps its
// pointer, which nothing reads (the pool is read only below its length)
// and a later put overwrites: clearing it was a pointer store, with its
// write barrier while the collector marks, on every event. The event is in
// use, so the slot keeps nothing alive that would not be, except an event
// never put back because its callback panicked: that one, and what its
// callback holds, stays reachable from the pool until a put overwrites it.
func (p *eventPool) get() *event {
	if n := len(*p); n > 0 {
		e := (*p)[n-1]
		*p = (*p)[:n-1]
		return e
	}
	return new(event)
}

// spareEvents keeps the event pools of closed loops for the next loops
// of the process, as spareCoroutines keeps coroutines: a migrate world
// made about 43 events afresh. Loop.Close returns every event its loop
// still holds, queued or free, to its pool and the pool to the spares; put
// has emptied each event, so a loop that takes the pool gets events as new
// ones and no run changes. A timer handle of the closed world cannot reach
// a reused event, since nothing of that world runs after Close. Loops that
// track states keep theirs (a model checker may still read them). At most
// maxSparePools pools are kept.
var spareEvents = spareList[eventPool]{max: maxSparePools}

// maxSparePools bounds the spare pools: one for each of a few workers.
const maxSparePools = 8

// put returns e, which no queue holds any more, to the pool, dropping
// what it refers to.
func (p *eventPool) put(e *event) {
	*e = event{}
	*p = append(*p, e)
}
