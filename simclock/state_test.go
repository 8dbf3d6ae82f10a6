package simclock

import (
	"fmt"
	"testing"
	"time"
)

// scripted is an actor whose every message is a function run on it.
type scripted struct{ log []string }

func (s *scripted) Receive(ctx *Context, msg any) {
	if f, ok := msg.(func(*Context)); ok {
		f(ctx)
	}
}

// trackedWorld builds a loop with states tracked, order draws from order
// (a byte stream: the first draw orders the actors' Started messages) and
// n scripted actors with forks of draws.
func trackedWorld(order []byte, draws []byte, n int) (*Loop, []ActorID) {
	l := NewLoop(nil, Budget{})
	l.TrackStates(nil)
	root := NewFromSource(l.TrackDraws(&byteSource{tape: &byteTape{data: draws}}))
	l.OrderBy(NewBytes(order))
	var ids []ActorID
	for i := 0; i < n; i++ {
		ids = append(ids, l.Spawn("a", &scripted{}, nil, root.Fork("a")))
	}
	return l, ids
}

// twoAt schedules f0 on actor 0 and f1 on actor 1, both at time 10ms.
func twoAt(l *Loop, ids []ActorID, f0, f1 func(*Context)) {
	l.Send(ids[0], f0, 10*time.Millisecond)
	l.Send(ids[1], f1, 10*time.Millisecond)
}

// digestAfter runs the world to the end and returns its state digest.
func digestAfter(l *Loop) Digest {
	l.Run()
	return l.StateDigest()
}

// tickAfter is a private event that draws a zero and schedules a message
// to itself d later.
func tickAfter(d time.Duration) func(*Context) {
	return func(ctx *Context) {
		ctx.Private()
		ctx.Choices().Chance(0.5) // draws zero: no
		ctx.After(d, "later")
	}
}

func TestPrivateEventsCommute(t *testing.T) {
	var got [2]Digest
	for i, order := range [][]byte{{0, 0}, {0, 1}} {
		l, ids := trackedWorld(order, nil, 2)
		twoAt(l, ids, tickAfter(time.Second), tickAfter(2*time.Second))
		l.RunUntil(Time(500 * time.Millisecond))
		got[i] = l.StateDigest()
	}
	if got[0] != got[1] {
		t.Fatal("two private events in either order should reach one state")
	}
}

// Events due at one instant run in an order the loop's order draws pick by
// scheduling order: two worlds whose pending events were scheduled in
// different orders answer the same order draws differently, so they are
// different states even when everything else agrees.
func TestSchedulingOrderOfSimultaneousEventsIsState(t *testing.T) {
	var got [2]Digest
	for i, order := range [][]byte{{0, 0}, {0, 1}} {
		l, ids := trackedWorld(order, nil, 2)
		twoAt(l, ids, tickAfter(time.Second), tickAfter(time.Second))
		l.RunUntil(Time(500 * time.Millisecond))
		got[i] = l.StateDigest()
	}
	if got[0] == got[1] {
		t.Fatal("follow-ups due together, scheduled in different orders, must stay apart")
	}
}

func TestSharedEventsDoNotCommute(t *testing.T) {
	shared := func(ctx *Context) {}
	var got [2]Digest
	for i, order := range [][]byte{{0, 0}, {0, 1}} {
		l, ids := trackedWorld(order, nil, 2)
		twoAt(l, ids, shared, shared)
		got[i] = digestAfter(l)
	}
	if got[0] == got[1] {
		t.Fatal("two shared events in different orders must stay apart: their effects need not commute")
	}
}

func TestPrivateAndSharedCommute(t *testing.T) {
	priv := func(ctx *Context) { ctx.Private() }
	shared := func(ctx *Context) {}
	var got [2]Digest
	for i, order := range [][]byte{{0, 0}, {0, 1}} {
		l, ids := trackedWorld(order, nil, 2)
		twoAt(l, ids, priv, shared)
		l.RunUntil(Time(500 * time.Millisecond))
		got[i] = l.StateDigest()
	}
	if got[0] != got[1] {
		t.Fatal("a private event commutes with a shared one")
	}
}

// A private event commutes with a shared one (TestPrivateAndSharedCommute);
// once its privacy is revoked it is shared, and two shared events do not.
func TestPrivacyIsRevoked(t *testing.T) {
	cases := map[string]func(*Context){
		"non-zero draw": func(ctx *Context) { ctx.Private(); ctx.Choices().Intn(4) },
		"crash":         func(ctx *Context) { ctx.Private(); ctx.Loop().Crash(2) },
		"pause":         func(ctx *Context) { ctx.Private(); ctx.Loop().Pause(2) },
		"shared hook":   func(ctx *Context) { ctx.Private(); ctx.Loop().Shared() },
		"clock":         func(ctx *Context) { ctx.Private(); ctx.Loop().Clock(2) },
	}
	shared := func(ctx *Context) {}
	for name, f := range cases {
		var got [2]Digest
		for i, order := range [][]byte{{0, 0}, {0, 1}} {
			l, ids := trackedWorld(order, []byte{3}, 3)
			twoAt(l, ids, f, shared)
			l.RunUntil(Time(500 * time.Millisecond))
			got[i] = l.StateDigest()
		}
		if got[0] == got[1] {
			t.Errorf("%s: the event stayed private", name)
		}
	}
}

func TestStateSeesWhatDiffers(t *testing.T) {
	base := func(mut func(l *Loop, ids []ActorID)) Digest {
		l, ids := trackedWorld(nil, []byte{0, 0, 0, 0}, 2)
		l.Send(ids[0], func(ctx *Context) { ctx.After(time.Second, "x") }, time.Millisecond)
		l.Send(ids[1], func(ctx *Context) { ctx.After(time.Second, "y") }, time.Millisecond)
		if mut != nil {
			mut(l, ids)
		}
		l.RunUntil(Time(500 * time.Millisecond))
		return l.StateDigest()
	}
	ref := base(nil)
	if again := base(nil); again != ref {
		t.Fatal("the same world must reach the same state")
	}
	muts := map[string]func(l *Loop, ids []ActorID){
		"a draw": func(l *Loop, ids []ActorID) {
			l.Send(ids[0], func(ctx *Context) { ctx.Choices().Intn(2) }, 2*time.Millisecond)
		},
		"an extra message": func(l *Loop, ids []ActorID) { l.Send(ids[1], "hello", 2*time.Millisecond) },
		"a pending event":  func(l *Loop, ids []ActorID) { l.Send(ids[1], "hello", time.Hour) },
		"a paused actor":   func(l *Loop, ids []ActorID) { l.Pause(ids[0]) },
		"a crashed actor":  func(l *Loop, ids []ActorID) { l.Crash(ids[0]) },
		"an extra event":   func(l *Loop, ids []ActorID) { l.Send(ids[0], func(ctx *Context) {}, 2*time.Millisecond) },
	}
	for name, mut := range muts {
		if base(mut) == ref {
			t.Errorf("%s: the state did not change", name)
		}
	}
}

func TestHeldEventsKeepTheirNames(t *testing.T) {
	// Pausing an actor before its message arrives and resuming it after
	// runs the same event as not pausing it at all: same state.
	run := func(pause bool) Digest {
		l, ids := trackedWorld(nil, nil, 1)
		l.Send(ids[0], func(ctx *Context) { ctx.After(time.Second, "x") }, 10*time.Millisecond)
		if pause {
			l.At(Time(5*time.Millisecond), func() { l.Pause(ids[0]) })
			l.At(Time(20*time.Millisecond), func() { l.Resume(ids[0]) })
		}
		l.RunUntil(Time(30 * time.Millisecond))
		return l.StateDigest()
	}
	if run(false) == run(true) {
		t.Fatal("a pause and a resume are shared events: they must show in the state")
	}
}

func TestTrackingDoesNotChangeTheRun(t *testing.T) {
	run := func(track bool) string {
		l := NewLoop(nil, Budget{})
		var src Source = &byteSource{tape: &byteTape{data: []byte{1, 2, 3, 4, 5, 6, 7, 8}}}
		if track {
			l.TrackStates(func() bool { return true })
			src = l.TrackDraws(src)
		}
		root := NewFromSource(src)
		l.OrderBy(root.Fork("order"))
		for i := 0; i < 3; i++ {
			l.Spawn("a", &scripted{}, NewNodeClock(time.Millisecond), root.Fork("a"))
		}
		for i := 0; i < 3; i++ {
			i := i
			l.Send(ActorID(i), func(ctx *Context) {
				ctx.Log("draw", ctx.Choices().Duration(0, time.Second).String())
				ctx.After(time.Millisecond, func(ctx *Context) { ctx.Log("late", "") })
			}, time.Millisecond)
		}
		l.Run()
		return l.Trace().Digest()
	}
	if run(false) != run(true) {
		t.Fatal("tracking states changed what the run did")
	}
}

// foldWorld runs a world of three actors that each draw twice, once a
// millisecond apart, from a byte stream, with m reusing the folds of its
// last run for the first same draws (m nil: every fold hashed), and
// returns the state at the end.
func foldWorld(draws []byte, m *FoldMemo, same uint64) Digest {
	l := NewLoop(nil, Budget{})
	l.TrackStates(nil)
	if m != nil {
		l.ReuseFolds(m, same)
	}
	root := NewFromSource(l.TrackDraws(&byteSource{tape: &byteTape{data: draws}}))
	for i := 0; i < 3; i++ {
		id := l.Spawn("a", &scripted{}, NewNodeClock(time.Millisecond), root.Fork("a"))
		l.Send(id, func(ctx *Context) {
			ctx.Choices().Intn(4)
			ctx.After(time.Millisecond, func(ctx *Context) { ctx.Choices().Intn(4) })
		}, time.Duration(i+1)*time.Millisecond)
	}
	l.Run()
	return l.StateDigest()
}

// A run takes over the folds of the memo's last run while it has made only
// that run's draws, and hashes the rest: the same states as hashing every
// fold, and a spoiled memo shows in them, so the folds were taken over.
func TestFoldReuse(t *testing.T) {
	first, second := []byte{1, 2, 3, 0, 1, 2}, []byte{1, 2, 3, 3, 1, 2}
	var m FoldMemo
	if got, want := foldWorld(first, &m, 0), foldWorld(first, nil, 0); got != want {
		t.Fatal("recording the folds changed the state")
	}
	// The second stream differs from the first at draw 3: up to then, the
	// run is the first one again.
	if got, want := foldWorld(second, &m, 3), foldWorld(second, nil, 0); got != want {
		t.Fatal("reusing the folds made before draw 3 changed the state")
	}
	if m.Recalled() == 0 {
		t.Fatal("no fold was taken over")
	}
	// Told that all six draws are the last run's, a run of the first
	// stream takes over folds made after the second's draw 3: wrong, which
	// shows that the bound on the draws is what keeps reuse sound.
	if foldWorld(first, &m, 6) == foldWorld(first, nil, 0) {
		t.Fatal("folds made after the draws differ were taken over and changed nothing")
	}
	foldWorld(second, &m, 0) // the memo holds the second stream's folds again
	// Spoil them: m.cur becomes the last run's once the next run begins.
	for i := range m.cur {
		m.cur[i].out[0] ^= 1
	}
	if foldWorld(second, &m, 3) == foldWorld(second, nil, 0) {
		t.Fatal("a spoiled memo changed nothing: its folds were not used")
	}
}

// The loop drops the queue's cancelled timers once they are most of it
// (dropCancelledIfMost), whether or not states are digested, and the events
// that run, and their order, are those of a run that never scheduled the
// timers. Here the cancelled timers are too few to be most of the queue
// when they are cancelled and become most of it only as live events leave
// it: the drop on that side is what empties the queue of them.
func TestDroppingCancelledTimersChangesNoRun(t *testing.T) {
	run := func(digest, timers bool) (string, int, int) {
		l := NewLoop(nil, Budget{})
		if digest {
			l.TrackStates(func() bool { l.StateDigest(); return true })
		}
		for i := 1; i <= 40; i++ {
			i := i
			l.At(Time(time.Duration(i)*time.Millisecond), func() {
				l.Log("fire", "", fmt.Sprint(i))
				if i%3 == 0 {
					l.After(time.Duration(i%5)*time.Millisecond, func() { l.Log("again", "", fmt.Sprint(i)) })
				}
			})
		}
		if timers {
			for i := 0; i < 30; i++ {
				l.At(Time(time.Second), func() { l.Log("cancelled timer ran", "", "") }).Cancel()
			}
		}
		queued := -1
		l.At(Time(50*time.Millisecond), func() { queued = l.queue.len() })
		// A live event before the cancelled ones: the loop discards a
		// cancelled event that reaches the queue's head, so without it the
		// run would drop them all at 50ms whatever the rule.
		l.At(Time(100*time.Millisecond), func() { l.Log("last", "", "") })
		l.Run()
		return l.Trace().Digest(), int(l.Trace().Len()), queued
	}
	none, n, _ := run(false, false)
	plain, _, plainQueued := run(false, true)
	tracked, _, trackedQueued := run(true, true)
	if plain != none || tracked != none {
		t.Fatal("dropping cancelled timers, or digesting states, changed which events ran or their order")
	}
	if n < 40 {
		t.Fatalf("only %d records: the run proves little", n)
	}
	if plainQueued != 1 || trackedQueued != 1 {
		t.Fatalf("at 50ms the queue held %d events without state digests and %d with them, want 1 (the last event; the cancelled timers dropped as live events left) in both", plainQueued, trackedQueued)
	}
}
