package simclock

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestLoopOrdersByTimeThenScheduling(t *testing.T) {
	l := NewLoop(nil, Budget{})
	var got []string
	l.At(20, func() { got = append(got, "b") })
	l.At(10, func() { got = append(got, "a") })
	l.At(20, func() { got = append(got, "c") })
	l.At(10, func() {
		got = append(got, "a2")
		l.After(0, func() { got = append(got, "a3") })
	})
	if r := l.Run(); r != Idle {
		t.Fatalf("Run = %v, want idle", r)
	}
	if s := strings.Join(got, ","); s != "a,a2,a3,b,c" {
		t.Fatalf("order %s", s)
	}
	if l.Now() != 20 || l.Events() != 5 {
		t.Fatalf("now=%d events=%d", l.Now(), l.Events())
	}
}

func TestTimerCancel(t *testing.T) {
	l := NewLoop(nil, Budget{})
	fired := false
	tm := l.After(time.Second, func() { fired = true })
	if !tm.Cancel() {
		t.Fatal("cancel of a pending timer must report true")
	}
	if tm.Cancel() {
		t.Fatal("second cancel must report false")
	}
	l.Run()
	if fired {
		t.Fatal("cancelled timer fired")
	}
	if l.Events() != 0 {
		t.Fatalf("cancelled timer counted as an event: %d", l.Events())
	}
}

func TestBudgets(t *testing.T) {
	l := NewLoop(nil, Budget{MaxEvents: 3})
	var tick func()
	tick = func() { l.After(time.Millisecond, tick) }
	l.After(0, tick)
	if r := l.Run(); r != EventBudget || l.Events() != 3 {
		t.Fatalf("Run = %v after %d events", r, l.Events())
	}
	l.SetBudget(Budget{MaxTime: Time(10 * time.Millisecond)})
	if r := l.Run(); r != TimeBudget {
		t.Fatalf("Run = %v, want time-budget", r)
	}
	if l.Now() > Time(10*time.Millisecond) {
		t.Fatalf("ran past the time budget: %v", l.Now())
	}
	if r := l.RunUntil(Time(5 * time.Millisecond)); r != Idle && r != TimeBudget {
		t.Fatalf("RunUntil = %v", r)
	}
}

func TestStopFromObserver(t *testing.T) {
	l := NewLoop(nil, Budget{})
	for i := 0; i < 10; i++ {
		l.At(Time(i), func() {})
	}
	l.OnStep(func() {
		if l.Events() == 4 {
			l.Stop()
		}
	})
	if r := l.Run(); r != Stopped || l.Events() != 4 {
		t.Fatalf("Run = %v after %d events", r, l.Events())
	}
}

// recorder is an actor that logs what it receives and re-arms a timer.
type recorder struct {
	got    *[]string
	period time.Duration
}

func (r *recorder) Receive(ctx *Context, msg any) {
	switch m := msg.(type) {
	case Started:
		*r.got = append(*r.got, ctx.Name()+":start@"+ctx.Now().String())
		if r.period > 0 {
			ctx.After(r.period, "tick")
		}
	case string:
		*r.got = append(*r.got, ctx.Name()+":"+m+"@"+ctx.Now().String())
		if m == "tick" {
			ctx.After(r.period, "tick")
		}
	}
}

func TestActorCrashDropsTimersAndMessages(t *testing.T) {
	l := NewLoop(nil, Budget{MaxTime: Time(10 * time.Second)})
	var got []string
	id := l.Spawn("a", &recorder{got: &got, period: 3 * time.Second}, nil, nil)
	l.Send(id, "hello", 4*time.Second)
	l.At(Time(3500*time.Millisecond), func() { l.Crash(id) })
	l.At(Time(5*time.Second), func() { l.Restart(id, &recorder{got: &got}) })
	l.Run()
	want := "a:start@0s a:tick@3s a:start@5s"
	if s := strings.Join(got, " "); s != want {
		t.Fatalf("got %q, want %q", s, want)
	}
}

func TestPauseHoldsThenResumesAsZombie(t *testing.T) {
	l := NewLoop(nil, Budget{MaxTime: Time(7 * time.Second)})
	var got []string
	id := l.Spawn("z", &recorder{got: &got, period: 2 * time.Second}, nil, nil)
	l.At(Time(time.Second), func() { l.Pause(id) })
	l.Send(id, "m1", 1500*time.Millisecond)
	l.At(Time(5*time.Second), func() { l.Resume(id) })
	l.Run()
	want := "z:start@0s z:m1@5s z:tick@5s z:tick@7s"
	if s := strings.Join(got, " "); s != want {
		t.Fatalf("got %q, want %q", s, want)
	}
}

func TestNodeClockBoundsAndMonotonicity(t *testing.T) {
	c := NewNodeClock(100 * time.Millisecond)
	c.SetDrift(0, 50_000) // gains 5%
	prev := c.Read(0)
	for now := Time(0); now < Time(10*time.Second); now += Time(37 * time.Millisecond) {
		r := c.Read(now)
		if r < prev {
			t.Fatalf("clock ran backwards at %v", now)
		}
		if d := r.Sub(now); d > 100*time.Millisecond || d < -100*time.Millisecond {
			t.Fatalf("skew %v beyond bound at %v", d, now)
		}
		prev = r
	}
	c.Jump(Time(10*time.Second), -time.Hour)
	if s := c.Skew(Time(10 * time.Second)); s != -100*time.Millisecond {
		t.Fatalf("jump not clamped: %v", s)
	}
	if d := c.RealDuration(time.Second); d >= time.Second {
		t.Fatalf("a fast clock must wait less real time, got %v", d)
	}
}

func TestTraceDigestIsContentAddressed(t *testing.T) {
	mk := func(detail string) string {
		tr := NewTrace(2)
		tr.Add(1, "k", "a", "x")
		tr.Add(2, "k", "a", detail)
		return tr.Digest()
	}
	if mk("y") != mk("y") {
		t.Fatal("same records, different digests")
	}
	if mk("y") == mk("z") {
		t.Fatal("different records, same digest")
	}
	// Field boundaries are length-prefixed: ("ab","c") != ("a","bc").
	a, b := NewTrace(1), NewTrace(1)
	a.Add(1, "ab", "c", "")
	b.Add(1, "a", "bc", "")
	if a.Digest() == b.Digest() {
		t.Fatal("field boundaries are not part of the digest")
	}
	tr := NewTrace(2)
	for i := 0; i < 5; i++ {
		tr.Add(Time(i), "k", "", "")
	}
	tail := tr.Tail()
	if len(tail) != 2 || tail[0].Seq != 4 || tail[1].Seq != 5 {
		t.Fatalf("tail = %+v", tail)
	}
}

func BenchmarkLoopEvents(b *testing.B) {
	benchmarkLoopEvents(b, 1024) // events in flight, like a busy world
}

// BenchmarkLoopEventsSorted is BenchmarkLoopEvents with a queue just short
// enough to stay sorted (see maxSorted), where a push can walk over half
// of it.
func BenchmarkLoopEventsSorted(b *testing.B) {
	benchmarkLoopEvents(b, maxSorted*3/4)
}

// benchmarkLoopEvents runs a loop with live events in flight, each due
// after a random delay and scheduling the next when it runs.
func benchmarkLoopEvents(b *testing.B, live int) {
	l := NewLoop(NewTrace(1), Budget{})
	c := NewSeeded(1)
	var fire func()
	fire = func() { l.After(time.Duration(c.Intn(1000)), fire) }
	for i := 0; i < live; i++ {
		l.After(time.Duration(i), fire)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// runTies schedules a, b, c at one time (and d at a later one), cancels
// nothing, and returns the order the loop ran them in under choices c.
func runTies(c *Choices) string {
	l := NewLoop(nil, Budget{})
	l.OrderBy(c)
	var got []string
	for _, name := range []string{"a", "b", "c"} {
		l.At(10, func() { got = append(got, name) })
	}
	l.At(20, func() { got = append(got, "d") })
	l.Run()
	return strings.Join(got, "")
}

func TestEqualTimeOrderIsAChoice(t *testing.T) {
	if got := runTies(NewBytes(nil)); got != "abcd" {
		t.Fatalf("all-zero stream ran %s, want first-scheduled-first abcd", got)
	}
	seen := map[string]bool{}
	for x := byte(0); x < 3; x++ {
		for y := byte(0); y < 2; y++ {
			seen[runTies(NewBytes([]byte{x, y}))] = true
		}
	}
	for _, want := range []string{"abcd", "acbd", "bacd", "bcad", "cabd", "cbad"} {
		if !seen[want] {
			t.Errorf("order %s is unreachable; reached %v", want, seen)
		}
	}
	// One draw below 3, one below 2, none for the lone d.
	c := NewBytes([]byte{2, 1})
	if got := runTies(c); got != "cbad" || c.Draws() != 2 {
		t.Fatalf("bytes {2,1} ran %s with %d draws, want cbad with 2", got, c.Draws())
	}
}

func TestEqualTimeOrderIgnoresCancelledAndAdmitsNewcomers(t *testing.T) {
	l := NewLoop(nil, Budget{})
	c := NewBytes([]byte{1, 1})
	l.OrderBy(c)
	var got []string
	l.At(5, func() {
		got = append(got, "a")
		l.After(0, func() { got = append(got, "n") }) // joins b while b waits
	})
	tm := l.At(5, func() { got = append(got, "x") })
	l.At(5, func() { got = append(got, "b") })
	tm.Cancel()
	l.Run()
	// Ready {a, b}: draw 1 picks b. Ready {a}: no draw. Ready {n}: no draw.
	if s := strings.Join(got, ""); s != "ban" || c.Draws() != 1 {
		t.Fatalf("ran %s with %d draws, want ban with 1 (a cancelled timer is no choice)", s, c.Draws())
	}
	l3 := NewLoop(nil, Budget{})
	l3.OrderBy(NewBytes([]byte{0, 1}))
	got = nil
	l3.At(5, func() {
		got = append(got, "a")
		l3.After(0, func() { got = append(got, "n") })
	})
	l3.At(5, func() { got = append(got, "b") })
	l3.Run()
	// Draw 0 of {a,b} runs a, which schedules n; draw 1 of {b,n} picks n.
	if s := strings.Join(got, ""); s != "anb" {
		t.Fatalf("ran %s, want anb: an event scheduled for now competes with those waiting", s)
	}
}

func TestEqualTimeOrderRespectsTimeBudget(t *testing.T) {
	l := NewLoop(nil, Budget{})
	l.OrderBy(NewSeeded(3))
	n := 0
	for i := 0; i < 4; i++ {
		l.At(Time(10*(i/2+1)), func() { n++ })
	}
	if r := l.RunUntil(15); r != Idle || n != 2 || l.Now() != 15 {
		t.Fatalf("RunUntil(15) = %v, ran %d, now %v", r, n, l.Now())
	}
	if l.Pending() != 2 {
		t.Fatalf("pending %d, want 2", l.Pending())
	}
	if r := l.Run(); r != Idle || n != 4 {
		t.Fatalf("Run = %v, ran %d", r, n)
	}
}

// refEvent is an event as refLoop sees it.
type refEvent struct {
	at        Time
	seq       int
	cancelled bool
}

// refLoop is the loop's contract written out plainly, for
// TestStepAgreesWithItsContract: the next event is a live one at the
// earliest time; among k > 1 of them, in scheduling order, one draw below
// k picks it.
type refLoop struct {
	events []*refEvent
	order  *Choices
}

// next removes and returns the event the loop must run next, or nil when
// no live event is due at or before limit (no limit when it is 0).
func (r *refLoop) next(limit Time) *refEvent {
	var due []*refEvent
	for _, e := range r.events {
		switch {
		case e.cancelled || limit > 0 && e.at > limit:
		case len(due) == 0 || e.at < due[0].at:
			due = []*refEvent{e}
		case e.at == due[0].at:
			due = append(due, e) // events are kept in scheduling order
		}
	}
	if len(due) == 0 {
		return nil
	}
	i := 0
	if len(due) > 1 {
		i = r.order.Intn(len(due))
	}
	e := due[i]
	for j, x := range r.events {
		if x == e {
			r.events = append(r.events[:j], r.events[j+1:]...)
			break
		}
	}
	return e
}

// The loop runs events in the order its contract gives, on random
// workloads: many equal times (events scheduled for now among them),
// timers cancelled at random, while queued or already gathered among the
// due ones, and runs cut by time budgets. It is the check of Step's fast
// path for a lone due event against the gathering and the order draw that
// it skips: the run and its draws must be the same either way.
func TestStepAgreesWithItsContract(t *testing.T) {
	total := 0
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		l := NewLoop(nil, Budget{})
		l.OrderBy(NewSeeded(seed))
		ref := &refLoop{order: NewSeeded(seed)}
		var timers []Timer
		var refs []*refEvent
		var schedule func(d time.Duration)
		ran, limit := 0, Time(0)
		schedule = func(d time.Duration) {
			var me *refEvent
			timer := l.After(d, func() {
				ran++
				if me.at > limit {
					t.Fatalf("seed %d: event %d due at %d ran under RunUntil(%d)", seed, me.seq, me.at, limit)
				}
				want := ref.next(0)
				if want != me {
					t.Fatalf("seed %d: event %d ran at %d, the contract runs event %d at %d", seed, me.seq, me.at, want.seq, want.at)
				}
				for n := rng.IntN(4); n > 0 && ran < 400; n-- {
					schedule(time.Duration(rng.IntN(4)))
				}
				if rng.IntN(4) == 0 {
					i := rng.IntN(len(timers))
					if timers[i].Cancel() {
						refs[i].cancelled = true
					}
				}
			})
			me = &refEvent{at: l.Now().Add(d), seq: len(refs)}
			ref.events = append(ref.events, me)
			timers, refs = append(timers, timer), append(refs, me)
		}
		for i := 0; i < 16; i++ {
			schedule(time.Duration(rng.IntN(4)))
		}
		for limit = 2; ; limit += Time(1 + rng.IntN(3)) {
			l.RunUntil(limit)
			if e := ref.next(limit); e != nil {
				t.Fatalf("seed %d: RunUntil(%d) left event %d due at %d", seed, limit, e.seq, e.at)
			}
			if l.Pending() == 0 {
				break
			}
		}
		if left := ref.next(0); left != nil {
			t.Fatalf("seed %d: the loop emptied with event %d still due at %d", seed, left.seq, left.at)
		}
		total += ran
	}
	if total < 200*300 {
		t.Fatalf("%d events ran in all; the workloads are too small to test much", total)
	}
}
