package group

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"shardsim/model/migrate/fsm"
	"shardsim/simclock"
)

// MarkReady records that group g's leader at term caught up and serves.
func (c *Cluster) MarkReady(g int, term uint64) {
	gr := c.groups[g]
	if gr.term != term || gr.leader < 0 || gr.ready {
		return
	}
	gr.ready = true
	var line [64]byte
	c.log("grp.ready", g, appendNodeTerm(line[:0], gr.leader, term))
	for _, o := range c.obs {
		o.OnLeader(g, gr.leader, term, true)
	}
}

// Depose cuts group g's leader off (as a partition or a long pause would):
// the others elect a new leader, preferring node prefer (-1: any), after
// window. The old leader learns it only after a drawn delay and meanwhile
// keeps acting; whatever it had not replicated to a quorum is lost or
// survives as raft decides.
func (c *Cluster) Depose(g, prefer int, window time.Duration) {
	gr := c.groups[g]
	if gr.leader >= 0 {
		c.loseLeader(gr, c.learnDelay())
	}
	c.scheduleElection(gr, prefer, window)
}

// loseLeader ends gr's current leadership; the old leader is told after d.
func (c *Cluster) loseLeader(gr *Group, d time.Duration) {
	old, term := gr.leader, gr.term
	gr.leader, gr.ready, gr.ls = -1, false, nil
	var line [64]byte
	c.log("grp.depose", gr.ID, appendNodeTerm(line[:0], old, term))
	for _, o := range c.obs {
		o.OnLeader(gr.ID, -1, term, false)
	}
	c.notifyLost(old, gr.ID, term, d)
	c.scheduleElection(gr, -1, c.ElectionWindow())
}

func (c *Cluster) scheduleElection(gr *Group, prefer int, window time.Duration) {
	gr.electGen++
	gen := gr.electGen
	c.loop.After(window, func() { c.elect(gr, gen, prefer) })
}

// ElectionWindow draws an election window from the configuration.
func (c *Cluster) ElectionWindow() time.Duration {
	return c.choices.Duration(c.cfg.ElectMin, c.cfg.ElectMax)
}

// elect runs one election round: candidates (replicas that take part and
// are voters in their own configuration) stand in a drawn order, prefer
// first; the first to collect votes from a majority of its configuration
// whose logs are not more up-to-date than its own wins. If none wins, the
// round is repeated later.
func (c *Cluster) elect(gr *Group, gen uint64, prefer int) {
	if gr.electGen != gen || gr.leader >= 0 {
		return
	}
	var cands []int
	for n, r := range gr.reps {
		if r != nil && c.receptive(n) && contains(r.config(), n) {
			cands = append(cands, n)
		}
	}
	simclock.Shuffle(c.choices, cands)
	if i := slices.Index(cands, prefer); i > 0 {
		cands[0], cands[i] = cands[i], cands[0]
	}
	term := gr.term + 1
	for _, n := range cands {
		r := gr.reps[n]
		var voted []int
		for _, v := range r.config() {
			rv := gr.reps[v]
			if rv != nil && c.receptive(v) && rv.term < term && rv.upToDate(r.lastTerm(), r.last()) {
				voted = append(voted, v)
			}
		}
		if len(voted)*2 > len(r.config()) {
			c.crown(gr, n, term, voted, true)
			return
		}
	}
	c.stats.FailedElections++
	c.scheduleElection(gr, prefer, c.cfg.ElectMax)
}

// ElectNow makes node n leader of group g at once (the initial layout).
func (c *Cluster) ElectNow(g, n int) {
	gr := c.groups[g]
	gr.electGen++
	c.crown(gr, n, gr.term+1, gr.reps[n].config(), false)
}

// crown starts node n's term as leader of gr, elected by voters.
func (c *Cluster) crown(gr *Group, n int, term uint64, voters []int, counted bool) {
	gr.term = term
	for _, v := range voters {
		gr.reps[v].term = term
	}
	gr.leader, gr.ready = n, false
	L := gr.reps[n]
	ls := &leaderState{node: n, term: term, to: make([]follower, len(gr.reps))}
	for f, r := range gr.reps {
		if r != nil && f != n {
			ls.to[f].match = matchLen(L, r)
		}
	}
	ls.to[n].match = L.last()
	gr.ls = ls
	lagging := L.fsm.Applied < gr.commit
	if counted {
		c.stats.Elections++
		if lagging {
			c.stats.ApplyLaggingLeader++
		}
	}
	var line [128]byte
	b := appendNodeTerm(line[:0], n, term)
	b = strconv.AppendUint(append(b, " applied="...), L.fsm.Applied, 10)
	c.log("grp.elect", gr.ID, strconv.AppendUint(append(b, " commit="...), gr.commit, 10))
	for _, o := range c.obs {
		o.OnLeader(gr.ID, n, term, false)
	}
	c.loop.Send(c.actors[n], BecameLeader{Group: gr.ID, Term: term}, 0)
	c.sendAll(gr)
}

// NodeDown records that node n stopped (crashed or paused): every group it
// led elects another leader. A paused leader is told when it resumes.
func (c *Cluster) NodeDown(n int, crashed bool) {
	if crashed {
		c.up[n] = false
	}
	for _, gr := range c.groups {
		if gr.leader == n {
			c.loseLeader(gr, c.learnDelay())
		}
	}
}

// NodeUp records that node n runs again: its replicas catch up (apply what
// they learned, and receive what their leaders have).
func (c *Cluster) NodeUp(n int) {
	c.up[n] = true
	for _, gr := range c.groups {
		r := gr.reps[n]
		if r == nil {
			continue
		}
		r.ticking = false
		c.scheduleApply(gr, r)
		if gr.ls != nil {
			gr.ls.to[n].inflight = false
			c.sendTo(gr, n)
		}
	}
}

// ErrChangePending refuses a membership change while the previous one is
// not committed (one server at a time).
var ErrChangePending = errors.New("group: a membership change is pending")

// ChangeVoters changes group g's voter set by one server through its
// leader: node add joins (-1: none; it starts from a snapshot of the
// leader's applied state) or node remove leaves (-1: none). The change
// takes effect on each replica as soon as it appends the entry.
func (c *Cluster) ChangeVoters(g, add, remove int) error {
	gr := c.groups[g]
	if gr.leader < 0 || !gr.ready {
		return fmt.Errorf("group %d has no serving leader", g)
	}
	L := gr.reps[gr.leader]
	if L.cfgs[len(L.cfgs)-1].index > L.commit {
		return ErrChangePending
	}
	cfg := slices.Clone(L.config())
	switch {
	case add >= 0 && remove < 0 && !contains(cfg, add):
		cfg = append(cfg, add)
		slices.Sort(cfg)
		snap := snapshotOf(L)
		snap.term = gr.term
		gr.reps[add] = snap.install(add, gr.reps[add])
		c.stats.Snapshots++
		if gr.ls != nil {
			gr.ls.to[add].match = snap.base
			gr.ls.to[add].sentCommit, gr.ls.to[add].inflight = 0, false
		}
	case remove >= 0 && add < 0 && contains(cfg, remove):
		cfg = slices.DeleteFunc(cfg, func(v int) bool { return v == remove })
	default:
		return fmt.Errorf("group %d: bad membership change +%d -%d of %v", g, add, remove, cfg)
	}
	c.stats.ConfigChanges++
	var view uint64
	if c.viewOf != nil {
		view = c.viewOf(gr.leader)
	}
	var line [128]byte
	c.log("grp.config", g, appendConfigLine(line[:0], add, remove, cfg, view))
	_, err := c.Propose(g, gr.leader, gr.term, fsm.Entry{Kind: fsm.KindConfig, Config: &fsm.ConfigChange{Voters: cfg, MinView: view}})
	return err
}

// appendConfigLine appends the text of a grp.config record:
// "+<add> -<remove> -> [<voters>] minview=v<view>", the voters separated
// by spaces (as fmt's %v prints a slice).
func appendConfigLine(b []byte, add, remove int, voters []int, view uint64) []byte {
	b = strconv.AppendInt(append(b, '+'), int64(add), 10)
	b = strconv.AppendInt(append(b, " -"...), int64(remove), 10)
	b = append(b, " -> ["...)
	for i, v := range voters {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendUint(append(b, "] minview=v"...), view, 10)
}

// snapshot is a replica's applied state, ready to start another replica.
type snapshot struct {
	fsm            *fsm.FSM
	base, baseTerm uint64
	cfg            []int
	term           uint64
	stateName      uint64 // the name of the state taken (see replica.stateName)
}

// snapshotOf takes r's applied state as a snapshot.
func snapshotOf(r *replica) snapshot {
	base := r.fsm.Applied
	cfg := r.cfgs[0].voters
	for _, ca := range r.cfgs {
		if ca.index <= base {
			cfg = ca.voters
		}
	}
	// The copy holds what r's state holds, so it keeps r's state's name.
	return snapshot{fsm: r.fsm.Clone(), base: base, baseTerm: r.termAt(base), cfg: slices.Clone(cfg), stateName: r.stateName}
}

// install returns node n's replica started from s (replacing old, if any:
// its state and log are discarded, as raft's InstallSnapshot does when the
// log does not cover the snapshot).
func (s snapshot) install(n int, old *replica) *replica {
	r := &replica{node: n, fsm: s.fsm, base: s.base, baseTerm: s.baseTerm, term: s.term, commit: s.base,
		cfgs: []cfgAt{{index: s.base, voters: slices.Clone(s.cfg)}}, stateName: s.stateName}
	if old != nil && old.term > r.term {
		r.term = old.term
	}
	return r
}
