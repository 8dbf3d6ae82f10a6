package coord

import "testing"

// acquire and renew return the capacity hint: the acquire count, the
// run's retry limit, backoff once the shard was leased more often than
// the run allows retries, and the room left to spawn.
func TestCapacityHint(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		c := b.make(t, DefaultConfig())
		if _, err := c.CreateRun(100, tenantA, 7, RunConfig{LeaseDuration: 10, MaxShardRetries: 2}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.RegisterShards(100, tenantA, 7, []InitialShard{{Shard: 1, Spec: spec("a", "m")}}, 1); err != nil {
			t.Fatal(err)
		}
		var last AcquireResult
		for i, now := 0, LogicalTime(100); i < 3; i, now = i+1, now+10 {
			res, _, err := c.AcquireAndRestore(now, tenantA, ShardKey{7, 1}, w1)
			if err != nil {
				t.Fatal(err)
			}
			want := CapacityHint{Acquires: uint32(i + 1), RetryLimit: 2, Backoff: i+1 > 2, SpawnRoom: maxSpawnedPerShard}
			if res.Capacity != want {
				t.Fatalf("acquire %d: capacity %+v, want %+v", i+1, res.Capacity, want)
			}
			last = res
		}
		r, _, err := c.Renew(125, tenantA, last.Lease)
		if err != nil || r.Capacity != last.Capacity {
			t.Fatalf("renew: %+v %v, want capacity %+v", r.Capacity, err, last.Capacity)
		}
		if _, _, err := c.SplitResidual(125, tenantA, last.Lease, SplitResidualPlan{spec("a", "f"), spec("f", "m")}, 2); err != nil {
			t.Fatal(err)
		}
		if r, _, _ := c.Renew(126, tenantA, last.Lease); r.Capacity.SpawnRoom != maxSpawnedPerShard-1 {
			t.Fatalf("spawn room after a split: %d", r.Capacity.SpawnRoom)
		}
		if s, _ := c.ListShards(126, tenantA, 7, FilterAll()); len(s) != 2 || s[0].AcquireCount != 3 {
			t.Fatalf("summaries %+v: want the acquire count 3 on shard 1", s)
		}
	})
}
