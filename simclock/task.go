package simclock

import (
	"iter"
	"time"
)

// Task runs direct-style protocol code (read, compare-and-swap, retry after a
// backoff) as a coroutine of one actor. The code calls blocking-looking
// functions such as a KV client's Txn; each of them parks the task with Await
// and the world resumes it from a later event of the same actor. Exactly one
// piece of code runs at a time and every switch happens at a defined point,
// so a task is as deterministic as a hand-written state machine, and the same
// protocol code can run unchanged over a real etcd client.
//
// Tasks are built on iter.Pull: control passes explicitly between the loop
// and the task; there is no parallelism and no scheduler involvement.
type Task struct {
	name string
	ctx  *Context
	body func(t *Task)
	co   *coroutine // runs the body; nil once the task ended

	waiter     Waiter        // set by AwaitOn (and Await) before yielding
	sleepFor   time.Duration // the virtual time the current Sleep waits
	sleepDone  Resumer       // the current Sleep's resume
	value      any           // the value Await returns
	token      uint64        // identifies the current Await
	fired      bool          // the current Await was resumed
	inRegister bool          // the Waiter's Wait is running
	syncResume bool          // resumed from inside register
	done       bool
	killed     bool
}

// Resumer resumes one parked Await (or AwaitOn) of a task: Resume(v) makes
// it return v. It is a plain value, so handing it out allocates nothing,
// unlike the resume function Await hands its register. Only the first
// Resume of the Await it was made for counts: later ones, and any Resume
// once the task has parked again or ended, are ignored.
type Resumer struct {
	t     *Task
	token uint64
}

// Resume makes the Await the resumer was made for return v, at once if it
// is called while that Await's registration still runs, or else by running
// the task until it parks again.
func (r Resumer) Resume(v any) {
	t := r.t
	if t == nil || t.done || t.token != r.token || t.fired {
		return
	}
	t.fired = true
	t.value = v
	if t.inRegister {
		t.syncResume = true
		return
	}
	t.step()
}

// Waiter is what AwaitOn parks a task on: Wait is Await's register, called
// once, outside the task, with the Resumer of that Await.
type Waiter interface {
	Wait(r Resumer)
}

// killedSignal unwinds a task's stack when its actor crashes.
type killedSignal struct{}

// Go starts body as a task of this actor. It runs at once until its first
// Await (or to completion). The task dies with the actor's incarnation.
func (c *Context) Go(name string, body func(t *Task)) *Task {
	t := &Task{name: name, ctx: c, body: body}
	t.co = c.loop.coroutine()
	t.co.task = t
	slot := c.loop.actors[c.id]
	slot.tasks = append(slot.tasks, t)
	t.step()
	return t
}

// coroutine is an iter.Pull coroutine that runs task bodies one after
// another. A world starts tens of tasks per run; giving each a coroutine of
// its own cost a goroutine, the coroutine's plumbing and, as the body ran,
// the growth of a fresh stack (runtime.newstack and morestack were about 5%
// of a migration world's CPU time). A coroutine whose body ended, or was
// killed and unwound, parks idle in its loop's pool (see Loop.coroutine)
// and runs the loop's next task body on the stack it already grew.
//
// Each loop has its own pool, so a world takes no lock per task; a closed
// loop leaves its idle coroutines to the next worlds (spareCoroutines).
type coroutine struct {
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	task  *Task // the task whose body runs, or nil while idle
	idle  bool  // parked between bodies (not inside an Await)
}

// coroutine returns an idle coroutine from the loop's pool, or one a closed
// loop left (see spareCoroutines), or a new one.
func (l *Loop) coroutine() *coroutine {
	if n := len(l.idle); n > 0 {
		co := l.idle[n-1]
		l.idle[n-1] = nil
		l.idle = l.idle[:n-1]
		return co
	}
	if co, ok := spareCoroutines.take(nil); ok {
		return co
	}
	co := &coroutine{}
	co.next, co.stop = iter.Pull(co.run)
	return co
}

// spareCoroutines keeps idle coroutines of closed loops for the next
// worlds of the process: a migrate world starts about 250 tasks that
// never end (a deposed leader's stay parked until Close), so every world
// made that many coroutines afresh, each with a goroutine and a stack to
// grow. An idle coroutine holds nothing of the world it served (its task
// is nil, its body's frames are gone), and which coroutine runs a task
// body has no effect on the body, so sharing them across worlds, even
// worlds that run in parallel, changes no run. At most maxSpareCoroutines
// are kept; the rest are ended (see Loop.Close).
var spareCoroutines = spareList[*coroutine]{max: maxSpareCoroutines}

// maxSpareCoroutines bounds the spares: enough for a few migrate worlds
// at once, at a 32 KiB stack each about 16 MiB.
const maxSpareCoroutines = 512

// run is the coroutine's life: the body of each task it is given, and an
// idle park between two. It returns when stopped while idle.
func (co *coroutine) run(yield func(struct{}) bool) {
	co.yield = yield
	growStack(0)
	for {
		co.runBody()
		co.idle = true
		if !yield(struct{}{}) {
			return
		}
		co.idle = false
	}
}

// growStack gives a new coroutine's goroutine, once, the stack a task body
// needs. A goroutine starts with a small stack that the runtime doubles,
// copying it, each time a call would overflow it; task bodies (protocol
// code over the KV client, a migrator over RPC) run deep, so each new
// coroutine copied its stack a few times, with deep stacks to adjust, and
// runtime.newstack was about 2% of a migrate sweep's CPU. One frame of
// stackPrealloc bytes while the stack is still empty makes the runtime grow
// it at once to fit, which copies next to nothing; it halved newstack's
// share. A pooled coroutine keeps its stack for the next body (until the
// collector shrinks an idle one).
//
// It reads one byte of the frame at an index it is passed, so that the
// compiler keeps the frame; noinline keeps the call.
//
//go:noinline
func growStack(i int) byte {
	var frame [stackPrealloc]byte
	return frame[i%stackPrealloc]
}

// stackPrealloc is the frame growStack takes: 16 KiB grow a new stack to
// 32 KiB, which migrate's task bodies fit (32 KiB and 64 KiB stacks were no
// better).
const stackPrealloc = 16 << 10

// runBody runs the current task's body. A killed task's body unwinds to
// here (its deferred calls run on the way); any other panic goes on to
// whoever resumed the coroutine, and the coroutine dies with it.
func (co *coroutine) runBody() {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(killedSignal); ok {
				return
			}
			panic(r)
		}
	}()
	t := co.task
	t.body(t)
}

// Name returns the task's name.
func (t *Task) Name() string { return t.name }

// Done reports whether the task has finished or was killed.
func (t *Task) Done() bool { return t.done }

// Context returns the context of the actor that owns the task.
func (t *Task) Context() *Context { return t.ctx }

// Now returns virtual time.
func (t *Task) Now() Time { return t.ctx.loop.now }

// Local returns the owning actor's node-clock reading.
func (t *Task) Local() Time { return t.ctx.Local() }

// Choices returns the owning actor's choice fork.
func (t *Task) Choices() *Choices { return t.ctx.Choices() }

// Await parks the task. register is called once, outside the task, with a
// resume function; whoever calls resume(v) (from an event of the owning
// actor, or synchronously inside register) makes Await return v. Later calls
// of the same resume are ignored. If the actor crashes while the task is
// parked, Await never returns: the task's stack unwinds and it ends.
func (t *Task) Await(register func(resume func(any))) any {
	return t.AwaitOn(registerFunc(register))
}

// registerFunc is Await's register as a Waiter. A func value converts to
// an interface without allocating; the resume method value it hands on is
// the allocation Await costs and AwaitOn does not.
type registerFunc func(resume func(any))

// Wait calls the register with the Resumer's Resume.
func (f registerFunc) Wait(r Resumer) { f(r.Resume) }

// AwaitOn is Await with a Waiter in place of register and a Resumer in
// place of the resume function: w.Wait(r) is called once, outside the
// task, and the first r.Resume(v) makes AwaitOn return v. A pointer that
// implements Waiter, and the Resumer, cost no allocation, where Await
// allocates the resume function (and its caller, often, the register
// closure) on every call.
func (t *Task) AwaitOn(w Waiter) any {
	if t.killed {
		panic(killedSignal{}) // a deferred call of a killed task: it stays dead
	}
	t.waiter = w
	return t.park()
}

// park yields the task's coroutine until it is resumed, and returns the
// value it was resumed with.
func (t *Task) park() any {
	if !t.co.yield(struct{}{}) || t.killed {
		panic(killedSignal{})
	}
	v := t.value
	t.value = nil
	return v
}

// Sleep parks the task for d, measured on the owning actor's clock.
func (t *Task) Sleep(d time.Duration) {
	c := t.ctx
	t.sleepFor = c.loop.actors[c.id].clock.RealDuration(d)
	t.AwaitOn((*sleeper)(t))
}

// sleeper is a task as the Waiter of its Sleep: it wakes the task once
// sleepFor has passed. Protocol code sleeps between every retry, so Sleep
// costs no allocation but the wake-up event: the Waiter is the task
// itself, the Resumer a value, and the wake-up event's Callback the
// sleeper again. A task is parked in one Sleep at a time, and its wake-up runs once
// (or is dropped with the actor) before the next Sleep can begin, so the
// wake-up always resumes the Sleep that scheduled it.
type sleeper Task

// Wait schedules the wake-up: the sleeper itself, as the event's Callback.
func (s *sleeper) Wait(r Resumer) {
	t := (*Task)(s)
	t.sleepDone = r
	t.ctx.DeferCall(t.sleepFor, s)
}

// Fire wakes the current Sleep.
func (s *sleeper) Fire(*Context) {
	t := (*Task)(s)
	done := t.sleepDone
	t.sleepDone = Resumer{}
	done.Resume(nil)
}

// step runs the task until it parks or ends, then hands its Waiter the
// Resumer.
func (t *Task) step() {
	for !t.done {
		t.waiter = nil
		if _, ok := t.co.next(); !ok || t.co.idle || t.waiter == nil {
			t.finish()
			return
		}
		t.token++
		r := Resumer{t: t, token: t.token}
		t.fired, t.syncResume, t.inRegister = false, false, true
		t.waiter.Wait(r)
		t.inRegister = false
		if !t.syncResume {
			return
		}
	}
}

// finish ends a task whose body returned (or that parked with nothing to
// wait for) and lets its coroutine go.
func (t *Task) finish() {
	if t.done {
		return
	}
	t.done = true
	slot := t.ctx.loop.actors[t.ctx.id]
	for i, x := range slot.tasks {
		if x == t {
			slot.tasks = append(slot.tasks[:i], slot.tasks[i+1:]...)
			break
		}
	}
	t.release()
}

// kill ends a parked task: its Await panics with killedSignal, so its stack
// unwinds (deferred calls run) and its coroutine parks idle.
func (t *Task) kill() {
	if t.done {
		return
	}
	t.done, t.killed = true, true
	t.co.next()
	t.release()
}

// release returns the task's coroutine to the loop's pool if it parked idle
// after the body; a coroutine that is still inside the body (an Await with
// nothing registered) is stopped instead, which unwinds it as a kill does.
// One that died of a panic is dropped.
func (t *Task) release() {
	co := t.co
	t.co = nil
	co.task = nil
	if !co.idle {
		co.stop()
		return
	}
	l := t.ctx.loop
	l.idle = append(l.idle, co)
}

// Killed reports whether the task ended because its actor crashed.
func (t *Task) Killed() bool { return t.killed }

// Close ends every task still parked when a world is done with its loop.
// A parked task is a goroutine that references everything it can reach
// (its actor, the world around it): left parked, it is never freed, and a
// process that runs world after world (a sweep, a benchmark) would keep
// every one of them alive. Killing a task runs its deferred calls, as a
// crash would, and parks its coroutine idle; the trace stops writing its
// JSON lines first, so a trace file ends where the run ended. The idle
// coroutines, killed tasks' included, then reference nothing of the
// world: up to maxSpareCoroutines stay as spares for the next worlds (see
// spareCoroutines), the rest end. A trace made by NewReusedTrace gives
// its buffers back last, for the next world's (read it before Close), and
// the loop's events go back to the spare pools. The loop must not run
// after Close.
func (l *Loop) Close() {
	l.trace.out = nil
	for _, s := range l.actors {
		for len(s.tasks) > 0 {
			tasks := s.tasks
			s.tasks = nil
			for _, t := range tasks {
				t.kill()
			}
		}
	}
	for _, co := range spareCoroutines.keep(l.idle...) {
		co.stop()
	}
	clear(l.idle)
	l.idle = nil
	l.trace.release()
	l.releaseEvents()
}
