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
//
// A receiver gets a *Inbound as its message and must copy the value at
// once (in := *msg) and keep only the copy: the pointer is the call's
// record, which the network reuses for another call once this one ended.
// The copy remembers which use of the record it belongs to, so an answer
// sent through it after the record was reused reaches nobody, as any
// answer to an ended call does.
type Inbound struct {
	Group int
	Req   any
	From  string
	Dup   bool
	ret   returnPath
}

// returnPath is where an Inbound's answers go: the call's record as of the
// use gen, and what an answer needs once the record has moved on (the
// caller's context and whether the network loses the answers).
type returnPath struct {
	call     *pending // nil: nowhere (a duplicate's copy)
	gen      uint32
	loseResp bool
	ctx      *simclock.Context
}

// Reply answers the request (at most once matters; later calls are
// ignored by the caller).
func (in Inbound) Reply(resp any, err error) {
	p := in.ret.call
	switch {
	case p == nil:
	case p.gen != in.ret.gen:
		p.n.replyToEnded(in.ret)
	default:
		p.reply(resp, err)
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
	free     []*pending // ended calls' records, for the next calls
	noReuse  bool       // every call gets a new record (tests compare)
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
// record. It is the Waiter of the caller's Await and, as the
// pendingDeadline and pendingAnswer views of the same pointer, the
// callback of its deadline and of the first answer's arrival, so a call
// costs no allocation beyond it (the resume function and three callbacks
// were four more), and none at all once the network has ended records to
// reuse (see release).
type pending struct {
	n        *Network
	ctx      *simclock.Context // the caller's
	in       Inbound
	to       simclock.ActorID
	lat      time.Duration // the request's way there
	timeout  time.Duration
	gen      uint32 // which use of the record this is (Inbound.ret.gen)
	loseReq  bool
	loseResp bool
	waiting  bool // the caller is parked and not yet resumed
	replying bool // the leader's first answer is on its way (or arrived)
	// What still holds the record: release reuses it once none does.
	returned        bool // the caller has taken its answer
	deadlinePending bool // the deadline is scheduled and neither fired nor cancelled
	arrivals        int  // answers on their way back
	resume          simclock.Resumer
	deadline        simclock.Timer
	// The answer: the leader's first, from when it is sent while the
	// caller waits (its arrival then delivers it, unless the deadline came
	// first and put the timeout here), or the timeout. A further answer
	// travels in an arrival of its own.
	resp any
	err  error
}

// record returns a record for a new call: an ended call's, or a new one.
func (n *Network) record() *pending {
	if k := len(n.free); k > 0 {
		p := n.free[k-1]
		n.free = n.free[:k-1]
		return p
	}
	return &pending{n: n}
}

// release puts p on the free list once nothing holds it any more: the
// caller took its answer, the deadline will not fire, no answer is on its
// way, and the receiver either never got the request (lost) or has
// answered it, so it holds a copy of the Inbound at most (a request
// delivered and never answered keeps its record: its receiver may still
// look at it). The next use gets another generation, so an answer sent
// through an old copy goes to replyToEnded.
func (p *pending) release() {
	if !p.returned || p.deadlinePending || p.arrivals > 0 || !(p.loseReq || p.replying) || p.n.noReuse {
		return
	}
	n, gen := p.n, p.gen+1
	*p = pending{n: n, gen: gen}
	n.free = append(n.free, p)
}

// replyToEnded is an answer sent through an Inbound whose call ended and
// whose record was reused: what reply does for an ended call, without the
// record. The network loses it or it arrives after a drawn latency to
// nobody (the same draw and the same event as before the reuse).
func (n *Network) replyToEnded(ret returnPath) {
	if ret.loseResp {
		n.stats.LostResponses++
		return
	}
	ret.ctx.DeferCall(n.latency(), nobodyWaits{})
}

// nobodyWaits is the arrival of an answer to an ended call.
type nobodyWaits struct{}

// Fire does nothing: the caller took its answer long ago.
func (nobodyWaits) Fire(*simclock.Context) {}

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
	p := n.record()
	p.ctx, p.to, p.lat, p.timeout = ctx, to, drawn.Latency, timeout
	p.loseReq, p.loseResp = drawn.Fate == fate.LostRequest, drawn.Fate == fate.LostResponse
	p.in = Inbound{Group: group, Req: req, From: ctx.Name(),
		ret: returnPath{call: p, gen: p.gen, loseResp: p.loseResp, ctx: ctx}}
	t.AwaitOn(p)
	resp, err := p.resp, p.err
	p.returned = true
	p.release()
	return resp, err
}

// Wait starts the call once the task has parked: the caller's deadline,
// then the request, unless the network loses it.
func (p *pending) Wait(r simclock.Resumer) {
	p.resume, p.waiting = r, true
	p.deadline, p.deadlinePending = p.ctx.DeferCall(p.timeout, (*pendingDeadline)(p)), true
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
	p.deadlinePending = false
	p.n.stats.Timeouts++
	p.answer(nil, errs.ErrTimeout)
	p.release()
}

// reply carries the leader's answer back, unless the network loses it.
func (p *pending) reply(resp any, err error) {
	if p.loseResp {
		p.n.stats.LostResponses++
		p.replying = true // answered: the receiver is done with the record
		p.release()
		return
	}
	lat := p.n.latency()
	p.arrivals++
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
	p.ctx.Defer(lat, func(*simclock.Context) {
		p.arrivals--
		p.arrived(resp, err)
		p.release()
	})
}

// pendingAnswer is a call as the callback of its first answer's arrival.
type pendingAnswer pending

// Fire delivers the first answer (or, if the deadline came first, nothing:
// answer finds nobody waiting).
func (a *pendingAnswer) Fire(*simclock.Context) {
	p := (*pending)(a)
	p.arrivals--
	p.arrived(p.resp, p.err)
	p.release()
}

// arrived is an answer reaching the caller: the deadline no longer matters.
func (p *pending) arrived(resp any, err error) {
	if p.deadline.Cancel() {
		p.deadlinePending = false
	}
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
