package migrate

import (
	"time"

	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/group"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/route"
	"shardsim/model/migrate/rpc"
	"shardsim/simclock"
	"shardsim/simkv"
)

// Node is one server: it hosts voters of some groups (whose applied state
// the cluster keeps durably), its routing engine (the catalog view its
// watcher pulls, the watermark group-0 heartbeats bring; durable too) and,
// for the groups it believes it leads, the leader-local state: the clock,
// the timestamp cache, the clients waiting on proposals and reads, the
// promoter and compactor, and on the group-0 leader the migrator, the
// heartbeats and the hotspot detector. A crash loses the leader-local
// state; a new leader rebuilds it from its voter's applied state.
type Node struct {
	env  *Env
	id   int
	ctx  *simclock.Context
	meta *simkv.Client
	eng  *route.Engine
	lead []*leader // by group; nil where this node does not believe it leads
	seq  uint64    // read ids
	// applied is applyTick's buffer of applied entries, kept between ticks
	// (nil while a tick uses it).
	applied []group.Applied
	// clock is the node's clock (afterLocal), once clockKnown (a nil clock
	// is virtual time itself).
	clock      *simclock.NodeClock
	clockKnown bool
}

// NewNode returns node id's actor value (a fresh one after every restart).
func NewNode(env *Env, id int) *Node {
	return &Node{env: env, id: id, eng: env.Engines[id], lead: make([]*leader, env.Cluster.Groups())}
}

// ID returns the node's index.
func (n *Node) ID() int { return n.id }

// leader is the state of one leadership term of one group on this node.
type leader struct {
	node      *Node
	g         int
	term      uint64
	ready     bool
	clock     hlc.Clock
	ts        tsCache
	waiters   waitQueue // by index
	raising   bool
	onCeiling []func(ok bool)
	reads     []openRead
	access    map[uint64]*routeAccess // the detector's counters (count); nil until the window's first
	promoting bool
}

// waiter waits for this node's voter to apply index. A proposal's waiter
// also names the term it proposed in: an entry of another term at that
// index means the proposal was lost.
//
// A waiter that answers a request (proposeReply, afterRead) holds the
// request and its conversion or read itself, so such a wait costs no
// allocation; any other is told the outcome through then.
type waiter struct {
	index uint64
	term  uint64 // 0: any entry will do
	then  outcome
	in    rpc.Inbound                          // answered with conv(index, result) when conv is set
	conv  func(index uint64, r fsm.Result) any // in's answer
	// read, when set with in, answers in with read(voter, in.Req) instead
	// (afterRead: it looks at the outcome's err only, as afterApplied's
	// waiters do).
	read func(v *fsm.FSM, req any) (any, error)
}

// outcome is what a waiter tells: r is the result of the entry at the
// waiter's index once this node's voter applied it; applied is false when
// that index was applied before the waiter's first apply was seen (or, for
// a waiter of a term, holds another term's entry); err is set when the
// leadership ended first. A waiter of any term (afterApplied) looks at err
// only.
type outcome interface {
	applied(r fsm.Result, applied bool, err error)
}

// done tells w's outcome; n is the node whose leader of group g w waited
// on.
func (w *waiter) done(n *Node, g int, r fsm.Result, applied bool, err error) {
	if w.read != nil {
		answerReadOnly(n, g, w.in, w.read, err)
		return
	}
	if w.conv != nil {
		answerProposal(w.in, w.index, w.conv, r, proposalErr(applied, err))
		return
	}
	w.then.applied(r, applied, err)
}

// answerProposal answers in with conv(index, r), or with the proposal's
// error or the entry's.
func answerProposal(in rpc.Inbound, index uint64, conv func(uint64, fsm.Result) any, r fsm.Result, err error) {
	switch {
	case err != nil:
		in.Reply(nil, err)
	case r.Err != nil:
		in.Reply(nil, r.Err)
	default:
		in.Reply(conv(index, r), nil)
	}
}

type openRead struct {
	id   uint64
	span keys.Span
	ts   hlc.TS // 0 until the read's timestamp is fixed
}

type routeAccess struct {
	reads, writes int
	keys          map[string]int
}

// Heartbeat is what the group-0 leader sends every node: the highest
// cutover catalog version it has seen.
type Heartbeat struct{ Watermark uint64 }

// Receive implements simclock.Actor.
func (n *Node) Receive(ctx *simclock.Context, msg any) {
	n.ctx = ctx
	switch m := msg.(type) {
	case simclock.Started:
		n.meta = n.env.Meta.Connect(ctx.Self())
		n.eng.Restarted()
		n.watch(ctx)
	case group.ApplyTick:
		n.applyTick(m.Group)
	case group.BecameLeader:
		n.becomeLeader(m.Group, m.Term)
	case group.LostLeader:
		if ls := n.lead[m.Group]; ls != nil && ls.term <= m.Term {
			n.stepDown(ls)
		}
	case Heartbeat:
		n.eng.SeeWatermark(m.Watermark)
	case *rpc.Inbound:
		n.serve(*m) // a copy: the network reuses m once the call ended
	}
}

// leads returns the node's leadership of g as the node believes it: a
// deposed or paused-and-resumed leader keeps acting on it until a LostLeader
// notice (or a refused proposal or read) tells it otherwise.
func (n *Node) leads(g int) *leader { return n.lead[g] }

// leading reports whether ls is still its node's leadership of its group:
// each of a leader's loops (heartbeats, compactor, lockResolver,
// promoter) ends once it is not.
func (ls *leader) leading() bool { return ls.node.leads(ls.g) == ls }

func (n *Node) voter(g int) *fsm.FSM { return n.env.Cluster.Voter(g, n.id) }

// afterLocal runs cb as an event of the node after d measured on its own
// clock: the event a task's Sleep(d) wakes it with, for a loop that needs
// no task.
func (n *Node) afterLocal(d time.Duration, cb simclock.Callback) {
	if !n.clockKnown {
		n.clock, n.clockKnown = n.ctx.Loop().Clock(n.ctx.Self()), true
	}
	n.ctx.DeferCall(n.clock.RealDuration(d), cb)
}

// nowMs is the node's clock in HLC physical milliseconds.
func (n *Node) nowMs() uint64 {
	ms := int64(n.env.Cfg.EpochMs) + int64(n.ctx.Local())/1e6
	if ms < 1 {
		ms = 1
	}
	return uint64(ms)
}

func (n *Node) stepDown(ls *leader) {
	n.lead[ls.g] = nil
	ws, cs := ls.waiters.takeAll(), ls.onCeiling
	ls.onCeiling = nil
	for i := range ws {
		ws[i].done(n, ls.g, fsm.Result{}, false, errs.ErrLeaderChanged)
	}
	for _, c := range cs {
		c(false)
	}
}

// applyTick applies the group's committed entries on this node's voter and
// lets the leader-local state react.
func (n *Node) applyTick(g int) {
	ls := n.lead[g] // observers of the apply cannot change it
	applied := n.env.Cluster.ApplyCommitted(g, n.id, ls != nil, n.applied[:0])
	n.applied = nil
	if ls != nil && len(applied) > 0 {
		n.answerApplied(ls, applied)
	}
	n.applied = applied
}

// answerApplied lets leader ls react to what its voter applied, and answers
// the waiters of those entries.
func (n *Node) answerApplied(ls *leader, applied []group.Applied) {
	first := applied[0].Entry.Index
	for _, a := range applied {
		n.leaderApplied(ls, a)
	}
	last := n.voter(ls.g).Applied
	for ls.waiters.len() > 0 && ls.waiters.front().index <= last {
		w := ls.waiters.pop()
		if w.index < first {
			w.done(n, ls.g, fsm.Result{}, false, nil)
			continue
		}
		a := applied[w.index-first]
		if w.term != 0 && a.Entry.Term != w.term {
			w.done(n, ls.g, fsm.Result{}, false, errs.ErrLeaderChanged)
			continue
		}
		w.done(n, ls.g, a.Result, true, nil)
	}
}

// leaderApplied keeps the leader's clock in step with what its voter made
// durable.
func (n *Node) leaderApplied(ls *leader, a group.Applied) {
	e := a.Entry
	switch e.Kind {
	case fsm.KindCeiling:
		ls.clock.SetCeiling(e.Ceiling)
	case fsm.KindImport, fsm.KindFloor:
		if a.Result.Err == nil && !a.Result.Duplicate && ls.ready {
			ls.clock.ObserveDurable(a.Result.LastCommit)
		}
	}
}

// propose appends e as leader ls and calls fn with its result once this
// node's voter applied it (or with an error if leadership is lost first).
func (n *Node) propose(ls *leader, e fsm.Entry, fn func(fsm.Result, error)) {
	n.proposeThen(ls, e, waiter{then: proposalFunc(fn)})
}

// proposalFunc is a proposal's callback as its waiter's outcome (a func
// value fits in an interface as it is: the conversion allocates nothing).
type proposalFunc func(fsm.Result, error)

func (f proposalFunc) applied(r fsm.Result, applied bool, err error) { f(r, proposalErr(applied, err)) }

// proposeThen appends e as leader ls and registers w (its outcome; index
// and term are filled in) for the apply of e's index; if ls no longer
// leads, w gets ErrNotLeader at once (as an applied entry's error, which
// proposalErr passes on unchanged).
func (n *Node) proposeThen(ls *leader, e fsm.Entry, w waiter) {
	idx, err := n.env.Cluster.Propose(ls.g, n.id, ls.term, e)
	if err != nil {
		w.done(n, ls.g, fsm.Result{}, true, errs.ErrNotLeader)
		return
	}
	w.index, w.term = idx, ls.term
	ls.waiters.insert(w)
}

// proposalErr is a proposal's error from its waiter's outcome: an entry
// whose index came to hold another term's entry lost to a leader change.
func proposalErr(applied bool, err error) error {
	if err == nil && !applied {
		return errs.ErrLeaderChanged
	}
	return err
}

// afterApplied tells then (err only, see outcome) once this node's voter
// applied index: at once if it has.
func (n *Node) afterApplied(ls *leader, index uint64, then outcome) {
	if n.voter(ls.g).Applied >= index {
		then.applied(fsm.Result{}, true, nil)
		return
	}
	ls.waiters.insert(waiter{index: index, then: then})
}

// becomeLeader starts a term. The new leader may not have applied
// everything committed: its first entry (a ceiling above its own clock)
// commits only once every earlier entry is committed, and when its voter
// has applied it, the leader-local state is rebuilt from that applied
// state (the clock from the last commit ts and the highest ceiling any
// earlier leader used; the timestamp cache from the clock), and it serves.
func (n *Node) becomeLeader(g int, term uint64) {
	if old := n.lead[g]; old != nil {
		n.stepDown(old)
	}
	ls := &leader{node: n, g: g, term: term}
	n.lead[g] = ls
	first := n.nowMs() + uint64(n.env.Cfg.CeilingWindow.Milliseconds())
	n.proposeThen(ls, fsm.Entry{Kind: fsm.KindCeiling, Ceiling: first}, waiter{then: (*takeOver)(ls)})
}

// takeOver is a new term's leader as the outcome of the term's first
// entry: once its voter applied it, the leader serves (no task waits for
// it: a task's wake-up switches coroutines, and the entry is proposed at
// the point a task waiting for it would have proposed it).
type takeOver leader

// applied rebuilds the leader-local state from the voter's applied state
// and starts the leader's loops, unless the term ended first (outcome).
func (to *takeOver) applied(_ fsm.Result, applied bool, err error) {
	ls := (*leader)(to)
	n := ls.node
	if proposalErr(applied, err) != nil || !ls.leading() {
		return
	}
	v := n.voter(ls.g)
	ls.clock = hlc.Start(v.LastCommit, v.Ceiling)
	ls.ts = newTSCache(ls.clock.Last())
	ls.ready = true
	n.env.Cluster.MarkReady(ls.g, ls.term)
	n.kickPromoter(ls)
	n.startCompactor(ls)
	n.startLockResolver(ls)
	if ls.g == 0 {
		n.startMigrator(ls)
		n.startHeartbeats(ls)
		if n.env.Cfg.Detect {
			n.startDetector(ls)
		}
	}
}

func (n *Node) ceilingTarget(ls *leader) uint64 {
	base := n.nowMs()
	if p := ls.clock.Last().Phys(); p > base {
		base = p
	}
	return base + uint64(n.env.Cfg.CeilingWindow.Milliseconds())
}

// raise proposes a ceiling above both the node's clock and minPhys,
// unless a raise is on its way.
func (n *Node) raise(ls *leader, minPhys uint64) {
	if ls.raising {
		return
	}
	ls.raising = true
	target := n.ceilingTarget(ls)
	if t := minPhys + uint64(n.env.Cfg.CeilingWindow.Milliseconds()); t > target {
		target = t
	}
	n.propose(ls, fsm.Entry{Kind: fsm.KindCeiling, Ceiling: target}, func(_ fsm.Result, err error) {
		ls.raising = false
		cs := ls.onCeiling
		ls.onCeiling = nil
		for _, c := range cs {
			c(err == nil && n.leads(ls.g) == ls)
		}
	})
}

// afterRaise queues then for when the pending ceiling raise lands: ok
// says it landed and ls still leads.
func (n *Node) afterRaise(ls *leader, minPhys uint64, then func(ok bool)) {
	ls.onCeiling = append(ls.onCeiling, then)
	n.raise(ls, minPhys)
}

// issue hands fn a fresh commit timestamp, waiting for a ceiling raise if
// the clock has reached the ceiling; fn gets ok=false if leadership ends.
func (n *Node) issue(ls *leader, fn func(ts hlc.TS, ok bool)) {
	ts, ok := n.issueNow(ls)
	if !ok {
		n.afterRaise(ls, 0, func(ok bool) {
			if !ok {
				fn(0, false)
				return
			}
			n.issue(ls, fn)
		})
		return
	}
	fn(ts, true)
}

// issueNow returns a fresh commit timestamp (ok), raising the ceiling
// early when the clock nears it, or ok false, with nothing changed, when
// the clock has reached the ceiling and must wait for a raise.
func (n *Node) issueNow(ls *leader) (hlc.TS, bool) {
	now := n.nowMs()
	ts, err := ls.clock.Next(now)
	if err != nil {
		return 0, false
	}
	if now+uint64(n.env.Cfg.CeilingWindow.Milliseconds())/2 > ls.clock.Ceiling() {
		n.raise(ls, 0)
	}
	return ts, true
}

// observe moves the clock to a read (or caller-supplied) timestamp, waiting
// for a ceiling raise when it lies above the ceiling.
func (n *Node) observe(ls *leader, ts hlc.TS, fn func(ok bool)) {
	if err := ls.clock.Observe(ts); err != nil {
		n.afterRaise(ls, ts.Phys(), func(ok bool) {
			if !ok {
				fn(false)
				return
			}
			n.observe(ls, ts, fn)
		})
		return
	}
	fn(true)
}
