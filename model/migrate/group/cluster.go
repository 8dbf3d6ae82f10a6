// Package group is the replication layer of the data plane: raft groups
// whose voters live on nodes, simulated centrally but by raft's rules.
//
// Every voter (replica) has its own log, its own applied state machine, the
// highest term it has seen and the commit index it has learned. A leader
// appends to its own log; each follower receives the leader's new entries
// after its own replication delay, truncating any conflicting suffix (log
// matching); an entry commits once a quorum of the leader's configuration
// holds it and it belongs to the leader's term (raft 5.4.2), and followers
// learn the commit index with the next append. Each voter applies its
// learned-committed prefix in order at its own pace, so a voter, and a new
// leader, may lag far behind the commit index.
//
// Elections follow raft 5.4.1: a candidate wins only with votes from a
// majority of its configuration whose logs are not more up-to-date than its
// own, so every committed entry survives any election. Membership changes
// add or remove one voter at a time through configuration entries that take
// effect as soon as a replica appends them; a joining voter starts from a
// snapshot of the leader's applied state.
//
// Leadership as the cluster knows it (Leader, IsLeader) is the truth; a node
// learns it lost leadership only when a LostLeader notice reaches it, after
// a drawn delay (or later, if it is paused). Until then it may keep acting:
// its proposals land only in its own log and are later truncated. That is
// how deposed and paused leaders are modelled.
//
// Everything leader-local (the clock, waiting clients, the migrator) lives
// in the node actors, which the cluster drives with messages: ApplyTick,
// BecameLeader, LostLeader.
package group

import (
	"slices"
	"strconv"
	"time"

	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/internal/slab"
	"shardsim/simclock"
)

// Config sets the cluster's shape and timing.
type Config struct {
	Nodes, Groups int

	ReplMin, ReplMax   time.Duration // one append (or its answer) between leader and a follower
	ApplyMin, ApplyMax time.Duration // learned commit to a voter's apply, normally
	SlowApply          float64       // chance a voter's apply of a commit lags
	SlowApplyMax       time.Duration // how long a lagging apply may take
	ElectMin, ElectMax time.Duration // election window after a leader is lost
	LearnMax           time.Duration // how long a deposed leader may take to learn it (0: ReplMax)
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
	// no voter had applied this index before. f is the voter's state after,
	// except during Cluster.Bootstrap: there f is the group's first voter's
	// state for every node, and the other voters receive it only after the
	// last entry (until then their own state lags behind).
	OnApply(group, node int, e fsm.Entry, r fsm.Result, first bool, f *fsm.FSM)
	// OnLeader: group's leadership changed (node -1: none) or the leader
	// became ready to serve.
	OnLeader(group, node int, term uint64, ready bool)
}

// Stats counts what the replication layer did.
type Stats struct {
	Elections          int // leaders crowned after the start
	ApplyLaggingLeader int // ... of which had not applied everything committed
	StaleAppends       int // appends a deposed leader sent that a newer term refused
	Truncations        int // conflicting log suffixes dropped
	Snapshots          int // replicas that (re)started from a snapshot
	ConfigChanges      int // membership changes appended
	FailedElections    int // election rounds in which no candidate won
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
	stats   Stats
	viewOf  func(node int) uint64
	// entries is where proposed entries live: every proposal becomes one
	// entry that the logs (and appends on their way) share, stored once
	// and never overwritten (entries never change once proposed).
	entries slab.Slab[fsm.Entry]
	// stateNames is the last state name handed out (newStateName).
	stateNames uint64
}

// SetViewOf tells the cluster how to read a node's catalog view version: a
// membership change records the leader's as the view every later leader of
// the group must have caught up with (a joining voter may not judge
// requests by an older view than the one that admitted it).
func (c *Cluster) SetViewOf(f func(node int) uint64) { c.viewOf = f }

// Group is one raft group.
type Group struct {
	ID         int
	name       string     // "g<ID>", the actor of the group's trace records
	reps       []*replica // by node; nil where the node never hosted a voter
	term       uint64     // highest term of any election
	leader     int        // node leading at term, -1 during an election
	ready      bool
	ls         *leaderState
	electGen   uint64
	commit     uint64 // highest index known committed
	maxApplied uint64 // highest index any voter applied
	// decided holds the decisions of the last indexes applied, the one
	// for index i in slot i%keptDecisions (see Cluster.decisionFor); nil until
	// the first apply.
	decided *[keptDecisions]decided
}

// keptDecisions is how many of the last indexes' decisions a group keeps
// for its other voters. A voter that lags further decides on its own (so
// the group holds a few decisions, not one per entry of a run), which
// followers seldom do: they apply within a few entries of the first.
const keptDecisions = 16

// decided is a decision made by applying entry to the state named from,
// which made the state named to.
type decided struct {
	entry    *fsm.Entry
	from, to uint64
	d        fsm.Decision
}

// leaderState is what the cluster tracks for the current leader: how far
// each follower's log matches, and what it was last told.
type leaderState struct {
	node int
	term uint64
	to   []follower // by node
}

// follower is what a leader tracks of one follower.
type follower struct {
	match      uint64 // how far its log matches the leader's
	sentCommit uint64 // the commit index last sent
	inflight   bool   // an append is on its way
	// append is the one append to the follower that can be on its way
	// (inflight): reused from one append to the next.
	append *appendMsg
}

// New returns a cluster whose group g's voters start from states[g][n]
// (nil: node n hosts no voter of g). Nodes are attached later with Attach,
// once their actors exist.
func New(loop *simclock.Loop, cfg Config, choices *simclock.Choices, states [][]*fsm.FSM) *Cluster {
	c := &Cluster{loop: loop, choices: choices, cfg: cfg, up: make([]bool, cfg.Nodes), actors: make([]simclock.ActorID, cfg.Nodes)}
	// The initial replicas, their first configurations and their logs'
	// room are carved from one array each (a full slice per replica, so
	// that an append reallocates rather than running into the next one's);
	// a group's replicas share its voter list, which nothing changes.
	total := 0
	for g := 0; g < cfg.Groups; g++ {
		for _, f := range states[g] {
			if f != nil {
				total++
			}
		}
	}
	reps, cfgs, logs := make([]replica, 0, total), make([]cfgAt, 0, total), make([]*fsm.Entry, total*logRoom)
	for g := 0; g < cfg.Groups; g++ {
		gr := &Group{ID: g, name: "g" + strconv.Itoa(g), leader: -1, reps: make([]*replica, cfg.Nodes)}
		var voters []int
		for n, f := range states[g] {
			if f != nil {
				voters = append(voters, n)
			}
		}
		voters = slices.Clip(voters)
		var pristine uint64 // the name of the voters' pristine states (see startStateName)
		for _, n := range voters {
			cfgs = append(cfgs, cfgAt{voters: voters})
			log := logs[:0:logRoom]
			logs = logs[logRoom:]
			name := c.startStateName(states[g][n], states[g][voters[0]], &pristine)
			reps = append(reps, replica{node: n, fsm: states[g][n], cfgs: cfgs[len(cfgs)-1 : len(cfgs) : len(cfgs)], log: log, stateName: name})
			gr.reps[n] = &reps[len(reps)-1]
		}
		c.groups = append(c.groups, gr)
	}
	return c
}

// startStateName names the state a voter of a group starts from: voters whose
// states are pristine and built alike with the group's first voter's
// (first) are equal and share a name, *pristine, made on first use; any
// other gets a name of its own.
func (c *Cluster) startStateName(f, first *fsm.FSM, pristine *uint64) uint64 {
	if !f.Pristine() || !first.Pristine() || !f.BuiltAlike(first) {
		return c.newStateName()
	}
	if *pristine == 0 {
		*pristine = c.newStateName()
	}
	return *pristine
}

// logRoom is the room for entries a voter's log starts with: a group's
// log grows to dozens of entries in a run, and one grown from empty by
// doubling is reallocated at 1, 2, 4, ... 32 entries on the way.
const logRoom = 64

// Attach records node n's actor and marks it up.
func (c *Cluster) Attach(n int, actor simclock.ActorID) {
	c.actors[n] = actor
	c.up[n] = true
}

// Observe adds an observer.
func (c *Cluster) Observe(o Observer) { c.obs = append(c.obs, o) }

// Config returns the configuration.
func (c *Cluster) Config() Config { return c.cfg }

// Stats returns the counters.
func (c *Cluster) Stats() Stats { return c.stats }

// Groups returns the number of groups.
func (c *Cluster) Groups() int { return len(c.groups) }

// Nodes returns the number of nodes.
func (c *Cluster) Nodes() int { return len(c.actors) }

// Actor returns node n's actor.
func (c *Cluster) Actor(n int) simclock.ActorID { return c.actors[n] }

// Up reports whether node n runs.
func (c *Cluster) Up(n int) bool { return c.up[n] }

// receptive reports whether node n takes part right now (up, not paused).
func (c *Cluster) receptive(n int) bool { return c.up[n] && !c.loop.Paused(c.actors[n]) }

// Voter returns node n's applied state of group g, or nil when n hosts no
// replica of g (a removed voter keeps its last state). It is for reading:
// only the cluster changes a voter's state (it knows which of its voters'
// states are equal, see replica.stateName).
func (c *Cluster) Voter(g, n int) *fsm.FSM {
	if r := c.groups[g].reps[n]; r != nil {
		return r.fsm
	}
	return nil
}

// Voters returns group g's current voter set: the leader's configuration,
// or during an election the configuration of the most up-to-date replica.
// The slice is a copy.
func (c *Cluster) Voters(g int) []int { return slices.Clone(c.config(c.groups[g])) }

func (c *Cluster) config(gr *Group) []int {
	if gr.leader >= 0 {
		return gr.reps[gr.leader].config()
	}
	var best *replica
	for _, r := range gr.reps {
		if r != nil && (best == nil || r.lastTerm() > best.lastTerm() || r.lastTerm() == best.lastTerm() && r.last() > best.last()) {
			best = r
		}
	}
	return best.config()
}

// ConfigOf returns the voter set in node n's replica of g (what n, as a
// leader, believes the group's voters are); nil if n hosts none.
func (c *Cluster) ConfigOf(g, n int) []int {
	if r := c.groups[g].reps[n]; r != nil {
		return slices.Clone(r.config())
	}
	return nil
}

// IsVoter reports whether node n is in group g's current voter set.
func (c *Cluster) IsVoter(g, n int) bool { return contains(c.config(c.groups[g]), n) }

// Leader returns group g's leader node and term, or -1.
func (c *Cluster) Leader(g int) (int, uint64) { return c.groups[g].leader, c.groups[g].term }

// Ready reports whether group g's leader serves requests.
func (c *Cluster) Ready(g int) bool { return c.groups[g].leader >= 0 && c.groups[g].ready }

// IsLeader reports whether node n leads group g at term.
func (c *Cluster) IsLeader(g, n int, term uint64) bool {
	gr := c.groups[g]
	return gr.leader == n && gr.term == term
}

// CommitIndex returns the commit index node n's replica of g has learned
// (0 if it hosts none).
func (c *Cluster) CommitIndex(g, n int) uint64 {
	if r := c.groups[g].reps[n]; r != nil {
		return r.commit
	}
	return 0
}

// LastIndex returns the last index of node n's log of g.
func (c *Cluster) LastIndex(g, n int) uint64 {
	if r := c.groups[g].reps[n]; r != nil {
		return r.last()
	}
	return 0
}

// Committed returns the highest index known committed in group g.
func (c *Cluster) Committed(g int) uint64 { return c.groups[g].commit }

// MaxApplied returns the highest index any voter of g applied.
func (c *Cluster) MaxApplied(g int) uint64 { return c.groups[g].maxApplied }

// MostApplied returns the replica of g that applied the most (lowest node
// on ties): its state holds every entry any voter applied.
func (c *Cluster) MostApplied(g int) *fsm.FSM {
	var best *fsm.FSM
	for _, r := range c.groups[g].reps {
		if r != nil && (best == nil || r.fsm.Applied > best.Applied) {
			best = r.fsm
		}
	}
	return best
}

// Bootstrap appends committed entries to group g before the world starts
// (initial data) and applies them on every voter. The logs keep the
// entries where they are (Bootstrap numbers them): the caller hands the
// array over and must not change it afterwards.
//
// Only the group's first voter (lowest node) runs the entries through its
// state machine; the other voters, starting from the same empty state,
// would reach the same state, and copy it once every entry is in (a
// world's bootstrap loads dozens of writes into three voters per group;
// applying each three times was most of its cost; so the voters must be
// built alike, see FSM, and it panics if not). Observers see every
// voter's apply of every entry, in the order they always did, with the
// result and the state after it: the first voter's (for every node), equal
// to what the voter reported would hold at that point.
func (c *Cluster) Bootstrap(g int, entries []fsm.Entry) {
	gr := c.groups[g]
	var applier *replica
	for _, r := range gr.reps {
		if r != nil {
			r.log = slices.Grow(r.log, len(entries))
			if applier == nil {
				applier = r
			}
		}
	}
	if applier == nil {
		return
	}
	for _, r := range gr.reps {
		if r != nil && r.fsm.Applied != applier.fsm.Applied {
			panic("group: bootstrap of group " + gr.name + " whose voters applied different prefixes")
		}
		if r != nil && !r.fsm.BuiltAlike(applier.fsm) {
			panic("group: bootstrap of group " + gr.name + " whose voters were built with different groups or bugs (it copies the first voter's whole state over the others)")
		}
	}
	for i := range entries {
		ep := &entries[i]
		ep.Index = gr.commit + 1
		gr.commit = ep.Index
		e := *ep
		var res fsm.Result
		for n, r := range gr.reps {
			if r == nil {
				continue
			}
			r.append(ep)
			r.commit = e.Index
			if r == applier {
				res = r.fsm.ApplyEntry(ep)
			}
			first := e.Index > gr.maxApplied
			if first {
				gr.maxApplied = e.Index
			}
			for _, o := range c.obs {
				o.OnApply(g, n, e, res, first, applier.fsm)
			}
		}
	}
	if len(entries) == 0 {
		return
	}
	name := c.newStateName() // the voters' states are equal from here on
	for _, r := range gr.reps {
		if r != nil && r != applier {
			*r.fsm = *applier.fsm.Clone() // in place: whoever holds the voter's state sees the copy
		}
		if r != nil {
			r.stateName = name
		}
	}
}

// newStateName returns a name no applied state of the cluster had (see
// replica.stateName). A state gets a new name whenever it changes, except
// when it applies an entry by the decision a state of the same name made
// (the two are equal before and after) and when it is copied whole (the
// copy keeps the name).
func (c *Cluster) newStateName() uint64 {
	c.stateNames++
	return c.stateNames
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

// ConfirmLeader reports whether node n still leads g at term: what a read
// index round (a heartbeat answered by a quorum) establishes. A node that
// finds out otherwise is told at once.
func (c *Cluster) ConfirmLeader(g, n int, term uint64) bool {
	if c.IsLeader(g, n, term) {
		return true
	}
	c.notifyLost(n, g, term, 0)
	return false
}

// notifyLost tells node n, after d, that its leadership of g at term ended.
func (c *Cluster) notifyLost(n, g int, term uint64, d time.Duration) {
	if c.up[n] {
		c.loop.Send(c.actors[n], LostLeader{Group: g, Term: term}, d)
	}
}

func (c *Cluster) replDelay() time.Duration { return c.choices.Duration(c.cfg.ReplMin, c.cfg.ReplMax) }

func (c *Cluster) learnDelay() time.Duration {
	hi := c.cfg.LearnMax
	if hi <= 0 {
		hi = c.cfg.ReplMax
	}
	return c.choices.Duration(c.cfg.ReplMin, hi)
}

// log records kind about group g with text as its free-text detail (one
// Text token, as Loop.Log writes it), text built by the caller in a stack
// buffer: a line costs no formatting and no string.
func (c *Cluster) log(kind string, g int, text []byte) {
	c.loop.Rec(kind, c.groups[g].name).TextBytes(text).End()
}

// appendNodeTerm appends "node=<node> term=<term>", how a leadership
// change's record starts.
func appendNodeTerm(b []byte, node int, term uint64) []byte {
	b = strconv.AppendInt(append(b, "node="...), int64(node), 10)
	return strconv.AppendUint(append(b, " term="...), term, 10)
}
