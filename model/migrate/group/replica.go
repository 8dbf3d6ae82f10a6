package group

import (
	"slices"

	"shardsim/model/migrate/fsm"
)

// replica is one node's copy of a group: its log, the state machine it
// applied from the log, the highest term it has seen and the commit index it
// has learned. A replica that joined through a snapshot keeps its log from
// the snapshot's index on (base). Everything here is durable: a crash loses
// none of it.
type replica struct {
	node     int
	fsm      *fsm.FSM
	base     uint64       // index of the snapshot the log starts after
	baseTerm uint64       // term of that index
	log      []*fsm.Entry // entries base+1, base+2, ... (shared with other replicas' logs: never changed)
	term     uint64       // highest term this replica has seen
	commit   uint64       // commit index this replica has learned
	ticking  bool         // an ApplyTick is on its way to the node
	cfgs     []cfgAt      // the configurations in its log, oldest first (the first is the base's)
	// stateName names the replica's applied state: replicas of a group
	// with the same name hold equal states (see Cluster.newStateName), so
	// one may apply an entry by the decision the other made (see
	// fsm.Decision).
	stateName uint64
}

// cfgAt is a configuration (the voter set) taking effect at an index.
type cfgAt struct {
	index  uint64
	voters []int
}

func (r *replica) last() uint64 { return r.base + uint64(len(r.log)) }

func (r *replica) lastTerm() uint64 { return r.termAt(r.last()) }

// termAt returns the term of the entry at i (the base's term at the base;
// 0 below it or past the end).
func (r *replica) termAt(i uint64) uint64 {
	switch {
	case i == r.base:
		return r.baseTerm
	case i < r.base || i > r.last():
		return 0
	}
	return r.log[i-r.base-1].Term
}

// entry returns the entry at i, which must lie in (base, last].
func (r *replica) entry(i uint64) *fsm.Entry { return r.log[i-r.base-1] }

// config returns the replica's current voter set: the latest configuration
// in its log, effective as soon as appended (single-server changes).
func (r *replica) config() []int { return r.cfgs[len(r.cfgs)-1].voters }

// append adds e at the end of the log. Replicas share entries: an entry is
// never changed once proposed.
func (r *replica) append(e *fsm.Entry) {
	r.log = append(r.log, e)
	if e.Kind == fsm.KindConfig {
		r.cfgs = append(r.cfgs, cfgAt{index: e.Index, voters: slices.Clone(e.Config.Voters)})
	}
}

// truncate drops every entry after index i (i >= base): a conflicting
// suffix from a deposed leader's term. Committed entries are never dropped
// (raft's log matching and leader completeness guarantee it; the tests
// check it).
func (r *replica) truncate(i uint64) {
	if i >= r.last() {
		return
	}
	r.log = r.log[: i-r.base : i-r.base] // a fresh backing array for what follows
	for len(r.cfgs) > 1 && r.cfgs[len(r.cfgs)-1].index > i {
		r.cfgs = r.cfgs[:len(r.cfgs)-1]
	}
}

// upToDate reports whether a candidate with (lastTerm, last) is at least
// as up-to-date as r (raft 5.4.1).
func (r *replica) upToDate(lastTerm, last uint64) bool {
	if lastTerm != r.lastTerm() {
		return lastTerm > r.lastTerm()
	}
	return last >= r.last()
}

// matchLen returns the longest prefix of indexes on which r and o agree
// (same term at the same index): what raft's probing of a follower finds.
func matchLen(r, o *replica) uint64 {
	hi := min(r.last(), o.last())
	lo := max(r.base, o.base)
	for i := hi; i >= lo && i <= hi; i-- {
		if r.termAt(i) == o.termAt(i) {
			return i
		}
		if i == 0 {
			break
		}
	}
	return 0
}

// contains reports whether n is in voters.
func contains(voters []int, n int) bool { return slices.Contains(voters, n) }
