// Package group is the replication layer of the data plane: raft groups
// whose voters live on nodes. A group's leader appends entries to the log;
// an entry commits after a replication delay; every voter applies the
// committed log in order, at its own pace; leadership moves when the
// nemesis or a crash decides. The proposals a leader had not committed
// when it lost leadership survive or vanish (a prefix survives), so their
// clients cannot know: they are ambiguous.
//
// The cluster owns what is durable (each voter's applied state, the log)
// and what consensus agrees on (the commit index, the leader and its term).
// Everything leader-local (the clock, waiting clients, the migrator) lives
// in the node actors, which the cluster drives with messages: ApplyTick,
// BecameLeader, LostLeader.
package group

import (
	"fmt"
	"time"

	"shardsim/model/migrate/fsm"
	"shardsim/simclock"
)

// Config sets the cluster's shape and timing.
type Config struct {
	Nodes, Groups int

	ReplMin, ReplMax   time.Duration // proposal to commit
	ApplyMin, ApplyMax time.Duration // commit to a voter's apply, normally
	SlowApply          float64       // chance a voter's apply of a commit lags
	SlowApplyMax       time.Duration // how long a lagging apply may take
	ElectMin, ElectMax time.Duration // election window after a leader is lost
}

// ApplyTick tells a node to apply group's committed entries.
type ApplyTick struct{ Group int }

// BecameLeader tells a node it leads group from term on.
type BecameLeader struct {
	Group int
	Term  uint64
}

// LostLeader tells a node its leadership of group at term has ended.
type LostLeader struct {
	Group int
	Term  uint64
}

// Observer sees what the replication layer does; checkers use it.
// Observers must not change the world.
type Observer interface {
	// OnApply: node's voter of group applied e with result r; first says
	// no voter had applied this index before. f is the voter's state after.
	OnApply(group, node int, e fsm.Entry, r fsm.Result, first bool, f *fsm.FSM)
	// OnLeader: group's leadership changed (node -1: none) or the leader
	// became ready to serve.
	OnLeader(group, node int, term uint64, ready bool)
}

// Cluster is the set of groups over a set of nodes.
type Cluster struct {
	loop    *simclock.Loop
	choices *simclock.Choices
	cfg     Config
	groups  []*Group
	actors  []simclock.ActorID // node index -> actor
	up      []bool
	obs     []Observer
}

// Group is one raft group.
type Group struct {
	ID         int
	log        []fsm.Entry // entry i+1 at log[i]
	commit     uint64
	leader     int // node index, -1 during an election
	term       uint64
	ready      bool
	electGen   uint64
	lastCommit simclock.Time // commit time of the last proposal (commits are FIFO)
	voters     []*fsm.FSM    // by node
	ticking    []bool        // an ApplyTick is on its way to the node
	maxApplied uint64        // highest index any voter applied
}

// New returns a cluster whose group g's voters start from states[g][n].
// Nodes are attached later with Attach, once their actors exist.
func New(loop *simclock.Loop, cfg Config, choices *simclock.Choices, states [][]*fsm.FSM) *Cluster {
	c := &Cluster{loop: loop, choices: choices, cfg: cfg, up: make([]bool, cfg.Nodes), actors: make([]simclock.ActorID, cfg.Nodes)}
	for g := 0; g < cfg.Groups; g++ {
		c.groups = append(c.groups, &Group{ID: g, leader: -1, voters: states[g], ticking: make([]bool, cfg.Nodes)})
	}
	return c
}

// Attach records node n's actor and marks it up.
func (c *Cluster) Attach(n int, actor simclock.ActorID) {
	c.actors[n] = actor
	c.up[n] = true
}

// Observe adds an observer.
func (c *Cluster) Observe(o Observer) { c.obs = append(c.obs, o) }

// Config returns the configuration.
func (c *Cluster) Config() Config { return c.cfg }

// Groups returns the number of groups.
func (c *Cluster) Groups() int { return len(c.groups) }

// Nodes returns the number of nodes.
func (c *Cluster) Nodes() int { return len(c.actors) }

// Actor returns node n's actor.
func (c *Cluster) Actor(n int) simclock.ActorID { return c.actors[n] }

// Up reports whether node n runs.
func (c *Cluster) Up(n int) bool { return c.up[n] }

// Voter returns node n's applied state of group g.
func (c *Cluster) Voter(g, n int) *fsm.FSM { return c.groups[g].voters[n] }

// Leader returns group g's leader node and term, or -1.
func (c *Cluster) Leader(g int) (int, uint64) { return c.groups[g].leader, c.groups[g].term }

// Ready reports whether group g's leader serves requests.
func (c *Cluster) Ready(g int) bool { return c.groups[g].leader >= 0 && c.groups[g].ready }

// IsLeader reports whether node n leads group g at term.
func (c *Cluster) IsLeader(g, n int, term uint64) bool {
	gr := c.groups[g]
	return gr.leader == n && gr.term == term
}

// CommitIndex returns group g's commit index.
func (c *Cluster) CommitIndex(g int) uint64 { return c.groups[g].commit }

// LastIndex returns group g's last log index, committed or not.
func (c *Cluster) LastIndex(g int) uint64 { return uint64(len(c.groups[g].log)) }

// MaxApplied returns the highest index any voter of g applied.
func (c *Cluster) MaxApplied(g int) uint64 { return c.groups[g].maxApplied }

// MostApplied returns the voter of g that applied the most (lowest node on
// ties): its state holds every entry any voter applied.
func (c *Cluster) MostApplied(g int) *fsm.FSM {
	var best *fsm.FSM
	for _, v := range c.groups[g].voters {
		if best == nil || v.Applied > best.Applied {
			best = v
		}
	}
	return best
}

// Bootstrap appends committed entries to group g before the world starts
// (initial data) and applies them on every voter.
func (c *Cluster) Bootstrap(g int, entries []fsm.Entry) {
	gr := c.groups[g]
	for _, e := range entries {
		e.Index = uint64(len(gr.log) + 1)
		gr.log = append(gr.log, e)
		gr.commit = e.Index
		for n, v := range gr.voters {
			r := v.Apply(e)
			first := e.Index > gr.maxApplied
			if first {
				gr.maxApplied = e.Index
			}
			for _, o := range c.obs {
				o.OnApply(g, n, e, r, first, v)
			}
		}
	}
}

// Propose appends e to group g's log on behalf of leader n at term and
// schedules its commit. It returns the entry's index.
func (c *Cluster) Propose(g, n int, term uint64, e fsm.Entry) (uint64, error) {
	gr := c.groups[g]
	if gr.leader != n || gr.term != term {
		return 0, fmt.Errorf("group %d: node %d is not the leader at term %d", g, n, term)
	}
	e.Index, e.Term = uint64(len(gr.log)+1), term
	gr.log = append(gr.log, e)
	at := c.loop.Now().Add(c.choices.Duration(c.cfg.ReplMin, c.cfg.ReplMax))
	if at < gr.lastCommit {
		at = gr.lastCommit
	}
	gr.lastCommit = at
	idx := e.Index
	c.loop.At(at, func() {
		if gr.leader == n && gr.term == term && idx > gr.commit && idx <= uint64(len(gr.log)) {
			gr.commit = idx
			c.scheduleApply(gr)
		}
	})
	return idx, nil
}

// scheduleApply sends every running node without one an ApplyTick, after
// the voter's own apply lag.
func (c *Cluster) scheduleApply(gr *Group) {
	for n := range gr.voters {
		if !c.up[n] || gr.ticking[n] || gr.voters[n].Applied >= gr.commit {
			continue
		}
		lag := c.choices.Duration(c.cfg.ApplyMin, c.cfg.ApplyMax)
		if c.choices.Chance(c.cfg.SlowApply) {
			lag += c.choices.Duration(0, c.cfg.SlowApplyMax)
		}
		gr.ticking[n] = true
		c.loop.Send(c.actors[n], ApplyTick{Group: gr.ID}, lag)
	}
}

// Applied is one entry a voter applied, with its result.
type Applied struct {
	Entry  fsm.Entry
	Result fsm.Result
}

// ApplyCommitted applies group g's committed entries on node n's voter (the
// node calls it on an ApplyTick) and returns them.
func (c *Cluster) ApplyCommitted(g, n int) []Applied {
	gr := c.groups[g]
	gr.ticking[n] = false
	v := gr.voters[n]
	var out []Applied
	for v.Applied < gr.commit {
		e := gr.log[v.Applied]
		r := v.Apply(e)
		first := e.Index > gr.maxApplied
		if first {
			gr.maxApplied = e.Index
		}
		for _, o := range c.obs {
			o.OnApply(g, n, e, r, first, v)
		}
		out = append(out, Applied{Entry: e, Result: r})
	}
	return out
}

// MarkReady records that group g's leader at term caught up and serves.
func (c *Cluster) MarkReady(g int, term uint64) {
	gr := c.groups[g]
	if gr.term != term || gr.leader < 0 || gr.ready {
		return
	}
	gr.ready = true
	c.loop.Log("grp.ready", fmt.Sprintf("g%d", g), fmt.Sprintf("node=%d term=%d", gr.leader, term))
	for _, o := range c.obs {
		o.OnLeader(g, gr.leader, term, true)
	}
}

// Depose ends group g's current leadership and starts an election that
// prefers node prefer (-1: any running node) after window. The entries the
// old leader had not committed are resolved now: a prefix of them (drawn)
// survives and commits, the rest vanish.
func (c *Cluster) Depose(g, prefer int, window time.Duration) {
	gr := c.groups[g]
	old, oldTerm := gr.leader, gr.term
	if old >= 0 {
		tail := len(gr.log) - int(gr.commit)
		keep := 0
		if tail > 0 {
			keep = c.choices.Intn(tail + 1)
		}
		gr.log = gr.log[:int(gr.commit)+keep]
		if keep > 0 {
			gr.commit = uint64(len(gr.log))
			c.scheduleApply(gr)
		}
		gr.leader, gr.ready = -1, false
		c.loop.Log("grp.depose", fmt.Sprintf("g%d", g), fmt.Sprintf("node=%d term=%d kept=%d/%d", old, oldTerm, keep, tail))
		for _, o := range c.obs {
			o.OnLeader(g, -1, oldTerm, false)
		}
		if c.up[old] {
			c.loop.Send(c.actors[old], LostLeader{Group: g, Term: oldTerm}, 0)
		}
	}
	gr.electGen++
	gen := gr.electGen
	c.loop.After(window, func() { c.elect(gr, gen, prefer) })
}

// ElectionWindow draws an election window from the configuration.
func (c *Cluster) ElectionWindow() time.Duration {
	return c.choices.Duration(c.cfg.ElectMin, c.cfg.ElectMax)
}

func (c *Cluster) elect(gr *Group, gen uint64, prefer int) {
	if gr.electGen != gen || gr.leader >= 0 {
		return
	}
	var cands []int
	for n := range c.up {
		if c.up[n] && !c.loop.Paused(c.actors[n]) {
			cands = append(cands, n)
		}
	}
	if len(cands) == 0 {
		c.loop.After(c.cfg.ElectMax, func() { c.elect(gr, gen, prefer) })
		return
	}
	n := simclock.Pick(c.choices, cands)
	for _, x := range cands {
		if x == prefer {
			n = x
		}
	}
	c.crown(gr, n)
}

// ElectNow makes node n leader of group g at once (the initial layout).
func (c *Cluster) ElectNow(g, n int) {
	gr := c.groups[g]
	gr.electGen++
	c.crown(gr, n)
}

// crown starts node n's term as leader of gr.
func (c *Cluster) crown(gr *Group, n int) {
	gr.term++
	gr.leader, gr.ready = n, false
	c.loop.Log("grp.elect", fmt.Sprintf("g%d", gr.ID), fmt.Sprintf("node=%d term=%d", n, gr.term))
	for _, o := range c.obs {
		o.OnLeader(gr.ID, n, gr.term, false)
	}
	c.loop.Send(c.actors[n], BecameLeader{Group: gr.ID, Term: gr.term}, 0)
}

// NodeDown records that node n stopped (crashed or paused): every group it
// led elects another leader.
func (c *Cluster) NodeDown(n int, crashed bool) {
	if crashed {
		c.up[n] = false
	}
	for g, gr := range c.groups {
		if gr.leader == n {
			c.Depose(g, -1, c.ElectionWindow())
		}
	}
}

// NodeUp records that node n runs again and catches its voters up.
func (c *Cluster) NodeUp(n int) {
	c.up[n] = true
	for _, gr := range c.groups {
		gr.ticking[n] = false
		c.scheduleApply(gr)
	}
}

// Leaderless returns the groups without a leader (heal checks).
func (c *Cluster) Leaderless() []int {
	var out []int
	for g, gr := range c.groups {
		if gr.leader < 0 {
			out = append(out, g)
		}
	}
	return out
}
