package simclock

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// A task body that ends hands its coroutine to the next task: a hundred
// short tasks one after another run on one goroutine, and Close ends it.
func TestFinishedTaskCoroutineIsReused(t *testing.T) {
	before := goroutinesBesideSpares()
	l := NewLoop(nil, Budget{})
	ran := 0
	var first *coroutine
	l.Spawn("t", actorFunc(func(ctx *Context, msg any) {
		if _, ok := msg.(Started); !ok {
			return
		}
		for i := 0; i < 100; i++ {
			task := ctx.Go("short", func(t *Task) {
				if first == nil {
					first = t.co
				} else if t.co != first {
					panic("a new coroutine for a task while one was idle")
				}
				ran++
			})
			if !task.Done() {
				t.Fatalf("task %d did not finish at once", i)
			}
		}
	}), nil, nil)
	l.Run()
	if ran != 100 {
		t.Fatalf("%d bodies ran, want 100", ran)
	}
	if n := runtime.NumGoroutine(); n > before+1 {
		t.Fatalf("goroutines %d -> %d: finished tasks did not share a coroutine", before, n)
	}
	l.Close()
	if n := goroutinesBesideSpares(); n > before {
		t.Fatalf("goroutines %d after Close, %d before: the pooled coroutine leaked", n, before)
	}
}

// A crash kills taskActor's parked task and a restart starts the next
// incarnation's: the new body runs on the coroutine the killed one unwound
// (after its deferred call ran) and behaves as on a fresh one.
func TestBodyAfterKilledBodyRunsOnReusedCoroutine(t *testing.T) {
	l := NewLoop(nil, Budget{})
	var log []string
	cleanup := 0
	id := l.Spawn("t", &taskActor{log: &log, cleanup: &cleanup}, nil, nil)
	var killedCo *coroutine
	l.At(Time(1500*time.Millisecond), func() {
		killedCo = l.actors[id].tasks[0].co
		l.Crash(id)
		if cleanup != 1 {
			t.Errorf("the killed task's deferred call ran %d times during the crash, want 1", cleanup)
		}
		if len(l.idle) != 1 || l.idle[0] != killedCo {
			t.Errorf("the killed task's coroutine is not idle in the pool (%d idle)", len(l.idle))
		}
	})
	l.At(Time(2*time.Second), func() {
		l.Restart(id, &taskActor{log: &log, cleanup: &cleanup})
	})
	l.At(Time(2*time.Second+time.Millisecond), func() {
		if tasks := l.actors[id].tasks; len(tasks) != 1 || tasks[0].co != killedCo {
			t.Errorf("the restarted actor's task does not run on the pooled coroutine")
		}
	})
	l.Run()
	if s := strings.Join(log, " "); s != "1s 3s 4s 5s now" {
		t.Fatalf("log %q: the second body did not run correctly after the killed one", s)
	}
	if cleanup != 2 {
		t.Fatalf("deferred calls ran %d times, want once per body", cleanup)
	}
	l.Close()
}

// A killed task's deferred call that awaits again does not park: the Await
// unwinds too, so nothing after it runs and the coroutine is free.
func TestAwaitInKilledTaskDeferNeverReturns(t *testing.T) {
	l := NewLoop(nil, Budget{})
	var log []string
	id := l.Spawn("t", actorFunc(func(ctx *Context, msg any) {
		if _, ok := msg.(Started); !ok {
			return
		}
		ctx.Go("w", func(t *Task) {
			defer func() {
				log = append(log, "defer")
				t.Sleep(time.Second)
				log = append(log, "after the deferred sleep")
			}()
			t.Sleep(time.Hour)
			log = append(log, "woke")
		})
	}), nil, nil)
	l.At(Time(time.Second), func() { l.Crash(id) })
	l.Run()
	if s := strings.Join(log, " "); s != "defer" {
		t.Fatalf("log %q", s)
	}
	if len(l.idle) != 1 {
		t.Fatalf("%d idle coroutines after the kill, want 1", len(l.idle))
	}
	l.Close()
}

// A panic inside a task body reaches whoever resumed the task (the loop's
// caller, where a world turns it into a verdict) with its value, as it did
// with a coroutine per task. The dead coroutine is not reused: the next
// task gets a fresh one, and Close still ends everything.
func TestPanicInBodyPropagatesAndCoroutineIsDropped(t *testing.T) {
	before := goroutinesBesideSpares()
	l := NewLoop(nil, Budget{})
	var survivor []string
	var bad *Task
	id := l.Spawn("t", actorFunc(func(ctx *Context, msg any) {
		switch msg {
		case Started{}:
			bad = ctx.Go("bad", func(t *Task) {
				t.Sleep(time.Second)
				panic("boom in a task")
			})
		case "again":
			ctx.Go("good", func(t *Task) {
				t.Sleep(time.Second)
				survivor = append(survivor, t.Now().String())
			})
		}
	}), nil, nil)
	got := func() (p any) {
		defer func() { p = recover() }()
		l.Run()
		return nil
	}()
	if got != "boom in a task" {
		t.Fatalf("recovered %v, want the body's panic value", got)
	}
	if bad.co == nil || len(l.idle) != 0 {
		t.Fatalf("the panicked task's coroutine was released to the pool")
	}
	l.Send(id, "again", 0)
	l.Run()
	if s := strings.Join(survivor, " "); s != "2s" {
		t.Fatalf("a task after the panic ran %q, want 2s", s)
	}
	l.Close()
	if n := goroutinesBesideSpares(); n > before {
		t.Fatalf("goroutines %d after Close, %d before", n, before)
	}
}

// goroutinesBesideSpares ends the spare coroutines closed loops left (see
// spareCoroutines) and returns how many goroutines remain: a leak is a
// goroutine that outlives its world other than as a spare.
func goroutinesBesideSpares() int {
	for _, co := range spareCoroutines.drain() {
		co.stop()
	}
	return runtime.NumGoroutine()
}

// A closed loop's idle coroutines serve the next loop's tasks: a body on
// a spare runs as on a fresh one, and the spares never exceed their bound.
func TestClosedLoopsCoroutinesServeTheNext(t *testing.T) {
	before := goroutinesBesideSpares()
	var left []*coroutine
	for world := 0; world < 2; world++ {
		l := NewLoop(nil, Budget{})
		var log []string
		l.Spawn("t", actorFunc(func(ctx *Context, msg any) {
			ctx.Go("sleeper", func(t *Task) {
				t.Sleep(time.Second)
				log = append(log, t.Now().String())
			})
		}), nil, nil)
		l.Run()
		if s := strings.Join(log, " "); s != "1s" {
			t.Fatalf("world %d ran %q, want 1s", world, s)
		}
		if world == 1 && (len(l.idle) != 1 || !slices.Contains(left, l.idle[0])) {
			t.Fatalf("the second world's task did not run on the first world's spare coroutine")
		}
		l.Close()
		left = spareCoroutines.snapshot()
	}
	if n := len(spareCoroutines.snapshot()); n != 1 {
		t.Fatalf("%d spares after two worlds of one coroutine each, want 1", n)
	}
	if n := goroutinesBesideSpares(); n > before {
		t.Fatalf("goroutines %d beside the spares, %d before", n, before)
	}
}

// Worlds run one after another (a sweep) must not accumulate goroutines:
// every world's pool ends with its Close, but for the bounded spares.
func TestPoolsDoNotOutliveTheirLoops(t *testing.T) {
	before := goroutinesBesideSpares()
	for i := 0; i < 50; i++ {
		l := NewLoop(nil, Budget{MaxTime: Time(1500 * time.Millisecond)})
		var log []string
		cleanup := 0
		for j := 0; j < 3; j++ {
			l.Spawn("t", &taskActor{log: &log, cleanup: &cleanup}, nil, nil)
		}
		l.Spawn("short", actorFunc(func(ctx *Context, msg any) {
			ctx.Go("s", func(t *Task) {})
		}), nil, nil)
		l.Run()
		l.Close()
		if cleanup != 3 {
			t.Fatalf("world %d: %d deferred calls ran, want 3", i, cleanup)
		}
		if n := len(spareCoroutines.snapshot()); n > maxSpareCoroutines {
			t.Fatalf("world %d: %d spare coroutines, at most %d allowed", i, n, maxSpareCoroutines)
		}
	}
	if n := goroutinesBesideSpares(); n > before {
		t.Fatalf("goroutines %d after 50 closed worlds, %d before", n, before)
	}
}
