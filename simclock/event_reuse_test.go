package simclock

import "testing"

// runEventWorld runs a small world of the given seed on a new loop: events
// that schedule others (some at the same time, whose order is drawn),
// timers cancelled before they fire and some left queued when the time
// budget ends the run. It returns the trace digest, the events run and
// those left queued, then closes the loop.
func runEventWorld(seed uint64) (string, uint64, int) {
	c := NewSeeded(seed)
	l := NewLoop(NewTrace(8), Budget{MaxTime: 1500})
	l.OrderBy(c.Fork("order"))
	var timers []Timer
	var schedule func(depth int)
	schedule = func(depth int) {
		at := l.Now().Add(0)
		if !c.Chance(0.3) { // else a tie with whatever is due now
			at = l.Now() + Time(c.Intn(400))
		}
		id := c.Intn(1 << 20)
		timers = append(timers, l.At(at, func() {
			l.Rec("test.event", "").Uint("id", uint64(id)).Uint("depth", uint64(depth)).End()
			for n := c.Intn(3); n > 0 && depth < 12; n-- {
				schedule(depth + 1)
			}
			if len(timers) > 0 && c.Chance(0.4) {
				timers[c.Intn(len(timers))].Cancel()
			}
		}))
	}
	for i := 0; i < 20; i++ {
		schedule(0)
	}
	l.Run()
	d, n, left := l.Trace().Digest(), l.Events(), l.Pending()
	l.Close()
	return d, n, left
}

// TestReusedEventsLeakNothingBetweenWorlds runs worlds of different seeds,
// interleaved, each on the events the last one's Close gave back, and
// checks that each runs as it does on fresh events: same digest, same
// number of events. Each new loop must get the spare pool, and every event
// in it must be empty.
func TestReusedEventsLeakNothingBetweenWorlds(t *testing.T) {
	type run struct {
		digest string
		events uint64
	}
	fresh := map[uint64]run{}
	leftQueued := 0
	for seed := uint64(1); seed <= 6; seed++ {
		spareEvents.drain() // the next loop makes its events afresh
		d, n, left := runEventWorld(seed)
		fresh[seed] = run{d, n}
		leftQueued += left
	}
	if leftQueued == 0 {
		t.Fatalf("no world left events queued at Close: their release is not tested")
	}
	spareEvents.drain()
	for i, seed := range []uint64{4, 1, 6, 2, 5, 3, 1, 4, 4} {
		if i > 0 {
			pools := spareEvents.snapshot()
			if len(pools) != 1 || len(pools[0]) == 0 {
				t.Fatalf("world %d: the last world's Close left no spare events", i)
			}
			for _, e := range pools[0] {
				if !isEmptyEvent(e) {
					t.Fatalf("world %d: a spare event is not empty: %+v", i, *e)
				}
			}
		}
		d, n, _ := runEventWorld(seed)
		if want := fresh[seed]; d != want.digest || n != want.events {
			t.Fatalf("seed %d on reused events: digest %s, %d events; fresh: %s, %d", seed, d, n, want.digest, want.events)
		}
	}
}

// isEmptyEvent reports whether e is the zero event.
func isEmptyEvent(e *event) bool {
	return e.fn == nil && e.cb == nil && e.msg == nil && e.loop == nil &&
		e.at == 0 && e.seq == 0 && e.actor == 0 && e.inc == 0 && e.owner == 0 &&
		!e.pending && !e.cancelled && !e.queued && e.id == (Digest{})
}
