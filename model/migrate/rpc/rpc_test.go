package rpc

import (
	"errors"
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
	if in, ok := msg.(*Inbound); ok {
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
