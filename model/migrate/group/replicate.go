package group

import (
	"errors"

	"shardsim/model/migrate/fsm"
)

// ErrNotLeader is Propose's answer to a node that has already seen a newer
// term (it learns it lost leadership at once).
var ErrNotLeader = errors.New("group: proposer has seen a newer term")

// Propose appends e to node n's log as leader of group g at term and
// returns its index. The true leader's entry is replicated and commits once
// a quorum holds it. A deposed leader that has not learned it yet appends
// only to its own log (it believes it leads); its appends are refused and
// it is told after a round trip, and the entry is later truncated.
func (c *Cluster) Propose(g, n int, term uint64, e fsm.Entry) (uint64, error) {
	gr := c.groups[g]
	r := gr.reps[n]
	if r == nil || r.term > term {
		c.notifyLost(n, g, term, 0)
		return 0, ErrNotLeader
	}
	e.Index, e.Term = r.last()+1, term
	r.append(c.entries.Keep(e))
	if gr.leader == n && gr.term == term {
		gr.ls.to[n].match = r.last()
		c.advanceCommit(gr) // a single-voter configuration commits alone
		c.sendAll(gr)
		return e.Index, nil
	}
	c.stats.StaleAppends++
	c.notifyLost(n, g, term, c.replDelay()+c.replDelay())
	return e.Index, nil
}

// sendAll sends every follower of the leader's configuration what it lacks.
func (c *Cluster) sendAll(gr *Group) {
	if gr.ls == nil {
		return
	}
	for _, f := range gr.reps[gr.ls.node].config() {
		if f != gr.ls.node {
			c.sendTo(gr, f)
		}
	}
}

// sendTo sends follower f the leader's entries after what f is known to
// match, with the leader's commit index, unless an append to f is already
// on its way (the next one follows when it lands) or f does not take part.
func (c *Cluster) sendTo(gr *Group, f int) {
	ls := gr.ls
	fr := gr.reps[f]
	if ls == nil || fr == nil || ls.to[f].inflight || !c.receptive(f) {
		return
	}
	L := gr.reps[ls.node]
	if ls.to[f].match < L.base {
		c.sendSnapshot(gr, f)
		return
	}
	from, upto := ls.to[f].match+1, L.last()
	if from > upto && ls.to[f].sentCommit >= L.commit {
		return
	}
	var ents []*fsm.Entry
	if from <= upto {
		// The message shares the leader's log: a log only ever appends past
		// its length and truncates by reslicing to a full slice (see
		// replica.truncate), so the entries in this window never change.
		ents = L.log[from-L.base-1 : upto-L.base : upto-L.base]
	}
	prev := from - 1
	prevTerm, commit := L.termAt(prev), L.commit
	ls.to[f].inflight, ls.to[f].sentCommit = true, commit
	m := ls.to[f].append
	if m == nil || m.pending {
		m = &appendMsg{c: c, gr: gr, leader: ls.node, term: ls.term, f: f}
		m.fn = m.deliver
		ls.to[f].append = m
	}
	m.pending = true
	m.prev, m.prevTerm, m.ents, m.commit = prev, prevTerm, ents, commit
	c.loop.After(c.replDelay(), m.fn)
}

// appendMsg is an append from a leader (at a term) to follower f on its way.
// A leader mostly has one on its way to each follower (inflight), so it
// keeps one per follower and reuses it once delivered; one still pending
// (a follower that came back up is sent again at once) is left to arrive
// and a fresh one takes its place.
type appendMsg struct {
	pending        bool
	c              *Cluster
	gr             *Group
	leader         int
	term           uint64
	f              int
	prev, prevTerm uint64
	ents           []*fsm.Entry
	commit         uint64
	fn             func() // deliver, bound once
}

// deliver hands the append to the follower.
func (m *appendMsg) deliver() {
	m.pending = false
	m.c.deliver(m.gr, m.leader, m.term, m.f, m.prev, m.prevTerm, m.ents, m.commit)
}

// current reports whether leader at term still leads gr.
func (gr *Group) current(leader int, term uint64) bool {
	return gr.ls != nil && gr.ls.node == leader && gr.ls.term == term
}

// deliver is follower f receiving an append from leader at term: entries
// after prev (whose term must match prevTerm), and the leader's commit index.
func (c *Cluster) deliver(gr *Group, leader int, term uint64, f int, prev, prevTerm uint64, ents []*fsm.Entry, commit uint64) {
	cur := gr.current(leader, term)
	if cur {
		gr.ls.to[f].inflight = false
	}
	fr := gr.reps[f]
	if fr == nil || !c.receptive(f) {
		return // lost; NodeUp sends again
	}
	if fr.term > term {
		c.stats.StaleAppends++
		return
	}
	fr.term = term
	if prev > fr.last() || prev >= fr.base && fr.termAt(prev) != prevTerm {
		if cur { // raft's probing: find where the logs agree and resend
			gr.ls.to[f].match = matchLen(gr.reps[leader], fr)
			c.sendTo(gr, f)
		}
		return
	}
	for _, e := range ents {
		if e.Index <= fr.base {
			continue
		}
		if e.Index <= fr.last() {
			if fr.termAt(e.Index) == e.Term {
				continue
			}
			c.stats.Truncations++
			fr.truncate(e.Index - 1)
		}
		fr.append(e)
	}
	lastNew := prev + uint64(len(ents))
	if nc := min(commit, lastNew); nc > fr.commit {
		fr.commit = nc
		c.scheduleApply(gr, fr)
	}
	if cur {
		if lastNew > gr.ls.to[f].match {
			gr.ls.to[f].match = lastNew
		}
		c.advanceCommit(gr)
		c.sendTo(gr, f)
	}
}

// sendSnapshot installs the leader's applied state on follower f, whose
// log ends before the leader's own snapshot base.
func (c *Cluster) sendSnapshot(gr *Group, f int) {
	ls := gr.ls
	L := gr.reps[ls.node]
	snap := snapshotOf(L)
	ls.to[f].inflight = true
	leader, term := ls.node, ls.term
	c.loop.After(c.replDelay(), func() {
		cur := gr.current(leader, term)
		if cur {
			gr.ls.to[f].inflight = false
		}
		fr := gr.reps[f]
		if fr == nil || !c.receptive(f) || fr.term > term {
			return
		}
		snap.term = term
		gr.reps[f] = snap.install(f, fr)
		c.stats.Snapshots++
		if cur {
			gr.ls.to[f].match = snap.base
			c.sendTo(gr, f)
		}
	})
}

// advanceCommit moves the leader's commit index to the highest entry of its
// own term that a quorum of its configuration holds (raft 5.4.2: earlier
// terms' entries commit only beneath one of the current term).
func (c *Cluster) advanceCommit(gr *Group) {
	ls := gr.ls
	L := gr.reps[ls.node]
	cfg := L.config()
	for n := L.last(); n > L.commit && L.termAt(n) == ls.term; n-- {
		votes := 0
		for _, v := range cfg {
			if ls.to[v].match >= n {
				votes++
			}
		}
		if votes*2 <= len(cfg) {
			continue
		}
		L.commit = n
		if n > gr.commit {
			gr.commit = n
		}
		c.scheduleApply(gr, L)
		if !contains(cfg, ls.node) && L.cfgs[len(L.cfgs)-1].index <= n {
			// The leader removed itself and the change committed: it steps
			// down (raft 6), and the rest elect a new leader.
			c.loseLeader(gr, c.learnDelay())
			return
		}
		c.sendAll(gr)
		return
	}
}

// scheduleApply sends r's node an ApplyTick, after the voter's own apply
// lag, when it has learned commits it has not applied and none is on its
// way.
func (c *Cluster) scheduleApply(gr *Group, r *replica) {
	if !c.up[r.node] || r.ticking || r.fsm.Applied >= r.commit {
		return
	}
	lag := c.choices.Duration(c.cfg.ApplyMin, c.cfg.ApplyMax)
	if c.choices.Chance(c.cfg.SlowApply) {
		lag += c.choices.Duration(0, c.cfg.SlowApplyMax)
	}
	r.ticking = true
	c.loop.Send(c.actors[r.node], ApplyTick{Group: gr.ID}, lag)
}

// Applied is one entry a voter applied, with its result. The entry is the
// log's own: read it, never change it.
type Applied struct {
	Entry  *fsm.Entry
	Result fsm.Result
}

// ApplyCommitted applies, on node n's replica of g, every entry it learned
// is committed (the node calls it on an ApplyTick) and, when collect says
// so, appends them to out and returns it (a node that does not lead has no
// use for them).
func (c *Cluster) ApplyCommitted(g, n int, collect bool, out []Applied) []Applied {
	gr := c.groups[g]
	r := gr.reps[n]
	if r == nil {
		return out
	}
	r.ticking = false
	for r.fsm.Applied < r.commit {
		e := r.entry(r.fsm.Applied + 1)
		res := r.fsm.ApplyDecided(e, c.decisionFor(gr, r, e))
		first := e.Index > gr.maxApplied
		if first {
			gr.maxApplied = e.Index
		}
		for _, o := range c.obs {
			o.OnApply(g, n, *e, res, first, r.fsm)
		}
		if collect {
			out = append(out, Applied{Entry: e, Result: res})
		}
	}
	return out
}

// decisionFor returns the decision r applies e by, and names the state r
// holds after it. The first voter of the group to apply e decides
// (fsm.Decision) and the group keeps its decision; a voter that applies
// the same entry to a state of the same name (an equal state: see
// replica.stateName) follows that decision instead of deciding again. Any
// other apply (a voter whose state differs, which no correct run has but
// a broken log could) decides afresh, and its decision replaces the kept
// one: a voter follows only a decision made from a state equal to its
// own, so replicas stay as independent as if each decided alone.
func (c *Cluster) decisionFor(gr *Group, r *replica, e *fsm.Entry) *fsm.Decision {
	k := gr.decisionAt(e.Index)
	if k.entry == e && k.from == r.stateName && k.d.Made() {
		r.stateName = k.to
		return &k.d
	}
	k.entry, k.from, k.to = e, r.stateName, c.newStateName()
	k.d.Reset()
	r.stateName = k.to
	return &k.d
}

// decisionAt returns where gr keeps the decision for index i: the slot
// it shares with every keptDecisions-th index (a kept decision tells by
// its entry which index it is for).
func (gr *Group) decisionAt(i uint64) *decided {
	if gr.decided == nil {
		gr.decided = new([keptDecisions]decided)
	}
	return &gr.decided[i%keptDecisions]
}
