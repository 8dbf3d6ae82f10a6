package keymove

import (
	"testing"

	"shardsim/simclock"
	"shardsim/simkv"
)

type actorFunc func(*simclock.Context, any)

func (f actorFunc) Receive(ctx *simclock.Context, msg any) { f(ctx, msg) }

// TestSimRuntimeBoundsConcurrency runs the executor as simclock tasks over
// simulated servers with real latency: copies and verifications overlap up
// to, and never past, their semaphores.
func TestSimRuntimeBoundsConcurrency(t *testing.T) {
	for _, interleave := range []bool{true, false} {
		w := newTestWorld(t, 40, topo3, topo4, nil)
		loop := simclock.NewLoop(nil, simclock.Budget{MaxTime: simclock.Time(60e9)})
		faults := simkv.DefaultFaults()
		meta := simkv.NewServer(loop, w.meta, faults, simclock.NewSeeded(1).Fork("meta"))
		shards := map[ShardID]*simkv.Server{}
		for _, id := range sortedShardIDs(w.shards) {
			shards[id] = simkv.NewServer(loop, w.shards[id], faults, simclock.NewSeeded(1).Fork(string(id)))
		}
		dial := func(t *simclock.Task) (simkv.KV, func(ShardID) simkv.KV) {
			self := t.Context().Self()
			return meta.Connect(self).In(t), func(id ShardID) simkv.KV { return shards[id].Connect(self).In(t) }
		}
		cfg := Config{Options: DefaultOptions()}
		cfg.Options.CopyConcurrency, cfg.Options.VerifyConcurrency, cfg.Options.InterleaveCopyAndVerify = 3, 2, interleave
		ex, _ := NewExecutor(w.plan, cfg)
		var sum Summary
		var runErr error
		loop.Spawn("executor", actorFunc(func(ctx *simclock.Context, msg any) {
			if _, ok := msg.(simclock.Started); ok {
				ctx.Go("exec", func(tk *simclock.Task) { sum, runErr = ex.Run(NewSimRuntime(tk, dial)) })
			}
		}), nil, nil)
		loop.Run()
		if runErr != nil || !sum.Complete || sum.Done != len(w.plan.Moves) {
			t.Fatalf("interleave=%v: %v, %v", interleave, runErr, sum)
		}
		m := ex.Metrics()
		if m.MaxActiveCopyConcurrency != 3 || m.MaxActiveVerifyConcurrency != 2 {
			t.Fatalf("interleave=%v: copy concurrency reached %d (limit 3), verify %d (limit 2)", interleave, m.MaxActiveCopyConcurrency, m.MaxActiveVerifyConcurrency)
		}
		if m.ActiveCopyConcurrency != 0 || m.ActiveVerifyConcurrency != 0 {
			t.Fatalf("gauges did not return to zero: %+v", m)
		}
	}
}
