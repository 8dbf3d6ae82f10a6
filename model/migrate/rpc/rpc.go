// Package rpc is the simulated network between callers (coordinators, the
// migrator) and group leaders: each request draws its fate (delivered, lost
// before the leader saw it, or answered into the void), its latency and
// maybe an extra delay, from the network's choices, through package fate as
// every simulated network does. A caller that gets no
// answer by its deadline gets errs.ErrTimeout and cannot know whether the
// request took effect.
package rpc

import (
	"time"

	"shardsim/fate"
	"shardsim/model/migrate/errs"
	"shardsim/simclock"
)

// Faults sets the network's behaviour: the shared request-fate
// configuration of package fate (zero rates are a perfect network).
type Faults = fate.Config

// defaultTimeout is a caller's deadline when the faults set none.
const defaultTimeout = 500 * time.Millisecond

// Quiet is a loss-free network with loopback-like latencies.
func Quiet() Faults {
	return Faults{MinLatency: 100 * time.Microsecond, MaxLatency: 1 * time.Millisecond, Timeout: defaultTimeout}
}

// Stats counts what the network did.
type Stats struct {
	Calls, LostRequests, LostResponses, Delayed, Timeouts, NoLeader int
}

// Inbound is a request as the leader's node actor receives it.
type Inbound struct {
	Group int
	Req   any
	From  string
	reply func(resp any, err error)
}

// Reply answers the request (at most once matters; later calls are
// ignored by the caller).
func (in *Inbound) Reply(resp any, err error) { in.reply(resp, err) }

// Network carries requests to group leaders.
type Network struct {
	loop     *simclock.Loop
	choices  *simclock.Choices
	faults   Faults
	leaderOf func(group int) (simclock.ActorID, bool)
	stats    Stats
}

// New returns a network; leaderOf resolves a group's current leader actor.
func New(loop *simclock.Loop, faults Faults, choices *simclock.Choices, leaderOf func(int) (simclock.ActorID, bool)) *Network {
	return &Network{loop: loop, choices: choices, faults: faults, leaderOf: leaderOf}
}

// SetFaults replaces the faults (the heal phase sets Quiet).
func (n *Network) SetFaults(f Faults) { n.faults = f }

// Stats returns the counters.
func (n *Network) Stats() Stats { return n.stats }

type answer struct {
	resp any
	err  error
}

func (n *Network) latency() time.Duration { return n.faults.Latency(n.choices) }

// Call sends req to group's leader from inside task t and waits for the
// answer or the deadline.
func (n *Network) Call(t *simclock.Task, group int, req any) (any, error) {
	n.stats.Calls++
	ctx := t.Context()
	to, ok := n.leaderOf(group)
	if !ok {
		n.stats.NoLeader++
		t.Sleep(n.faults.MinLatency + time.Millisecond)
		return nil, errs.ErrNoLeader
	}
	drawn := n.faults.Draw(n.choices)
	lat := drawn.Latency
	loseReq, loseResp := drawn.Fate == fate.LostRequest, drawn.Fate == fate.LostResponse
	if drawn.Delayed {
		n.stats.Delayed++
	}
	timeout := n.faults.TimeoutOr(defaultTimeout)
	a := t.Await(func(resume func(any)) {
		deadline := ctx.Defer(timeout, func(*simclock.Context) {
			n.stats.Timeouts++
			resume(answer{err: errs.ErrTimeout})
		})
		if loseReq {
			n.stats.LostRequests++
			return
		}
		in := &Inbound{Group: group, Req: req, From: ctx.Name()}
		in.reply = func(resp any, err error) {
			if loseResp {
				n.stats.LostResponses++
				return
			}
			ctx.Defer(n.latency(), func(*simclock.Context) {
				deadline.Cancel()
				resume(answer{resp, err})
			})
		}
		n.loop.Send(to, in, lat)
	}).(answer)
	return a.resp, a.err
}
