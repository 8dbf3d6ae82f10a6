package simclock

import (
	"fmt"
	"time"
)

// ActorID names an actor within its loop. IDs are dense and stable.
type ActorID int

// Actor is a node of the simulated world. It handles one message at a time
// and never blocks: it reacts through its Context (send, set timers, start
// tasks) and returns.
type Actor interface {
	Receive(ctx *Context, msg any)
}

// Started is delivered to an actor when it is spawned and after every
// restart, so it can set up its timers and tasks.
type Started struct{}

type actorSlot struct {
	name        string
	actor       Actor
	incarnation uint64
	down        bool
	paused      bool
	held        []heldEvent
	clock       *NodeClock
	choices     *Choices
	tasks       []*Task
	ctx         *Context // the current incarnation's context, made on first use
	chain       Digest   // the actor's history, when states are tracked
}

// heldEvent is an event that reached a paused actor: it runs again when the
// actor resumes, under the same name.
type heldEvent struct {
	fn func()
	id Digest
}

// Spawn adds an actor with its own clock and choice fork and delivers Started
// to it now. choices may be nil when the actor draws nothing.
func (l *Loop) Spawn(name string, a Actor, clock *NodeClock, choices *Choices) ActorID {
	id := ActorID(len(l.actors))
	slot := &actorSlot{name: name, actor: a, clock: clock, choices: choices}
	l.actors = append(l.actors, slot)
	if l.st != nil {
		l.st.reborn = append(l.st.reborn, slot)
	}
	l.Log("actor.spawn", name, "")
	l.post(id, 0, 0, Started{})
	return id
}

// Name returns the actor's name.
func (l *Loop) Name(id ActorID) string { return l.actors[id].name }

// Actor returns the current incarnation's actor value. With states
// tracked, the running event's history takes in the actor's, since what it
// reads of the actor's memory is a function of it.
func (l *Loop) Actor(id ActorID) Actor {
	s := l.actors[id]
	if l.st != nil {
		l.st.digest(tagRead, s.chain)
	}
	return s.actor
}

// Clock returns the actor's node clock (nil means virtual time itself).
// The caller may change it, so with states tracked the running event
// counts as shared.
func (l *Loop) Clock(id ActorID) *NodeClock {
	c := l.actors[id].clock
	if l.st != nil {
		l.st.touched = true
		l.st.buf = appendClock(l.st.buf, c)
	}
	return c
}

// Up reports whether the actor is running (not crashed); a paused actor is up.
func (l *Loop) Up(id ActorID) bool {
	up := !l.actors[id].down
	if l.st != nil {
		l.st.read(b2u(up))
	}
	return up
}

// Paused reports whether the actor is paused.
func (l *Loop) Paused(id ActorID) bool {
	p := l.actors[id].paused
	if l.st != nil {
		l.st.read(b2u(p))
	}
	return p
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Crash stops the actor: its volatile state, pending timers, in-flight
// messages to it and running tasks are lost.
func (l *Loop) Crash(id ActorID) {
	s := l.actors[id]
	if s.down {
		return
	}
	s.down, s.paused, s.held = true, false, nil
	s.incarnation++
	if l.st != nil {
		l.st.touched = true // the tasks unwind: their deferred calls may touch anything
	}
	l.Log("actor.crash", s.name, "")
	tasks := s.tasks
	s.tasks = nil
	for _, t := range tasks {
		t.kill()
	}
}

// Restart brings a crashed actor back as a fresh value a (volatile state is
// whatever a starts with) and delivers Started to it.
func (l *Loop) Restart(id ActorID, a Actor) {
	s := l.actors[id]
	if !s.down {
		l.Crash(id)
	}
	s.down, s.actor = false, a
	if l.st != nil {
		l.st.touched = true
		l.st.reborn = append(l.st.reborn, s)
	}
	l.Rec("actor.restart", s.name).Uint("incarnation", s.incarnation).End()
	l.post(id, s.incarnation, 0, Started{})
}

// Pause freezes the actor: everything addressed to it is held until Resume.
// A resumed actor is a zombie: it still believes what it believed before.
func (l *Loop) Pause(id ActorID) {
	s := l.actors[id]
	if s.down || s.paused {
		return
	}
	s.paused = true
	if l.st != nil {
		l.st.touched = true
	}
	l.Log("actor.pause", s.name, "")
}

// Resume delivers, now and in their original order, everything held while
// the actor was paused.
func (l *Loop) Resume(id ActorID) {
	s := l.actors[id]
	if !s.paused {
		return
	}
	s.paused = false
	held := s.held
	s.held = nil
	l.Log("actor.resume", s.name, fmt.Sprintf("held=%d", len(held)))
	if l.st != nil {
		l.st.touched = true
	}
	for _, h := range held {
		ev := l.newEvent(l.now)
		ev.fn, ev.owner, ev.id = h.fn, int32(id)+1, h.id
		l.queue.push(ev) // keeps its name (not enqueue, which names it anew): the same event, delayed
	}
}

// run is one event of the actor's incarnation inc: cb's Fire with the
// actor's context, or, with cb nil, msg to the actor's Receive. It is
// dropped if the incarnation is gone and held while the actor is paused.
func (l *Loop) run(id ActorID, inc uint64, cb Callback, msg any) {
	s := l.actors[id]
	if s.down || s.incarnation != inc {
		if l.st != nil {
			l.st.void = true // dropped: nothing changed but the queue
		}
		return
	}
	if s.paused {
		h := heldEvent{fn: func() { l.run(id, inc, cb, msg) }}
		if l.st != nil {
			l.st.void, h.id = true, l.st.curID
		}
		s.held = append(s.held, h)
		return
	}
	if cb != nil {
		cb.Fire(s.context(l, id))
		return
	}
	s.actor.Receive(s.context(l, id), msg)
}

// context returns the context of the actor's current incarnation. A
// context never changes, so one serves every event of an incarnation.
func (s *actorSlot) context(l *Loop, id ActorID) *Context {
	if s.ctx == nil || s.ctx.inc != s.incarnation {
		s.ctx = &Context{loop: l, id: id, inc: s.incarnation}
	}
	return s.ctx
}

// Send delivers msg to actor to after delay, from outside any actor (the
// nemesis, a scenario driver, the KV server).
func (l *Loop) Send(to ActorID, msg any, delay time.Duration) {
	l.post(to, l.actors[to].incarnation, delay, msg)
}

// post schedules msg for the actor's incarnation inc after d, to the
// actor's Receive. It is dropped if the actor crashed since, and held if
// the actor is paused when it fires.
func (l *Loop) post(id ActorID, inc uint64, d time.Duration, msg any) Timer {
	ev := l.newEvent(l.now.Add(max(d, 0)))
	ev.actor, ev.inc, ev.msg, ev.owner = id, inc, msg, int32(id)+1
	return l.enqueue(ev)
}

// Context is an actor's handle on the world while it handles one event.
type Context struct {
	loop *Loop
	id   ActorID
	inc  uint64
}

// Loop returns the world's loop (for components such as the KV client that
// schedule on an actor's behalf).
func (c *Context) Loop() *Loop { return c.loop }

// Self returns the actor's id.
func (c *Context) Self() ActorID { return c.id }

// Name returns the actor's name.
func (c *Context) Name() string { return c.loop.actors[c.id].name }

// Now returns virtual time. Protocol code should prefer Local.
func (c *Context) Now() Time { return c.loop.now }

// Local returns the actor's node-clock reading.
func (c *Context) Local() Time { return c.loop.actors[c.id].clock.Read(c.loop.now) }

// Choices returns the actor's own choice fork.
func (c *Context) Choices() *Choices { return c.loop.actors[c.id].choices }

// Log adds a trace record attributed to the actor.
func (c *Context) Log(kind, detail string) { c.loop.Log(kind, c.Name(), detail) }

// Send delivers msg to another actor after delay.
func (c *Context) Send(to ActorID, msg any, delay time.Duration) { c.loop.Send(to, msg, delay) }

// After delivers msg to this actor once d has passed on its own clock. The
// timer dies with the incarnation and waits while the actor is paused.
func (c *Context) After(d time.Duration, msg any) Timer {
	d = c.loop.actors[c.id].clock.RealDuration(d)
	return c.loop.post(c.id, c.inc, d, msg)
}

// Defer runs fn as an event of this actor's current incarnation after d of
// virtual time: DeferCall with fn as the callback.
func (c *Context) Defer(d time.Duration, fn func(*Context)) Timer {
	return c.DeferCall(d, CallbackFunc(fn))
}

// Callback is an event's work as a value: Fire runs it with the actor's
// context. A pointer that implements it is handed over without the
// allocation a closure or method value for Defer costs, which counts for
// callbacks made per request (deadlines, answers in flight).
type Callback interface {
	Fire(ctx *Context)
}

// CallbackFunc is a function as a Callback. A func value fits in an
// interface without an allocation, so Defer costs only fn's own closure.
type CallbackFunc func(*Context)

// Fire calls f.
func (f CallbackFunc) Fire(ctx *Context) { f(ctx) }

// DeferCall runs cb.Fire as an event of this actor's current incarnation
// after d of virtual time. It is dropped if the actor crashes first and
// held while it is paused.
func (c *Context) DeferCall(d time.Duration, cb Callback) Timer {
	l := c.loop
	ev := l.newEvent(l.now.Add(max(d, 0)))
	ev.actor, ev.inc, ev.cb, ev.owner = c.id, c.inc, cb, int32(c.id)+1
	return l.enqueue(ev)
}
