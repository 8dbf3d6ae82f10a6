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
	Duplicated, NodeCalls, Notices, LostNotices                     int
}

// Inbound is a request as the leader's node actor receives it. Group is
// negative for a request addressed to a node itself (CallNode). Dup marks
// the extra copy of a duplicated request: its answer goes nowhere.
type Inbound struct {
	Group int
	Req   any
	From  string
	Dup   bool
	call  *pending
}

// Reply answers the request (at most once matters; later calls are
// ignored by the caller).
func (in *Inbound) Reply(resp any, err error) {
	if in.call != nil {
		in.call.reply(resp, err)
	}
}

// Network carries requests to group leaders.
type Network struct {
	loop     *simclock.Loop
	choices  *simclock.Choices
	faults   Faults
	chaos    Chaos
	leaderOf func(group int) (simclock.ActorID, bool)
	nodeOf   func(node int) simclock.ActorID
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

func (n *Network) latency() time.Duration { return n.faults.Latency(n.choices) }

// pending is one call in flight: the request as the leader receives it,
// what the caller waits with, and the first answer on its way back, in one
// allocation. It is the Waiter of the caller's Await and, as the
// pendingDeadline and pendingAnswer views of the same pointer, the
// callback of its deadline and of the first answer's arrival, so a call
// costs this one allocation (the resume function and three callbacks were
// four more).
type pending struct {
	n        *Network
	ctx      *simclock.Context // the caller's
	in       Inbound
	to       simclock.ActorID
	lat      time.Duration // the request's way there
	timeout  time.Duration
	loseReq  bool
	loseResp bool
	waiting  bool // the caller is parked and not yet resumed
	replying bool // the leader's first answer is on its way (or arrived)
	resume   simclock.Resumer
	deadline simclock.Timer
	// The answer: the leader's first, from when it is sent while the
	// caller waits (its arrival then delivers it, unless the deadline came
	// first and put the timeout here), or the timeout. A further answer
	// travels in an arrival of its own.
	resp any
	err  error
}

// Call sends req to group's leader from inside task t and waits for the
// answer or the deadline.
func (n *Network) Call(t *simclock.Task, group int, req any) (any, error) {
	return n.CallWithin(t, group, req, 0)
}

// CallWithin is Call with the caller's own deadline (0: the network's).
func (n *Network) CallWithin(t *simclock.Task, group int, req any, within time.Duration) (any, error) {
	n.stats.Calls++
	ctx := t.Context()
	to, ok := n.resolve(group)
	if !ok {
		n.stats.NoLeader++
		t.Sleep(n.faults.MinLatency + time.Millisecond)
		return nil, errs.ErrNoLeader
	}
	drawn := n.faults.Draw(n.choices)
	if drawn.Delayed {
		n.stats.Delayed++
	}
	timeout := n.faults.TimeoutOr(defaultTimeout)
	if within > 0 {
		timeout = within
	}
	p := &pending{n: n, ctx: ctx, to: to, lat: drawn.Latency, timeout: timeout,
		loseReq: drawn.Fate == fate.LostRequest, loseResp: drawn.Fate == fate.LostResponse}
	p.in = Inbound{Group: group, Req: req, From: ctx.Name(), call: p}
	t.AwaitOn(p)
	return p.resp, p.err
}

// Wait starts the call once the task has parked: the caller's deadline,
// then the request, unless the network loses it.
func (p *pending) Wait(r simclock.Resumer) {
	p.resume, p.waiting = r, true
	p.deadline = p.ctx.DeferCall(p.timeout, (*pendingDeadline)(p))
	if p.loseReq {
		p.n.stats.LostRequests++
		return
	}
	p.n.loop.Send(p.to, &p.in, p.lat)
	p.n.duplicate(p.to, &p.in, p.lat)
}

// pendingDeadline is a call as the callback of its deadline.
type pendingDeadline pending

// Fire times the call out.
func (d *pendingDeadline) Fire(*simclock.Context) {
	p := (*pending)(d)
	p.n.stats.Timeouts++
	p.answer(nil, errs.ErrTimeout)
}

// reply carries the leader's answer back, unless the network loses it.
func (p *pending) reply(resp any, err error) {
	if p.loseResp {
		p.n.stats.LostResponses++
		return
	}
	lat := p.n.latency()
	if !p.replying {
		p.replying = true
		if p.waiting {
			// Once the caller was answered its answer stays as it got it;
			// this one's arrival then finds nobody waiting.
			p.resp, p.err = resp, err
		}
		p.ctx.DeferCall(lat, (*pendingAnswer)(p))
		return
	}
	p.ctx.Defer(lat, func(*simclock.Context) { p.arrived(resp, err) })
}

// pendingAnswer is a call as the callback of its first answer's arrival.
type pendingAnswer pending

// Fire delivers the first answer (or, if the deadline came first, nothing:
// answer finds nobody waiting).
func (a *pendingAnswer) Fire(*simclock.Context) {
	p := (*pending)(a)
	p.arrived(p.resp, p.err)
}

// arrived is an answer reaching the caller: the deadline no longer matters.
func (p *pending) arrived(resp any, err error) {
	p.deadline.Cancel()
	p.answer(resp, err)
}

// answer resumes the caller with the first answer (or timeout) to arrive;
// the task ignores later resumptions, so later answers change nothing.
func (p *pending) answer(resp any, err error) {
	if !p.waiting {
		return
	}
	p.resp, p.err = resp, err
	p.waiting = false
	p.resume.Resume(nil)
}
