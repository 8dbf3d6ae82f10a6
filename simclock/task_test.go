package simclock

import (
	"strings"
	"testing"
	"time"
)

type taskActor struct {
	log     *[]string
	cleanup *int
}

func (a *taskActor) Receive(ctx *Context, msg any) {
	if _, ok := msg.(Started); !ok {
		return
	}
	ctx.Go("worker", func(t *Task) {
		defer func() { *a.cleanup++ }()
		for i := 0; i < 3; i++ {
			t.Sleep(time.Second)
			*a.log = append(*a.log, t.Now().String())
		}
		// A synchronous resume inside register must not deadlock or recurse.
		v := t.Await(func(resume func(any)) { resume("now") })
		*a.log = append(*a.log, v.(string))
	})
}

func TestTaskSleepsAndFinishes(t *testing.T) {
	l := NewLoop(nil, Budget{})
	var log []string
	cleanup := 0
	l.Spawn("t", &taskActor{log: &log, cleanup: &cleanup}, nil, nil)
	l.Run()
	if s := strings.Join(log, " "); s != "1s 2s 3s now" {
		t.Fatalf("log %q", s)
	}
	if cleanup != 1 {
		t.Fatalf("deferred cleanup ran %d times", cleanup)
	}
}

func TestCrashKillsParkedTask(t *testing.T) {
	l := NewLoop(nil, Budget{})
	var log []string
	cleanup := 0
	id := l.Spawn("t", &taskActor{log: &log, cleanup: &cleanup}, nil, nil)
	l.At(Time(1500*time.Millisecond), func() { l.Crash(id) })
	l.Run()
	if s := strings.Join(log, " "); s != "1s" {
		t.Fatalf("log %q: the task kept running after the crash", s)
	}
	if cleanup != 1 {
		t.Fatalf("a killed task must unwind its defers once, got %d", cleanup)
	}
}

func TestPausedTaskResumesLate(t *testing.T) {
	l := NewLoop(nil, Budget{})
	var log []string
	cleanup := 0
	id := l.Spawn("t", &taskActor{log: &log, cleanup: &cleanup}, nil, nil)
	l.At(Time(1500*time.Millisecond), func() { l.Pause(id) })
	l.At(Time(10*time.Second), func() { l.Resume(id) })
	l.Run()
	if s := strings.Join(log, " "); s != "1s 10s 11s now" {
		t.Fatalf("log %q", s)
	}
}

func TestResumeIgnoresSecondCall(t *testing.T) {
	l := NewLoop(nil, Budget{})
	var resumeFn func(any)
	var got []any
	l.Spawn("t", actorFunc(func(ctx *Context, msg any) {
		if _, ok := msg.(Started); ok {
			ctx.Go("w", func(t *Task) {
				got = append(got, t.Await(func(r func(any)) { resumeFn = r }))
				got = append(got, t.Await(func(r func(any)) {}))
			})
		}
	}), nil, nil)
	l.Run()
	resumeFn(1)
	resumeFn(2) // stale: belongs to the first Await
	if len(got) != 1 || got[0] != 1 {
		t.Fatalf("got %v", got)
	}
}

type actorFunc func(*Context, any)

func (f actorFunc) Receive(ctx *Context, msg any) { f(ctx, msg) }

// waiterFunc adapts a function to Waiter for tests.
type waiterFunc func(Resumer)

func (f waiterFunc) Wait(r Resumer) { f(r) }

// AwaitOn keeps Await's rules: the first Resume counts, a later one and a
// stale one (made for an earlier AwaitOn, with the task parked again) are
// ignored, a Resume inside Wait returns at once, and the zero Resumer does
// nothing.
func TestAwaitOnResumesOnceAndIgnoresStaleResumers(t *testing.T) {
	l := NewLoop(nil, Budget{})
	var first, second Resumer
	var got []any
	l.Spawn("t", actorFunc(func(ctx *Context, msg any) {
		if _, ok := msg.(Started); ok {
			ctx.Go("w", func(t *Task) {
				got = append(got, t.AwaitOn(waiterFunc(func(r Resumer) { first = r })))
				got = append(got, t.AwaitOn(waiterFunc(func(r Resumer) { r.Resume("sync") })))
				got = append(got, t.AwaitOn(waiterFunc(func(r Resumer) { second = r })))
				got = append(got, t.AwaitOn(waiterFunc(func(Resumer) {})))
			})
		}
	}), nil, nil)
	l.Run()
	Resumer{}.Resume("zero")
	first.Resume(1)
	first.Resume(2) // a later call of the same resumer
	if len(got) != 2 || got[0] != 1 || got[1] != "sync" {
		t.Fatalf("after the first resume: got %v", got)
	}
	first.Resume(3) // stale: the task is parked in its third AwaitOn
	if len(got) != 2 {
		t.Fatalf("a stale resumer resumed the task: got %v", got)
	}
	second.Resume(4)
	if len(got) != 3 || got[2] != 4 {
		t.Fatalf("got %v", got)
	}
}

// countCallback counts its firings.
type countCallback struct{ fired []Time }

func (c *countCallback) Fire(ctx *Context) { c.fired = append(c.fired, ctx.Now()) }

// DeferCall runs like Defer: after d, held while the actor is paused, and
// dropped once the incarnation that scheduled it is gone.
func TestDeferCallFollowsTheIncarnation(t *testing.T) {
	l := NewLoop(nil, Budget{})
	var ctx0 *Context
	id := l.Spawn("a", actorFunc(func(ctx *Context, msg any) {
		if ctx0 == nil {
			ctx0 = ctx
		}
	}), nil, nil)
	l.Run()
	held, dropped := &countCallback{}, &countCallback{}
	ctx0.DeferCall(time.Second, held)
	ctx0.DeferCall(5*time.Second, dropped)
	l.At(Time(500*time.Millisecond), func() { l.Pause(id) })
	l.At(Time(2*time.Second), func() { l.Resume(id) })
	l.At(Time(3*time.Second), func() { l.Crash(id) })
	l.Run()
	if len(held.fired) != 1 || held.fired[0] != Time(2*time.Second) {
		t.Fatalf("held callback fired at %v, want once at 2s", held.fired)
	}
	if len(dropped.fired) != 0 {
		t.Fatalf("a callback of a crashed incarnation fired at %v", dropped.fired)
	}
}
