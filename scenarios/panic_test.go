package scenarios

import (
	"strings"
	"testing"
	"time"

	"shardsim/property"
	"shardsim/simclock"
)

// boom panics when it starts.
type boom struct{}

func (boom) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); ok {
		ctx.After(time.Millisecond, "go")
		return
	}
	var m map[string]int
	m["x"]++ // a nil map write: a runtime panic inside the world
}

// A panic inside a world is an H.Panic violation that names the panic and
// where it happened, the same on every run.
func TestPanicInsideTheWorldIsAVerdict(t *testing.T) {
	run := func() Result {
		w := NewWorld("panic-test", Config{Seed: 1}, simclock.Budget{MaxTime: simclock.Time(time.Second)})
		w.Loop.Spawn("boom", boom{}, nil, nil)
		if stop := w.Run(); stop != simclock.Stopped {
			t.Fatalf("stop = %v, want stopped", stop)
		}
		return w.Result()
	}
	res := run()
	if res.Verdict != property.VerdictViolation || res.Property != property.HPanic {
		t.Fatalf("got %s %s, want an H.Panic violation", res.Verdict, res.Property)
	}
	if !strings.Contains(res.Detail, "nil map") || !strings.Contains(res.Detail, "boom.Receive panic_test.go") {
		t.Fatalf("detail does not say what and where: %s", res.Detail)
	}
	if again := run(); again.Digest != res.Digest || again.Detail != res.Detail {
		t.Fatalf("a panic's report is not deterministic:\n%s\n%s", res.Detail, again.Detail)
	}
}

// A panic outside the loop (while building the world) is a verdict too.
func TestPanicOutsideTheLoopIsAVerdict(t *testing.T) {
	Register(Scenario{Name: "panic-setup-test", Description: "test only", Properties: []property.Name{property.HPanic},
		Run: func(Config) (Result, error) { panic("setup went wrong") }})
	defer delete(registry, "panic-setup-test")
	res, err := Run("panic-setup-test", Config{Seed: 3})
	if err != nil || res.Property != property.HPanic || !strings.Contains(res.Detail, "setup went wrong") {
		t.Fatalf("got %v %s %s", err, res.Property, res.Detail)
	}
}

// assert panics with a property violation, as a backend's self-check does.
type assert struct{}

func (assert) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); ok {
		panic(property.Violated(property.CRecordInvariants, "coord: etcd self-check failed on shard:1: fence went down"))
	}
}

// A panic that carries a violation (an assertion naming the property it
// guards) is a verdict of that property, not H.Panic.
func TestAnAssertionsPanicNamesItsProperty(t *testing.T) {
	w := NewWorld("panic-test", Config{Seed: 1}, simclock.Budget{MaxTime: simclock.Time(time.Second)})
	w.Loop.Spawn("assert", assert{}, nil, nil)
	w.Run()
	res := w.Result()
	if res.Verdict != property.VerdictViolation || res.Property != property.CRecordInvariants ||
		!strings.Contains(res.Detail, "fence went down") || !strings.Contains(res.Detail, "assert.Receive") {
		t.Fatalf("got %s %s: %s", res.Verdict, res.Property, res.Detail)
	}
}
