package migrate

import (
	"fmt"
	"sort"

	"shardsim/model/bugs"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/group"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/rpc"
	"shardsim/simclock"
	"shardsim/simkv"
)

// Node is one server: it hosts a voter of every group (whose applied state
// the cluster keeps durably) and, for the groups it leads, the leader-local
// state: the clock, the clients waiting on proposals and reads, the
// promoter, and on the group-0 leader the migrator and the hotspot
// detector. A crash loses all of it; a new leader rebuilds it from its
// voter's applied state.
type Node struct {
	env   *Env
	id    int
	ctx   *simclock.Context
	meta  *simkv.Client
	leads []*leader // by group; nil where this node does not lead
	seq   uint64    // read ids
}

// NewNode returns node id's actor value (a fresh one after every restart).
func NewNode(env *Env, id int) *Node {
	return &Node{env: env, id: id, leads: make([]*leader, env.Cluster.Groups())}
}

// ID returns the node's index.
func (n *Node) ID() int { return n.id }

// leader is the state of one leadership term of one group on this node.
type leader struct {
	g         int
	term      uint64
	ready     bool
	clock     hlc.Clock
	waiters   []waiter // by index
	raising   bool
	onCeiling []func(ok bool)
	reads     []openRead
	access    map[uint64]*routeAccess
	promoting bool
}

// waiter waits for this node's voter to apply index. A proposal's waiter
// also names the term it proposed in: an entry of another term at that
// index means the proposal was lost.
type waiter struct {
	index uint64
	term  uint64 // 0: any entry will do
	fn    func(r fsm.Result, applied bool, err error)
}

type openRead struct {
	id   uint64
	span keys.Span
}

type routeAccess struct {
	reads, writes int
	keys          map[string]int
}

// Receive implements simclock.Actor.
func (n *Node) Receive(ctx *simclock.Context, msg any) {
	n.ctx = ctx
	switch m := msg.(type) {
	case simclock.Started:
		n.meta = n.env.Meta.Connect(ctx.Self())
	case group.ApplyTick:
		n.applyTick(m.Group)
	case group.BecameLeader:
		n.becomeLeader(m.Group, m.Term)
	case group.LostLeader:
		if ls := n.leads[m.Group]; ls != nil && ls.term == m.Term {
			n.stepDown(ls)
		}
	case *rpc.Inbound:
		n.serve(m)
	}
}

// lead returns the node's current leadership of g, if the cluster agrees.
func (n *Node) lead(g int) *leader {
	ls := n.leads[g]
	if ls == nil || !n.env.Cluster.IsLeader(g, n.id, ls.term) {
		return nil
	}
	return ls
}

func (n *Node) voter(g int) *fsm.FSM { return n.env.Cluster.Voter(g, n.id) }

// nowMs is the node's clock in HLC physical milliseconds.
func (n *Node) nowMs() uint64 {
	ms := int64(n.env.Cfg.EpochMs) + int64(n.ctx.Local())/1e6
	if ms < 1 {
		ms = 1
	}
	return uint64(ms)
}

func (n *Node) stepDown(ls *leader) {
	n.leads[ls.g] = nil
	ws, cs := ls.waiters, ls.onCeiling
	ls.waiters, ls.onCeiling = nil, nil
	for _, w := range ws {
		w.fn(fsm.Result{}, false, errs.ErrLeaderChanged)
	}
	for _, c := range cs {
		c(false)
	}
}

// applyTick applies the group's committed entries on this node's voter and
// lets the leader-local state react.
func (n *Node) applyTick(g int) {
	applied := n.env.Cluster.ApplyCommitted(g, n.id)
	ls := n.leads[g]
	if ls == nil || len(applied) == 0 {
		return
	}
	first := applied[0].Entry.Index
	for _, a := range applied {
		n.leaderApplied(ls, a)
	}
	last := n.voter(g).Applied
	for len(ls.waiters) > 0 && ls.waiters[0].index <= last {
		w := ls.waiters[0]
		ls.waiters = ls.waiters[1:]
		var r fsm.Result
		applied2 := false
		if w.index >= first {
			a := applied[w.index-first]
			if w.term != 0 && a.Entry.Term != w.term {
				w.fn(fsm.Result{}, false, errs.ErrLeaderChanged)
				continue
			}
			r, applied2 = a.Result, true
		}
		w.fn(r, applied2, nil)
	}
}

// leaderApplied keeps the leader's clock in step with what its voter made
// durable, and starts promotion when a staged route appears.
func (n *Node) leaderApplied(ls *leader, a group.Applied) {
	e := a.Entry
	switch e.Kind {
	case fsm.KindCeiling:
		ls.clock.SetCeiling(e.Ceiling)
	case fsm.KindImport:
		if a.Result.Err == nil && !a.Result.Duplicate && !n.env.Bugs.Has(bugs.MigrateNoHLCAdvance) {
			for _, row := range e.Import.Rows {
				ls.clock.ObserveDurable(row.TS)
			}
		}
	case fsm.KindFloor:
		if !n.env.Bugs.Has(bugs.MigrateNoHLCAdvance) {
			ls.clock.ObserveDurable(e.Floor)
		}
	case fsm.KindCatalog:
		n.kickPromoter(ls)
	}
}

// wait registers fn for the apply of index, expecting an entry of term
// (0: any); waiters stay sorted by index.
func (ls *leader) wait(index, term uint64, fn func(fsm.Result, bool, error)) {
	w := waiter{index: index, term: term, fn: fn}
	i := sort.Search(len(ls.waiters), func(i int) bool { return ls.waiters[i].index > index })
	ls.waiters = append(ls.waiters, waiter{})
	copy(ls.waiters[i+1:], ls.waiters[i:])
	ls.waiters[i] = w
}

// propose appends e as leader ls and calls fn with its result once this
// node's voter applied it (or with an error if leadership is lost first).
func (n *Node) propose(ls *leader, e fsm.Entry, fn func(fsm.Result, error)) {
	idx, err := n.env.Cluster.Propose(ls.g, n.id, ls.term, e)
	if err != nil {
		fn(fsm.Result{}, errs.ErrNotLeader)
		return
	}
	ls.wait(idx, ls.term, func(r fsm.Result, applied bool, err error) {
		if err == nil && !applied {
			err = errs.ErrLeaderChanged
		}
		fn(r, err)
	})
}

// afterApplied calls fn once this node's voter applied index.
func (n *Node) afterApplied(ls *leader, index uint64, fn func(error)) {
	if n.voter(ls.g).Applied >= index {
		fn(nil)
		return
	}
	ls.wait(index, 0, func(_ fsm.Result, _ bool, err error) { fn(err) })
}

// proposeWait is propose from inside a task.
func (n *Node) proposeWait(t *simclock.Task, ls *leader, e fsm.Entry) (fsm.Result, error) {
	type out struct {
		r   fsm.Result
		err error
	}
	o := t.Await(func(resume func(any)) {
		n.propose(ls, e, func(r fsm.Result, err error) { resume(out{r, err}) })
	}).(out)
	return o.r, o.err
}

// becomeLeader starts a term: catch up with the log, rebuild the clock
// from durable state, raise the ceiling past anything an earlier leader
// could have used, then serve.
func (n *Node) becomeLeader(g int, term uint64) {
	if !n.env.Cluster.IsLeader(g, n.id, term) {
		return
	}
	if old := n.leads[g]; old != nil {
		n.stepDown(old)
	}
	ls := &leader{g: g, term: term, access: map[uint64]*routeAccess{}}
	n.leads[g] = ls
	n.ctx.Go(fmt.Sprintf("lead/g%d", g), func(t *simclock.Task) {
		caughtUp := t.Await(func(resume func(any)) {
			n.afterApplied(ls, n.env.Cluster.CommitIndex(g), func(err error) { resume(err == nil) })
		}).(bool)
		if !caughtUp || n.lead(g) != ls {
			return
		}
		v := n.voter(g)
		ls.clock = hlc.Start(v.LastCommit, v.Ceiling)
		if _, err := n.proposeWait(t, ls, fsm.Entry{Kind: fsm.KindCeiling, Ceiling: n.ceilingTarget(ls)}); err != nil {
			return
		}
		ls.ready = true
		n.env.Cluster.MarkReady(g, term)
		n.kickPromoter(ls)
		if g == 0 {
			n.startMigrator(ls)
			if n.env.Cfg.Detect {
				n.startDetector(ls)
			}
		}
	})
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
			c(err == nil)
		}
	})
}

// afterRaise queues retry for when the pending ceiling raise lands; retry
// runs only if ls still leads, else fail runs.
func (n *Node) afterRaise(ls *leader, minPhys uint64, retry, fail func()) {
	ls.onCeiling = append(ls.onCeiling, func(ok bool) {
		if !ok || n.lead(ls.g) != ls {
			fail()
			return
		}
		retry()
	})
	n.raise(ls, minPhys)
}

// issue hands fn a fresh commit timestamp, waiting for a ceiling raise if
// the clock has reached the ceiling; fn gets ok=false if leadership ends.
func (n *Node) issue(ls *leader, fn func(ts hlc.TS, ok bool)) {
	now := n.nowMs()
	ts, err := ls.clock.Next(now)
	if err != nil {
		n.afterRaise(ls, 0, func() { n.issue(ls, fn) }, func() { fn(0, false) })
		return
	}
	if now+uint64(n.env.Cfg.CeilingWindow.Milliseconds())/2 > ls.clock.Ceiling() {
		n.raise(ls, 0)
	}
	fn(ts, true)
}

// observe moves the clock to a read timestamp, waiting for a ceiling raise
// when it lies above the ceiling.
func (n *Node) observe(ls *leader, ts hlc.TS, fn func(ok bool)) {
	if err := ls.clock.Observe(ts); err != nil {
		n.afterRaise(ls, ts.Phys(), func() { n.observe(ls, ts, fn) }, func() { fn(false) })
		return
	}
	fn(true)
}
