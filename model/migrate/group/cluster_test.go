package group

import (
	"testing"
	"time"

	"shardsim/model/bugs"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/fsm"
	"shardsim/simclock"
)

// stubNode applies on every tick and records leadership messages.
type stubNode struct {
	c    *Cluster
	n    int
	msgs *[]string
}

func (s *stubNode) Receive(ctx *simclock.Context, msg any) {
	switch m := msg.(type) {
	case ApplyTick:
		s.c.ApplyCommitted(m.Group, s.n)
	case BecameLeader:
		*s.msgs = append(*s.msgs, "leader")
	case LostLeader:
		*s.msgs = append(*s.msgs, "lost")
	}
}

func newCluster(t *testing.T, seed uint64) (*simclock.Loop, *Cluster, *[]string) {
	loop := simclock.NewLoop(nil, simclock.Budget{})
	cat := catalog.Catalog{Version: 1, NextRouteID: 2, Routes: []catalog.Route{{ID: 1, Group: 0}}}
	states := [][]*fsm.FSM{{fsm.New(0, cat, bugs.None), fsm.New(0, cat, bugs.None), fsm.New(0, cat, bugs.None)}}
	cfg := Config{Nodes: 3, Groups: 1, ReplMin: time.Millisecond, ReplMax: 3 * time.Millisecond,
		ApplyMin: time.Millisecond, ApplyMax: 2 * time.Millisecond, SlowApply: 0.3, SlowApplyMax: 50 * time.Millisecond,
		ElectMin: time.Millisecond, ElectMax: 5 * time.Millisecond}
	c := New(loop, cfg, simclock.NewSeeded(seed), states)
	var msgs []string
	for n := 0; n < 3; n++ {
		c.Attach(n, loop.Spawn("n", &stubNode{c: c, n: n, msgs: &msgs}, nil, nil))
	}
	return loop, c, &msgs
}

func barrier() fsm.Entry { return fsm.Entry{Kind: fsm.KindBarrier} }

// Every voter applies the committed log in order, at its own pace, and
// they all end with the same state.
func TestVotersApplyTheCommittedLog(t *testing.T) {
	loop, c, _ := newCluster(t, 1)
	c.ElectNow(0, 0)
	_, term := c.Leader(0)
	for i := 0; i < 20; i++ {
		if _, err := c.Propose(0, 0, term, fsm.Entry{Kind: fsm.KindCeiling, Ceiling: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Propose(0, 1, term, barrier()); err == nil {
		t.Fatal("a follower proposed")
	}
	loop.Run()
	for n := 0; n < 3; n++ {
		v := c.Voter(0, n)
		if v.Applied != 20 || v.Ceiling != 20 {
			t.Fatalf("voter %d applied %d ceiling %d", n, v.Applied, v.Ceiling)
		}
	}
	if c.MaxApplied(0) != 20 || c.MostApplied(0).Applied != 20 {
		t.Fatal("max applied")
	}
}

// A deposed leader's uncommitted tail survives only as a prefix; whatever
// survives is committed and applied everywhere.
func TestDeposeKeepsAPrefix(t *testing.T) {
	kept := map[uint64]bool{}
	for seed := uint64(1); seed <= 30; seed++ {
		loop, c, msgs := newCluster(t, seed)
		c.ElectNow(0, 0)
		_, term := c.Leader(0)
		for i := 0; i < 5; i++ {
			_, _ = c.Propose(0, 0, term, barrier())
		}
		c.Depose(0, 1, time.Millisecond) // before anything committed
		loop.Run()
		last := c.LastIndex(0)
		kept[last] = true
		if c.CommitIndex(0) != last {
			t.Fatalf("seed %d: %d entries survive but %d committed", seed, last, c.CommitIndex(0))
		}
		for n := 0; n < 3; n++ {
			if c.Voter(0, n).Applied != last {
				t.Fatalf("seed %d: voter %d applied %d of %d", seed, n, c.Voter(0, n).Applied, last)
			}
		}
		if l, _ := c.Leader(0); l != 1 || len(*msgs) != 3 {
			t.Fatalf("seed %d: leader %d msgs %v", seed, l, *msgs)
		}
	}
	if len(kept) < 3 {
		t.Fatalf("surviving prefixes were always one of %v", kept)
	}
}

func TestElectionSkipsDownNodes(t *testing.T) {
	loop, c, _ := newCluster(t, 3)
	c.ElectNow(0, 0)
	loop.Run()
	c.NodeDown(0, true)
	loop.Run()
	if l, _ := c.Leader(0); l == 0 || l < 0 {
		t.Fatalf("leader %d after node 0 went down", l)
	}
	if len(c.Leaderless()) != 0 {
		t.Fatal("leaderless")
	}
}
