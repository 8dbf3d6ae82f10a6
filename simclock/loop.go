package simclock

import (
	"fmt"
	"time"
)

// Budget bounds a run. A zero field means no bound of that kind.
type Budget struct {
	MaxTime   Time   // stop before executing an event scheduled after this
	MaxEvents uint64 // stop after executing this many events
}

// StopReason says why Run returned.
type StopReason int

const (
	// Idle means the queue emptied: nothing more can happen.
	Idle StopReason = iota
	// TimeBudget means the next event lies beyond Budget.MaxTime.
	TimeBudget
	// EventBudget means Budget.MaxEvents events ran.
	EventBudget
	// Stopped means something called Loop.Stop.
	Stopped
)

func (r StopReason) String() string {
	switch r {
	case Idle:
		return "idle"
	case TimeBudget:
		return "time-budget"
	case EventBudget:
		return "event-budget"
	case Stopped:
		return "stopped"
	}
	return fmt.Sprintf("StopReason(%d)", int(r))
}

// event is one scheduled callback. The queue keeps events by time, then by
// scheduling order (seq); which of several events due at the same time runs
// first is a choice of the loop's order stream (see Loop.OrderBy).
type event struct {
	at  Time
	seq uint64
	fn  func() // the callback; nil for an actor's event
	// An actor's event (see Context.DeferCall and Loop.post), kept in the
	// event rather than in a closure around Loop.run: one allocation less
	// for every message.
	actor     ActorID
	inc       uint64
	cb        Callback // the work (Context.DeferCall), or nil to deliver msg
	msg       any
	pending   bool // scheduled, and neither run nor discarded
	cancelled bool
	queued    bool   // in the loop's queue (not yet taken into its due list)
	loop      *Loop  // the loop that scheduled it, for Timer.Cancel
	owner     int32  // the actor the event runs on, plus one (0: none)
	id        Digest // its name, when states are tracked (see TrackStates)
}

// Timer is a handle to a scheduled event; Cancel stops it from running.
// The loop reuses an event once it has run or been discarded (see
// eventPool), so the handle also holds the event's seq: a handle whose
// event was reused for a later one no longer matches it.
type Timer struct {
	ev  *event
	seq uint64
}

// Cancel prevents the event from running. Cancelling a fired or already
// cancelled timer does nothing. It reports whether the event was pending.
func (t Timer) Cancel() bool {
	if t.ev == nil || t.ev.seq != t.seq || t.ev.cancelled || !t.ev.pending {
		return false
	}
	t.ev.cancelled = true
	if t.ev.queued {
		l := t.ev.loop
		l.cancelled++
		l.dropCancelledIfMost()
	}
	return true
}

// minCancelledToDrop is how many cancelled events the queue must hold
// before they are dropped: below it, a rebuild costs more than the few
// log(n) steps they add.
const minCancelledToDrop = 16

// dropCancelledIfMost drops the queue's cancelled events once they are at
// least minCancelledToDrop and more than half of it. A cancelled timer would
// otherwise stay queued until its time (most are deadlines and leases far
// ahead): in a coord world about 90 of the queue's 97 events, on average,
// were, and every push and pop sifted through them; state tracking's
// AppendState reads the whole queue for every state. It is checked wherever
// their share grows: when a queued timer is cancelled and when a live event
// leaves the queue. Dropping them changes no run: the live events pop in
// the same total (at, seq) order, and gatherDue never lets a cancelled
// event count among the due ones whose order is drawn.
func (l *Loop) dropCancelledIfMost() {
	if l.cancelled >= minCancelledToDrop && 2*l.cancelled > l.queue.len() {
		l.queue.dropCancelled(&l.free)
		l.cancelled = 0
	}
}

// Loop is the event loop of a world: a priority queue of callbacks ordered by
// virtual time. Among events due at the same time, the order stream picks
// which runs next (without one, or on an all-zero stream, they run in the
// order they were scheduled). It owns the world's virtual time, its trace
// and its actors.
type Loop struct {
	now       Time
	queue     eventQueue
	cancelled int // events in queue that were cancelled (see dropCancelledIfMost)
	free      eventPool
	due       []*event // events at time now taken off the queue, in scheduling order
	order     *Choices // picks among due events; nil means first scheduled first
	seq       uint64
	executed  uint64
	budget    Budget
	stopped   bool
	trace     *Trace
	observers []func()
	actors    []*actorSlot
	idle      []*coroutine // parked coroutines for the next tasks (see Context.Go)
	ids       uint64       // the last id NextID handed out
	st        *stateTrack  // nil unless a model checker tracks states
}

// NewLoop returns an empty loop at time zero writing to trace.
func NewLoop(trace *Trace, budget Budget) *Loop {
	if trace == nil {
		trace = NewTrace(64)
	}
	free, _ := spareEvents.take(nil)
	return &Loop{trace: trace, budget: budget, free: free}
}

// releaseEvents gives every event the loop holds (queued, due or free)
// back to the spare pools, emptied (see spareEvents). Loop.Close calls
// it last; a loop that tracks states keeps its events.
func (l *Loop) releaseEvents() {
	if l.st != nil {
		return
	}
	l.queue.reset(&l.free)
	for _, e := range l.due {
		l.free.put(e)
	}
	clear(l.due)
	l.due = l.due[:0]
	l.cancelled = 0
	if len(l.free) > 0 {
		spareEvents.keep(l.free)
	}
	l.free = nil
}

// Now returns the current virtual time.
func (l *Loop) Now() Time { return l.now }

// Trace returns the loop's trace.
func (l *Loop) Trace() *Trace { return l.trace }

// Events returns how many events have run.
func (l *Loop) Events() uint64 {
	if l.st != nil {
		l.st.read(l.executed)
	}
	return l.executed
}

// Pending returns how many events are queued, including cancelled ones not
// yet discarded (see dropCancelledIfMost): how many of those it counts is
// an artefact of the queue, so a world must not let the number steer it.
func (l *Loop) Pending() int {
	n := l.queue.len() + len(l.due)
	if l.st != nil {
		l.st.read(uint64(n))
	}
	return n
}

// OrderBy makes c decide the order of events due at the same virtual time:
// whenever k > 1 such events are ready, one draw below k picks the next, and
// zero picks the one scheduled first, so a quiet stream keeps the
// first-in, first-out order. Real systems give no such order (two messages
// sent to arrive at once, a timer and a reply), so it is explored like any
// other choice. Set it before the first event runs; nil restores FIFO.
func (l *Loop) OrderBy(c *Choices) { l.order = c }

// Log adds a trace record at the current time.
func (l *Loop) Log(kind, actor, detail string) { l.trace.Add(l.now, kind, actor, detail) }

// At schedules fn at virtual time at (or now, if at is in the past).
func (l *Loop) At(at Time, fn func()) Timer {
	ev := l.newEvent(at)
	ev.fn = fn
	return l.enqueue(ev)
}

// newEvent returns a free event due at virtual time at (or now, if at is in
// the past), with the next seq, for its scheduler to fill in and enqueue.
// Filling the pooled event in place spares copying a whole event per
// message (it was passed and stored by value).
func (l *Loop) newEvent(at Time) *event {
	if at < l.now {
		at = l.now
	}
	l.seq++
	ev := l.free.get()
	ev.at, ev.seq, ev.pending, ev.loop = at, l.seq, true, l
	return ev
}

// enqueue queues ev, made by newEvent and filled in.
func (l *Loop) enqueue(ev *event) Timer {
	l.queue.push(ev)
	if l.st != nil {
		l.st.scheduled(ev)
	}
	return Timer{ev: ev, seq: ev.seq}
}

// After schedules fn d after now.
func (l *Loop) After(d time.Duration, fn func()) Timer {
	if d < 0 {
		d = 0
	}
	return l.At(l.now.Add(d), fn)
}

// OnStep registers fn to run after every event; checkers use it to test
// safety properties at every step. Observers must not schedule events.
func (l *Loop) OnStep(fn func()) { l.observers = append(l.observers, fn) }

// Stop makes Run return after the current event.
func (l *Loop) Stop() { l.stopped = true }

// SetBudget replaces the run budget.
func (l *Loop) SetBudget(b Budget) { l.budget = b }

// Step runs the next pending event. It returns false, and runs nothing, when
// the queue is empty or the time budget forbids the next event.
func (l *Loop) Step() (StopReason, bool) {
	e, reason := l.takeNext()
	if e == nil {
		return reason, false
	}
	l.now = e.at
	e.pending = false
	if st := l.st; st != nil {
		st.begin(l, e)
		l.exec(e)
		st.end()
	} else {
		l.exec(e)
	}
	l.free.put(e)
	l.executed++
	for _, o := range l.observers {
		o()
	}
	if l.st != nil && l.st.visit != nil && !l.st.visit() {
		l.stopped = true
	}
	return Idle, true
}

// takeNext takes the event to run next off the queue, or returns nil and
// why there is none. Nearly always a single event is due at the earliest
// time (in a migrate world 99.4% of steps): that one is taken straight off
// the queue, and l.due, with the draw among several, is left for the
// others. Both ways pop and discard the same events in the same order as
// gatherDue alone would, so the pool, the cancelled count and Pending see
// no difference. The tests before skipCancelled and dropCancelledIfMost
// repeat their own on purpose: neither is inlined, and the tests keep
// their calls off the common step.
func (l *Loop) takeNext() (*event, StopReason) {
	if len(l.due) == 0 {
		if l.headCancelled() {
			l.skipCancelled()
		}
		if l.queue.len() == 0 {
			return nil, Idle
		}
		e := l.queue.first()
		if l.budget.MaxTime > 0 && e.at > l.budget.MaxTime {
			return nil, TimeBudget
		}
		l.queue.pop()
		if l.cancelled >= minCancelledToDrop {
			l.dropCancelledIfMost()
		}
		if l.headCancelled() {
			l.skipCancelled()
		}
		if l.queue.len() == 0 || l.queue.first().at != e.at {
			return e, Idle // the only event due: no order to draw
		}
		l.due = append(l.due, e)
	}
	return l.takeDue()
}

// takeDue gathers the events due at the earliest time (see gatherDue) and
// takes the one the order stream picks among them, or returns nil and why
// there is none.
func (l *Loop) takeDue() (*event, StopReason) {
	if !l.gatherDue() {
		if len(l.due) > 0 || l.queue.len() > 0 {
			return nil, TimeBudget
		}
		return nil, Idle
	}
	i := 0
	if len(l.due) > 1 && l.order != nil {
		if l.st != nil {
			l.st.ordering = true
		}
		i = l.order.Intn(len(l.due))
		if l.st != nil {
			l.st.ordering = false
		}
	}
	e := l.due[i]
	if last := len(l.due) - 1; i < last {
		copy(l.due[i:], l.due[i+1:])
	}
	l.due[len(l.due)-1] = nil
	l.due = l.due[:len(l.due)-1]
	return e, Idle
}

// headCancelled reports whether the queue's next event was cancelled.
func (l *Loop) headCancelled() bool {
	return l.queue.len() > 0 && l.queue.first().cancelled
}

// skipCancelled discards the cancelled events at the head of the queue.
func (l *Loop) skipCancelled() {
	for l.headCancelled() {
		e := l.queue.pop()
		l.cancelled--
		e.pending = false
		l.free.put(e)
	}
}

// gatherDue makes l.due hold every live event due at the earliest pending
// time, in scheduling order, and reports whether there is one the time
// budget allows. Events scheduled for now while due events wait join them:
// their seq is larger than every event already taken, so order is kept.
func (l *Loop) gatherDue() bool {
	live := l.due[:0]
	for _, e := range l.due {
		if e.cancelled {
			e.pending = false
			l.free.put(e)
			continue
		}
		live = append(live, e)
	}
	clear(l.due[len(live):])
	l.due = live
	for {
		l.skipCancelled()
		if l.queue.len() == 0 {
			break
		}
		e := l.queue.first()
		if len(l.due) > 0 && e.at != l.due[0].at {
			break
		}
		if len(l.due) == 0 && l.budget.MaxTime > 0 && e.at > l.budget.MaxTime {
			return false
		}
		l.queue.pop()
		l.due = append(l.due, e)
		l.dropCancelledIfMost()
	}
	if len(l.due) == 0 {
		return false
	}
	return l.budget.MaxTime == 0 || l.due[0].at <= l.budget.MaxTime
}

// Run executes events until the queue empties, a budget is reached or Stop
// is called.
func (l *Loop) Run() StopReason {
	l.stopped = false
	for {
		if l.stopped {
			return Stopped
		}
		if l.budget.MaxEvents > 0 && l.executed >= l.budget.MaxEvents {
			if l.st != nil {
				l.st.budgetHit = true
			}
			return EventBudget
		}
		reason, ran := l.Step()
		if !ran {
			return reason
		}
	}
}

// RunUntil executes events scheduled at or before t, then advances the clock
// to t. It returns early on Stop or the event budget.
func (l *Loop) RunUntil(t Time) StopReason {
	saved := l.budget.MaxTime
	if saved == 0 || t < saved {
		l.budget.MaxTime = t
	}
	reason := l.Run()
	l.budget.MaxTime = saved
	if reason == TimeBudget || reason == Idle {
		if l.now < t {
			l.now = t
		}
		if saved > 0 && t >= saved {
			return TimeBudget
		}
		return Idle
	}
	return reason
}

// exec runs e: its callback, or its actor's event.
func (l *Loop) exec(e *event) {
	if e.fn != nil {
		e.fn()
		return
	}
	l.run(e.actor, e.inc, e.cb, e.msg)
}
