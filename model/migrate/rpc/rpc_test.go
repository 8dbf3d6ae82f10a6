package rpc

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"shardsim/model/migrate/errs"
	"shardsim/simclock"
)

type echo struct{ seen *int }

func (e echo) Receive(ctx *simclock.Context, msg any) {
	if in, ok := msg.(*Inbound); ok {
		*e.seen++
		in.Reply(in.Req, nil)
	}
}

type caller struct {
	net  *Network
	n    int
	errs *[]error
}

func (c caller) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); !ok {
		return
	}
	ctx.Go("calls", func(t *simclock.Task) {
		for i := 0; i < c.n; i++ {
			r, err := c.net.Call(t, 0, i)
			if err == nil && r.(int) != i {
				err = errors.New("wrong answer")
			}
			*c.errs = append(*c.errs, err)
		}
	})
}

// Lost requests and lost answers both end in a timeout: the caller cannot
// tell them apart. Only the lost answers were seen by the leader.
func TestFaultsAreAmbiguous(t *testing.T) {
	loop := simclock.NewLoop(nil, simclock.Budget{})
	seen := 0
	leader := loop.Spawn("leader", echo{&seen}, nil, nil)
	f := Quiet()
	f.LoseRequest, f.LoseResponse, f.Timeout = 0.2, 0.2, 50*time.Millisecond
	net := New(loop, f, simclock.NewSeeded(5), func(int) (simclock.ActorID, bool) { return leader, true })
	var got []error
	loop.Spawn("caller", caller{net, 200, &got}, nil, nil)
	loop.Run()
	st := net.Stats()
	timeouts := 0
	for _, err := range got {
		if err != nil {
			if !errs.Ambiguous(err) {
				t.Fatalf("unexpected error %v", err)
			}
			timeouts++
		}
	}
	if st.LostRequests == 0 || st.LostResponses == 0 || timeouts != st.LostRequests+st.LostResponses {
		t.Fatalf("stats %+v, %d timeouts", st, timeouts)
	}
	if seen != 200-st.LostRequests {
		t.Fatalf("leader saw %d of %d", seen, 200-st.LostRequests)
	}
}

func TestNoLeader(t *testing.T) {
	loop := simclock.NewLoop(nil, simclock.Budget{})
	net := New(loop, Quiet(), simclock.NewSeeded(1), func(int) (simclock.ActorID, bool) { return 0, false })
	var got []error
	loop.Spawn("caller", caller{net, 1, &got}, nil, nil)
	loop.Run()
	if len(got) != 1 || !errors.Is(got[0], errs.ErrNoLeader) || !errs.Retryable(got[0]) {
		t.Fatalf("got %v", got)
	}
}

// twice answers every request twice: the right answer, then a wrong one,
// at once or (late) 5ms later.
type twice struct{ late bool }

func (tw twice) Receive(ctx *simclock.Context, msg any) {
	if m, ok := msg.(*Inbound); ok {
		in := *m // the receiver's copy: the network reuses m
		in.Reply(in.Req, nil)
		if tw.late {
			ctx.Defer(5*time.Millisecond, func(*simclock.Context) { in.Reply(-1, nil) })
			return
		}
		in.Reply(-1, nil)
	}
}

// A caller takes the first answer to arrive; a second answer to the same
// request, whether sent while the first is on its way or after it
// arrived, changes nothing, neither for that call nor for the next ones.
// The latency is fixed, so two answers sent at once arrive at once, and
// the loop runs them in the order they were sent.
func TestSecondAnswerIsIgnored(t *testing.T) {
	for _, late := range []bool{false, true} {
		loop := simclock.NewLoop(nil, simclock.Budget{})
		leader := loop.Spawn("leader", twice{late}, nil, nil)
		f := Quiet()
		f.MaxLatency = f.MinLatency
		net := New(loop, f, simclock.NewSeeded(2), func(int) (simclock.ActorID, bool) { return leader, true })
		var got []error
		loop.Spawn("caller", caller{net, 50, &got}, nil, nil)
		loop.Run()
		if len(got) != 50 {
			t.Fatalf("late %v: %d of 50 calls returned", late, len(got))
		}
		for i, err := range got {
			if err != nil {
				t.Fatalf("late %v: call %d: %v", late, i, err)
			}
		}
	}
}

// lateAnswers answers every request at once, and a while later once more
// with -1, through its copy of the Inbound: by then the call has ended
// and its record usually serves another call. It notes each request it
// got and which record carried it.
type lateAnswers struct {
	seen    *[]any
	records map[*pending]bool
}

func (la lateAnswers) Receive(ctx *simclock.Context, msg any) {
	m, ok := msg.(*Inbound)
	if !ok {
		return
	}
	in := *m
	*la.seen = append(*la.seen, in.Req)
	la.records[in.ret.call] = true
	in.Reply(in.Req, nil)
	ctx.Defer(7*time.Millisecond, func(*simclock.Context) { in.Reply(-1, nil) })
}

// lateRun is what one run of lateAnswers shows: the callers' results, the
// requests the receiver got, the network's counters and the loop's end.
type lateRun struct {
	got     []error
	seen    []any
	stats   Stats
	end     simclock.Time
	events  uint64
	records int
}

func runLateAnswers(reuse bool) lateRun {
	loop := simclock.NewLoop(nil, simclock.Budget{})
	var r lateRun
	records := map[*pending]bool{}
	leader := loop.Spawn("leader", lateAnswers{&r.seen, records}, nil, nil)
	f := Quiet()
	f.LoseRequest, f.LoseResponse, f.Timeout = 0.1, 0.1, 20*time.Millisecond
	f.Delay, f.MaxDelay = 0.1, 40*time.Millisecond // some requests arrive after their deadline
	net := New(loop, f, simclock.NewSeeded(7), func(int) (simclock.ActorID, bool) { return leader, true })
	net.noReuse = !reuse
	for i := 0; i < 3; i++ {
		loop.Spawn(fmt.Sprintf("caller%d", i), caller{net, 300, &r.got}, nil, nil)
	}
	loop.Run()
	r.stats, r.end, r.events, r.records = net.Stats(), loop.Now(), loop.Events(), len(records)
	return r
}

// Reusing ended calls' records changes nothing: a late answer sent through
// an old Inbound after its record moved on to another call reaches nobody
// (the answer of that other call stays right), draws its latency and
// makes its event as before, and no request is delivered changed. The
// run with reuse must equal the run without, answer for answer.
func TestLateAnswerToReusedRecord(t *testing.T) {
	with, without := runLateAnswers(true), runLateAnswers(false)
	if with.records*10 > len(with.seen) {
		t.Fatalf("records were hardly reused: %d records for %d requests", with.records, len(with.seen))
	}
	if without.records != len(without.seen) {
		t.Fatalf("without reuse: %d records for %d requests", without.records, len(without.seen))
	}
	for i, err := range with.got {
		if err != nil && !errs.Ambiguous(err) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if with.stats.LostRequests == 0 || with.stats.LostResponses == 0 || with.stats.Timeouts == 0 || with.stats.Delayed == 0 {
		t.Fatalf("the run should lose, delay and time out some calls: %+v", with.stats)
	}
	if !reflect.DeepEqual(with.got, without.got) || !reflect.DeepEqual(with.seen, without.seen) {
		t.Fatalf("answers or requests differ with reuse")
	}
	if with.stats != without.stats || with.end != without.end || with.events != without.events {
		t.Fatalf("with reuse: %+v, end %v, %d events; without: %+v, end %v, %d events",
			with.stats, with.end, with.events, without.stats, without.end, without.events)
	}
}
