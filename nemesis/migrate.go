package nemesis

import (
	"time"

	"shardsim/model/migrate/group"
	"shardsim/simclock"
)

// The migration worlds' fault kinds. They strike through the same Chaos
// mechanism as every world's; only the choice of victim is theirs: a
// group's leadership, a group's membership, and nodes of a cluster of which
// at most one is down at a time, so that every group keeps its quorum.

// GroupLeaderMoves moves one group's leadership, preferring a drawn node.
type GroupLeaderMoves struct {
	Cluster *group.Cluster
	Rate    float64
}

// Strike implements Fault.
func (f GroupLeaderMoves) Strike(k *Chaos, ctx *simclock.Context) {
	c := ctx.Choices()
	if !c.Chance(f.Rate) {
		return
	}
	ctx.Loop().Shared()
	g := c.Intn(f.Cluster.Groups())
	prefer := c.Intn(f.Cluster.Nodes())
	k.stats.GroupLeaderMoves++
	ctx.Rec("nemesis.leader").Uint("group", uint64(g)).Uint("prefer_node", uint64(prefer)).End()
	f.Cluster.Depose(g, prefer, f.Cluster.ElectionWindow())
}

// NodeOutages crashes or pauses one node while no other is down. Nodes
// are the first targets of the nemesis, in node order, and carry the
// cluster's Down and Up notifications (NodeTargets builds them).
type NodeOutages struct {
	Nodes            int
	CrashRate, Pause float64
	MaxDown          time.Duration
}

// Strike implements Fault.
func (f NodeOutages) Strike(k *Chaos, ctx *simclock.Context) {
	c := ctx.Choices()
	if len(k.crashed)+len(k.paused) > 0 {
		return
	}
	switch {
	case c.Chance(f.CrashRate):
		k.Crash(ctx, k.Targets[c.Intn(f.Nodes)], f.MaxDown)
	case c.Chance(f.Pause):
		t := k.Targets[c.Intn(f.Nodes)]
		k.Pause(ctx, t, k.Window(ctx, f.MaxDown))
	}
}

// NodeTargets returns the cluster's nodes as nemesis targets: a crashed
// node restarts as fresh(n), and the cluster hears of every outage.
func NodeTargets(cluster *group.Cluster, fresh func(n int) simclock.Actor) []Target {
	out := make([]Target, cluster.Nodes())
	for n := range out {
		n := n
		out[n] = Target{
			ID:    cluster.Actor(n),
			Fresh: func() simclock.Actor { return fresh(n) },
			Down:  func(crashed bool) { cluster.NodeDown(n, crashed) },
			Up:    func() { cluster.NodeUp(n) },
		}
	}
	return out
}

// GroupMembership changes one group's voter set by one server: a node joins
// a group of three voters (from a snapshot of the leader's state), or one
// voter of a group of four, maybe its leader, leaves. Half the time a node
// that joined is then handed the leadership, as a rebalancer moving a
// replica and its lease does: the new leader may sit on a node whose
// catalog view is older than the one its group was last changed under.
type GroupMembership struct {
	Cluster *group.Cluster
	Rate    float64
}

// Strike implements Fault.
func (f GroupMembership) Strike(k *Chaos, ctx *simclock.Context) {
	c := ctx.Choices()
	if !c.Chance(f.Rate) {
		return
	}
	ctx.Loop().Shared()
	g := c.Intn(f.Cluster.Groups())
	voters := f.Cluster.Voters(g)
	add, remove := -1, -1
	if len(voters) <= 3 {
		var outside []int
		for n := 0; n < f.Cluster.Nodes(); n++ {
			if !f.Cluster.IsVoter(g, n) && f.Cluster.Up(n) {
				outside = append(outside, n)
			}
		}
		if len(outside) == 0 {
			return
		}
		add = simclock.Pick(c, outside)
	} else {
		remove = simclock.Pick(c, voters)
	}
	if err := f.Cluster.ChangeVoters(g, add, remove); err != nil {
		return
	}
	k.stats.MemberChanges++
	ctx.Rec("nemesis.member").Uint("group", uint64(g)).Int("add", int64(add)).Int("remove", int64(remove)).End()
	if add >= 0 && c.Chance(0.5) {
		k.stats.GroupLeaderMoves++
		ctx.Rec("nemesis.leader").Uint("group", uint64(g)).Uint("prefer_node", uint64(add)).End()
		f.Cluster.Depose(g, add, f.Cluster.ElectionWindow())
	}
}
