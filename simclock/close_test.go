package simclock

import (
	"bytes"
	"runtime"
	"testing"
	"time"
)

// TestCloseEndsParkedTasks: a world that stops on its budget with a task
// parked leaves a coroutine behind; Close must end it (its defers run
// once), free its goroutine, and keep the trace file from growing.
func TestCloseEndsParkedTasks(t *testing.T) {
	before := goroutinesBesideSpares()
	var out bytes.Buffer
	tr := NewTrace(8)
	tr.WriteJSON(&out)
	l := NewLoop(tr, Budget{MaxTime: Time(1500 * time.Millisecond)})
	var log []string
	cleanup := 0
	l.Spawn("t", &taskActor{log: &log, cleanup: &cleanup}, nil, nil)
	l.Run()
	if cleanup != 0 || runtime.NumGoroutine() <= before {
		t.Fatalf("the task should still be parked on its coroutine (cleanup %d, goroutines %d -> %d)", cleanup, before, runtime.NumGoroutine())
	}
	written := out.Len()
	l.Close()
	if cleanup != 1 {
		t.Fatalf("Close must unwind the parked task's defers once, got %d", cleanup)
	}
	if n := goroutinesBesideSpares(); n > before {
		t.Fatalf("goroutines %d after Close, %d before the world: the task's coroutine leaked", n, before)
	}
	l.Log("late", "", "")
	if out.Len() != written {
		t.Fatalf("a record after Close reached the trace file")
	}
}
