package simclock

// eventQueue is a binary min-heap of events ordered by (at, seq). Every
// event has a distinct seq, so the order is total and any correct heap
// pops the same sequence: the loop's behaviour does not depend on how the
// heap is built, nor on which cancelled events it still holds.
//
// It is written out for *event rather than going through container/heap,
// whose interface calls (Less, Swap, Push and Pop through an `any`) were
// about 6% of a migration world's CPU time.
type eventQueue []*event

// before reports whether a runs before b.
func before(a, b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// push adds e.
func (q *eventQueue) push(e *event) {
	e.queued = true
	h := append(*q, e)
	h.siftUp(len(h)-1, e)
	*q = h
}

// pop removes and returns the first event; the queue must not be empty.
func (q *eventQueue) pop() *event {
	h := *q
	first := h[0]
	first.queued = false
	last := h[len(h)-1]
	h[len(h)-1] = nil
	h = h[:len(h)-1]
	*q = h
	if len(h) > 0 {
		h.fillRoot(last)
	}
	return first
}

// fillRoot refills the empty root with the earlier child, level by level
// down to a leaf, then puts e in the hole left there and sifts it up.
// e was the heap's last leaf, so it seldom rises far: this compares once
// per level where sifting e down from the root compares twice.
func (h eventQueue) fillRoot(e *event) {
	i := 0
	for child := h.earlierChild(i); child >= 0; child = h.earlierChild(i) {
		h[i] = h[child]
		i = child
	}
	h.siftUp(i, e)
}

// earlierChild returns the slot of the earlier of slot i's children, or
// -1 when slot i is a leaf.
func (h eventQueue) earlierChild(i int) int {
	child := 2*i + 1
	if child >= len(h) {
		return -1
	}
	if right := child + 1; right < len(h) && before(h[right], h[child]) {
		child = right
	}
	return child
}

// siftUp puts e in slot i, or above it, where the heap order holds.
func (h eventQueue) siftUp(i int, e *event) {
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

// siftDown puts e in slot i, or below it, where the heap order holds.
func (h eventQueue) siftDown(i int, e *event) {
	for child := h.earlierChild(i); child >= 0 && before(h[child], e); child = h.earlierChild(i) {
		h[i] = h[child]
		i = child
	}
	h[i] = e
}

// dropCancelled removes the cancelled events, returning them to free, and
// restores the heap order over the rest. It returns how many it kept. The
// events that remain pop in the same order as before: the order is total.
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
	for i := len(kept)/2 - 1; i >= 0; i-- {
		kept.siftDown(i, kept[i])
	}
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
