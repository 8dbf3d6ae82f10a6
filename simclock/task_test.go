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
