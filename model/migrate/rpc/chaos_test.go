package rpc

import (
	"testing"
	"time"

	"shardsim/simclock"
)

// retrans is a request the network may deliver twice.
type retrans int

func (retrans) Retransmittable() {}

// counter counts what a node receives, duplicates apart.
type counter struct{ got, dups *int }

func (c counter) Receive(ctx *simclock.Context, msg any) {
	if in, ok := msg.(*Inbound); ok {
		*c.got++
		if in.Dup {
			*c.dups++
		}
		if n, ok := in.NodeOf(); !ok || n != 1 {
			panic("not addressed to node 1")
		}
		in.Reply(in.Req, nil)
	}
}

type nodeCaller struct {
	net *Network
	req func(i int) any
	n   int
}

func (c nodeCaller) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); !ok {
		return
	}
	ctx.Go("calls", func(t *simclock.Task) {
		for i := 0; i < c.n; i++ {
			_, _ = c.net.CallNode(t, 1, c.req(i))
		}
	})
}

// Node-addressed calls reach the node; only retransmittable requests are
// delivered twice, the copy marked and later.
func TestDuplicationAndNodeCalls(t *testing.T) {
	for _, retransmittable := range []bool{false, true} {
		loop := simclock.NewLoop(nil, simclock.Budget{})
		got, dups := 0, 0
		node := loop.Spawn("n1", counter{&got, &dups}, nil, nil)
		net := New(loop, Quiet(), simclock.NewSeeded(3), func(int) (simclock.ActorID, bool) { return 0, false })
		net.AttachNodes(func(n int) simclock.ActorID { return node })
		net.SetChaos(Chaos{Duplicate: 0.5, MaxDupLag: 10 * time.Millisecond})
		req := func(i int) any { return i }
		if retransmittable {
			req = func(i int) any { return retrans(i) }
		}
		loop.Spawn("caller", nodeCaller{net, req, 100}, nil, nil)
		loop.Run()
		st := net.Stats()
		if st.NodeCalls != 100 || got-dups != 100 {
			t.Fatalf("retransmittable=%v: %d calls, %d received (%d copies)", retransmittable, st.NodeCalls, got, dups)
		}
		if retransmittable != (dups > 0) || dups != st.Duplicated {
			t.Fatalf("retransmittable=%v: %d copies delivered, %d counted", retransmittable, dups, st.Duplicated)
		}
	}
}
