package nemesis

import (
	"fmt"
	"testing"
	"time"

	"shardsim/model/bugs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/group"
	"shardsim/simclock"
)

// zeros is a source that draws zero (the quiet choice), but one once *flip
// is set (and clears it): it lets a test choose the order of one instant's
// events.
type zeros struct{ flip *bool }

func (z zeros) Draw(n uint64) uint64 {
	if *z.flip && n > 1 {
		*z.flip = false
		return 1
	}
	return 0
}

func (z zeros) Fork(string) simclock.Source { return z }

// node is a cluster node that does nothing.
type node struct{}

func (node) Receive(*simclock.Context, any) {}

// bystander's one event (a message to itself at 100ms, when the nemesis
// ticks) is shared.
type bystander struct{}

func (bystander) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); ok {
		ctx.After(100*time.Millisecond, "x")
	}
}

// membershipDigest runs a tracked world of one three-voter group on four
// nodes, a nemesis whose only fault is GroupMembership at rate, and a
// bystander whose event is due with the nemesis's first tick; swap puts
// the bystander's event first. It returns the state digest after the tick.
func membershipDigest(t *testing.T, rate float64, swap bool) simclock.Digest {
	t.Helper()
	loop := simclock.NewLoop(nil, simclock.Budget{})
	loop.TrackStates(nil)
	flip := false
	loop.OrderBy(simclock.NewFromSource(zeros{&flip}))
	states := [][]*fsm.FSM{{fsm.New(0, bugs.None), fsm.New(0, bugs.None), fsm.New(0, bugs.None), nil}}
	cfg := group.Config{Nodes: 4, Groups: 1, ReplMin: time.Millisecond, ReplMax: 3 * time.Millisecond,
		ApplyMin: time.Millisecond, ApplyMax: 2 * time.Millisecond, ElectMin: time.Millisecond, ElectMax: 5 * time.Millisecond,
		LearnMax: 20 * time.Millisecond}
	cluster := group.New(loop, cfg, simclock.NewBytes(nil), states)
	for n := 0; n < 4; n++ {
		cluster.Attach(n, loop.Spawn(fmt.Sprintf("n%d", n), node{}, nil, nil))
	}
	cluster.ElectNow(0, 0)
	cluster.MarkReady(0, 1)
	loop.Spawn("bystander", bystander{}, nil, nil)
	root := simclock.NewFromSource(loop.TrackDraws(zeros{new(bool)}))
	loop.Spawn("nemesis", &Chaos{Faults: []Fault{GroupMembership{Cluster: cluster, Rate: rate}},
		Tick: 100 * time.Millisecond, HealAt: simclock.Time(10 * time.Second)}, nil, root.Fork("nemesis"))
	loop.RunUntil(simclock.Time(99 * time.Millisecond))
	flip = swap
	loop.RunUntil(simclock.Time(100 * time.Millisecond))
	flip = false
	if rate >= 1 && cluster.Stats().ConfigChanges == 0 {
		t.Fatal("the nemesis changed no membership: the test world is wrong")
	}
	return loop.StateDigest()
}

// A nemesis tick that strikes nothing is private, so it commutes with any
// other event; one that changes a group's membership is shared, even when
// its rate is 1 and it drew nothing but zeros (Chance(1) draws nothing),
// and so it does not commute with another shared event.
func TestGroupMembershipStrikeIsShared(t *testing.T) {
	if membershipDigest(t, 0, false) != membershipDigest(t, 0, true) {
		t.Fatal("a tick that strikes nothing should commute with the bystander's event")
	}
	if membershipDigest(t, 1, false) == membershipDigest(t, 1, true) {
		t.Fatal("a membership change stayed private: two orders of it and a shared event were merged")
	}
}
