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
	if _, _, err := createRunWithShards(r, 1, tenantA, run1, RunConfig{LeaseDuration: 1 << 50}, roots, 1); err != nil {
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

// BenchmarkJudgeStep measures the durable checkers on a state the
// size of a coordination world's (3 tenants, 2 runs each of 3 roots, every
// root split into 3 leaves, half of them leased): one coordcheck.CheckStep
// from a state to its successor with one checkpoint applied, which is
// what the durable observer runs after every write.
func BenchmarkJudgeStep(b *testing.B) {
	prev, next := benchStates(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := judgeStep(&prev, &next); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJudgeState measures coordcheck.CheckState alone on the same state.
func BenchmarkJudgeState(b *testing.B) {
	_, next := benchStates(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := judgeState(&next); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStates builds the benchmark's state and its successor.
func benchStates(b *testing.B) (prev, next Snapshot) {
	r := newRef(b, DefaultConfig())
	now := LogicalTime(10)
	var leases []Lease
	var starts [][]byte
	op := OpID(100)
	for ti := 0; ti < 3; ti++ {
		tn := TenantID{0xc0, byte(ti)}
		for run := RunID(1); run <= 2; run++ {
			roots := []InitialShard{{1, spec("", "h")}, {2, spec("h", "q")}, {3, spec("q", "")}}
			op++
			if _, _, err := createRunWithShards(r, now, tn, run, RunConfig{LeaseDuration: 1000}, roots, op); err != nil {
				b.Fatal(err)
			}
			for _, root := range roots {
				res, _, err := r.AcquireAndRestore(now, tn, ShardKey{run, root.Shard}, w1)
				if err != nil {
					b.Fatal(err)
				}
				// [s, e) -> [s, s+"5"), residual [s+"5", e) -> replaced by two halves.
				s, e := root.Spec.Start, root.Spec.End
				mid := append(append([]byte(nil), s...), '5')
				quarter := append(append([]byte(nil), s...), '7')
				op++
				sr, _, err := r.SplitResidual(now, tn, res.Lease, SplitResidualPlan{ShardSpec{Start: s, End: mid}, ShardSpec{Start: mid, End: e}}, op)
				if err != nil {
					b.Fatal(err)
				}
				res2, _, err := r.AcquireAndRestore(now, tn, ShardKey{run, sr.Residual}, w2)
				if err != nil {
					b.Fatal(err)
				}
				op++
				if _, _, err := r.SplitReplace(now, tn, res2.Lease, SplitReplacePlan{[]ShardSpec{{Start: mid, End: quarter}, {Start: quarter, End: e}}}, op); err != nil {
					b.Fatal(err)
				}
				leases = append(leases, res.Lease)
				starts = append(starts, s)
			}
		}
	}
	prev = r.Snapshot(now)
	l, start := leases[len(leases)/2], starts[len(leases)/2]
	op++
	if _, _, err := r.Checkpoint(now+1, l.Tenant, l, Cursor{LastKey: append(append([]byte(nil), start...), '1')}, op); err != nil {
		b.Fatal(err)
	}
	next = r.Snapshot(now + 1)
	if len(next.Shards) != 3*2*3*4 {
		b.Fatalf("%d shards", len(next.Shards))
	}
	return prev, next
}
