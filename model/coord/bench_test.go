package coord

import (
	"strconv"
	"testing"

	"shardsim/simkv"
)

// BenchmarkReferenceCheckpointMix measures the reference on a worker-like
// mix over 64 leased shards: 80% checkpoints with advancing cursors, 10%
// renews and 10% retried checkpoints answered from the op-log.
func BenchmarkReferenceCheckpointMix(b *testing.B) {
	checkpointMix(b, newRef(b, DefaultConfig()), nil)
}

// BenchmarkEtcdCheckpointMix measures the etcd backend on the same mix,
// over a fault-free simkv.Direct. Like an etcd cluster with automatic
// compaction, the store is compacted every 4096 operations, so its
// history stays bounded.
func BenchmarkEtcdCheckpointMix(b *testing.B) {
	kv := simkv.NewDirect(simkv.NewStore(simkv.StoreConfig{}), 0)
	e := NewEtcd(kv, testEtcdConfig(DefaultConfig()))
	checkpointMix(b, e, func(i int) {
		if i%4096 == 4095 {
			if _, err := kv.Compact(simkv.CompactRequest{Revision: kv.Store().Revision()}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// checkpointMix runs the mix on r; every, when set, runs after each
// operation, inside the timed loop.
func checkpointMix(b *testing.B, r Coordinator, every func(i int)) {
	const shards = 64
	var roots []InitialShard
	for i := 0; i < shards; i++ {
		roots = append(roots, InitialShard{Shard: ShardID(i + 1), Spec: ShardSpec{Start: []byte{'s', byte(i)}, End: []byte{'s', byte(i + 1)}}})
	}
	if _, _, err := CreateRunWithShards(r, 1, tenantA, run1, RunConfig{LeaseDuration: 1 << 50}, roots, 1); err != nil {
		b.Fatal(err)
	}
	leases := make([]Lease, shards)
	for i := range leases {
		res, _, err := r.AcquireAndRestore(1, tenantA, ShardKey{run1, ShardID(i + 1)}, WorkerID(i))
		if err != nil {
			b.Fatal(err)
		}
		leases[i] = res.Lease
	}
	lastOp := make([]OpID, shards)
	lastKey := make([][]byte, shards)
	key := make([]byte, 0, 32)
	now := LogicalTime(2)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := i % shards
		now++
		var err error
		switch i / shards % 10 {
		case 8:
			_, _, err = r.Renew(now, tenantA, leases[s])
		case 9:
			_, _, err = r.Checkpoint(now, tenantA, leases[s], Cursor{LastKey: lastKey[s]}, lastOp[s])
		default:
			key = append(key[:0], 's', byte(s))
			key = strconv.AppendUint(key, uint64(1_000_000_000+i), 10)
			lastOp[s] = OpID(i + 10)
			_, _, err = r.Checkpoint(now, tenantA, leases[s], Cursor{LastKey: key}, lastOp[s])
			lastKey[s] = append(lastKey[s][:0], key...)
		}
		if err != nil {
			b.Fatal(err)
		}
		if every != nil {
			every(i)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
