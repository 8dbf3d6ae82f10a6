package nemesis

import (
	"testing"
	"time"

	"shardsim/simclock"
	"shardsim/simkv"
)

// counter is a target that counts its starts and the ticks it sees.
type counter struct{ starts, ticks *int }

func (c *counter) Receive(ctx *simclock.Context, msg any) {
	switch msg.(type) {
	case simclock.Started:
		*c.starts++
		ctx.After(100*time.Millisecond, "tick")
	case string:
		*c.ticks++
		ctx.After(100*time.Millisecond, "tick")
	}
}

func world(rates Rates, seed uint64) (*simclock.Loop, *simkv.Server, []simclock.ActorID, *int) {
	loop := simclock.NewLoop(nil, simclock.Budget{MaxTime: simclock.Time(20 * time.Second)})
	server := simkv.NewServer(loop, simkv.NewStore(simkv.StoreConfig{}), simkv.DefaultFaults(), nil)
	starts, ticks := 0, 0
	var targets []Target
	var ids []simclock.ActorID
	for i := 0; i < 3; i++ {
		id := loop.Spawn("t", &counter{&starts, &ticks}, simclock.NewNodeClock(time.Second), nil)
		ids = append(ids, id)
		targets = append(targets, Target{ID: id, Fresh: func() simclock.Actor { return &counter{&starts, &ticks} }})
	}
	loop.Spawn("nemesis", &Chaos{
		Targets: targets, Faults: Standard(server, rates, time.Second, 2*time.Second), Tick: 200 * time.Millisecond,
		HealAt: simclock.Time(10 * time.Second), Servers: []*simkv.Server{server}, Quiet: simkv.DefaultFaults(),
	}, nil, simclock.NewSeeded(seed))
	return loop, server, ids, &starts
}

func TestChaosInjectsThenHeals(t *testing.T) {
	loop, server, ids, starts := world(Rates{Crash: 0.5, Pause: 0.5, Partition: 0.5, Skew: 0.5, LeaderChange: 0.2, LeaseStorm: 0.05}, 1)
	loop.RunUntil(simclock.Time(9 * time.Second))
	if *starts <= 3 {
		t.Fatalf("no target was ever restarted (%d starts)", *starts)
	}
	if server.Stats().LeaderChanges == 0 {
		t.Fatal("no leader change was injected")
	}
	loop.RunUntil(simclock.Time(11 * time.Second))
	for _, id := range ids {
		if !loop.Up(id) || loop.Paused(id) || server.Partitioned(id) {
			t.Fatalf("target %d still hurt after heal: up=%v paused=%v partitioned=%v", id, loop.Up(id), loop.Paused(id), server.Partitioned(id))
		}
	}
	d1 := loop.Trace().Digest()
	loop2, _, _, _ := world(Rates{Crash: 0.5, Pause: 0.5, Partition: 0.5, Skew: 0.5, LeaderChange: 0.2, LeaseStorm: 0.05}, 1)
	loop2.RunUntil(simclock.Time(11 * time.Second))
	if loop2.Trace().Digest() != d1 {
		t.Fatal("same seed, different nemesis trace")
	}
}

func TestQuietRatesInjectNothing(t *testing.T) {
	loop, server, _, starts := world(Rates{}, 1)
	loop.RunUntil(simclock.Time(15 * time.Second))
	if *starts != 3 || server.Stats().LeaderChanges != 0 {
		t.Fatalf("quiet nemesis injected faults: starts=%d", *starts)
	}
}

func TestSwarmDrawsAndOverrides(t *testing.T) {
	quiet := NewSwarm(simclock.NewBytes(nil), nil)
	if r := quiet.Rate("crash", 0.5, 0.1, 0.2); r != 0 {
		t.Fatalf("a zero stream switched a fault on: %v", r)
	}
	o := NewSwarm(simclock.NewSeeded(3), map[string]string{"crash": "0.25", "workers": "7", "typo": "1"})
	if r := o.Rate("crash", 0.5, 0.1, 0.2); r != 0.25 {
		t.Fatalf("override ignored: %v", r)
	}
	if n := o.Int("workers", 1, 3); n != 7 {
		t.Fatalf("int override ignored: %v", n)
	}
	if u := o.Unused(); len(u) != 1 || u[0] != "typo" {
		t.Fatalf("unused overrides = %v", u)
	}
	bad := NewSwarm(simclock.NewSeeded(3), map[string]string{"crash": "lots"})
	bad.Rate("crash", 0.5, 0.1, 0.2)
	if bad.Err() == nil {
		t.Fatal("an unparsable override was accepted")
	}
	if string(mustJSON(t, o)) != `{"crash":0.25,"workers":7}` {
		t.Fatalf("JSON = %s", mustJSON(t, o))
	}
}

func mustJSON(t *testing.T, s *Swarm) []byte {
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
