package rpc

import (
	"time"

	"shardsim/simclock"
)

// Chaos is what the network does beyond a request's fate: a delivered
// request may arrive a second time, later (a retransmission the receiver
// cannot tell from a retry), so a receiver sees repeated, stale and
// out-of-order requests. Its answer goes nowhere. Only requests that say
// they may be retransmitted (Retransmittable: the migration's RPCs between
// groups, which their receivers must make idempotent) are duplicated;
// client writes carry no such promise.
type Chaos struct {
	Duplicate float64       // chance a delivered request is delivered again
	MaxDupLag time.Duration // how much later the copy arrives, at most
}

// SetChaos replaces the chaos (the heal phase clears it).
func (n *Network) SetChaos(c Chaos) { n.chaos = c }

// AttachNodes lets the network address nodes themselves (CallNode, Notify):
// nodeOf returns node i's actor.
func (n *Network) AttachNodes(nodeOf func(node int) simclock.ActorID) { n.nodeOf = nodeOf }

// nodeAddr is the pseudo group a node-addressed request travels under.
func nodeAddr(node int) int { return -1 - node }

// NodeOf returns which node a node-addressed Inbound was sent to, and
// whether it was node-addressed at all.
func (in Inbound) NodeOf() (int, bool) { return -1 - in.Group, in.Group < 0 }

// resolve finds the actor a request to group (or, negative, to a node)
// goes to.
func (n *Network) resolve(group int) (simclock.ActorID, bool) {
	if group < 0 {
		return n.nodeOf(-1 - group), true
	}
	return n.leaderOf(group)
}

// CallNode sends req to node itself (not to a group's leader) from inside
// task t: the all-voter barriers ask each voter's node. Same fates as Call.
func (n *Network) CallNode(t *simclock.Task, node int, req any) (any, error) {
	n.stats.NodeCalls++
	return n.Call(t, nodeAddr(node), req)
}

// Retransmittable marks a request the network may deliver twice.
type Retransmittable interface{ Retransmittable() }

// duplicate maybe delivers a copy of a delivered request later.
func (n *Network) duplicate(to simclock.ActorID, in *Inbound, lat time.Duration) {
	if n.chaos.Duplicate <= 0 {
		return // without asking the request (an assertion to an interface costs a lookup)
	}
	if _, ok := in.Req.(Retransmittable); !ok || !n.choices.Chance(n.chaos.Duplicate) {
		return
	}
	n.stats.Duplicated++
	dup := &Inbound{Group: in.Group, Req: in.Req, From: in.From, Dup: true}
	n.loop.Send(to, dup, lat+n.choices.Duration(0, n.chaos.MaxDupLag))
}

// Notify sends a one-way message to node after a drawn latency; it is lost
// at the network's request-loss rate (heartbeats).
func (n *Network) Notify(node int, msg any) {
	n.stats.Notices++
	if n.choices.Chance(n.faults.LoseRequest) {
		n.stats.LostNotices++
		return
	}
	n.loop.Send(n.nodeOf(node), msg, n.latency())
}
