package coordcheck

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"shardsim/model/coord"
)

// fullAndIncremental holds the durable listeners twice: one set fed every
// state (ObserveDurable), the other only the touched records
// (ObserveShards).
type fullAndIncremental struct {
	replaysFull, replaysInc *Replays
	effectsFull, effectsInc *EffectLog
	linFull, linInc         *Linearizable
	calls                   int // shard-change reports seen
}

func watchBoth(d *Durable) *fullAndIncremental {
	b := &fullAndIncremental{replaysFull: NewReplays(), replaysInc: NewReplays(), effectsFull: NewEffectLog(),
		effectsInc: NewEffectLog(), linFull: NewLinearizable(), linInc: NewLinearizable()}
	d.OnChange(b.replaysFull.ObserveDurable)
	d.OnChange(b.effectsFull.ObserveDurable)
	d.OnChange(b.linFull.ObserveDurable)
	d.OnShardsChange(b.replaysInc.ObserveShards)
	d.OnShardsChange(b.effectsInc.ObserveShards)
	d.OnShardsChange(b.linInc.ObserveShards)
	d.OnShardsChange(func([]ShardChange, uint64) { b.calls++ })
	return b
}

func (b *fullAndIncremental) agree(t *testing.T, step int) {
	t.Helper()
	if !reflect.DeepEqual(b.replaysFull.landed, b.replaysInc.landed) {
		t.Fatalf("step %d: Replays landed %v (full) vs %v (touched records)", step, b.replaysFull.landed, b.replaysInc.landed)
	}
	if !reflect.DeepEqual(b.effectsFull.fences, b.effectsInc.fences) {
		t.Fatalf("step %d: EffectLog fences %v (full) vs %v (touched records)", step, b.effectsFull.fences, b.effectsInc.fences)
	}
	if !reflect.DeepEqual(b.linFull.initial, b.linInc.initial) || !reflect.DeepEqual(b.linFull.order, b.linInc.order) {
		t.Fatalf("step %d: Linearizable initial records differ (full %v, touched records %v)", step, b.linFull.order, b.linInc.order)
	}
}

// The listeners fed only the shard records a change touched learn exactly
// what they learn from every whole state, over random legal histories of
// several runs: shards appear one after another, fences rise or stay, op
// ids land with and without refusals, and some writes rewrite a record
// with its own value.
func TestShardListenersAgreeWithFullScans(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		r := newDurableRig(0)
		both := watchBoth(r.d)
		var shards []coord.ShardRecord
		nextOp := coord.OpID(1)
		for step := 0; step < 60; step++ {
			switch {
			case len(shards) < 6 && (len(shards) == 0 || rng.IntN(4) == 0):
				t0 := []coord.TenantID{tenA, tenB}[rng.IntN(2)]
				run := coord.RunID(len(shards) + 1)
				rr, sr := testRun(t0, run), testShard(t0, run)
				r.write(nil, map[string][]byte{
					runKey(t0, run):      stored(coord.EncodeRunRecord(&rr)),
					activeKey(t0, run):   coord.EncodeActiveRunEntry(&coord.ActiveRunEntry{Run: run}),
					shardKey(t0, run, 1): stored(coord.EncodeShardRecord(&sr)),
				})
				shards = append(shards, sr)
			default:
				puts := map[string][]byte{}
				for i := range shards {
					if rng.IntN(3) != 0 {
						continue
					}
					s := &shards[i]
					switch rng.IntN(3) {
					case 0:
						s.Fence++
					case 1:
						res := coord.OpCompleted
						if rng.IntN(3) == 0 {
							res = coord.OpError
						}
						s.OpLog.Push(coord.OpLogEntry{Op: nextOp, Kind: coord.OpKindCheckpoint, Result: res})
						nextOp++
					} // case 2: the record rewritten as it is
					puts[shardKey(s.Tenant, s.Run, s.Shard)] = stored(coord.EncodeShardRecord(s))
				}
				if len(puts) == 0 {
					continue
				}
				r.write(nil, puts)
			}
			if v := r.d.Err(); v != nil {
				t.Fatalf("seed %d step %d: the random history is not legal: %v", seed, step, v)
			}
			both.agree(t, step)
			sameAsRebuilt(t, r, step)
		}
		if both.calls < 10 || len(both.linInc.order) != len(shards) || len(both.effectsInc.fences) == 0 || len(both.replaysInc.landed) == 0 {
			t.Fatalf("seed %d: a weak history: %d changes, %d shards, %d fence rises, %d landed ops",
				seed, both.calls, len(both.linInc.order), len(both.effectsInc.fences), len(both.replaysInc.landed))
		}
	}
}

// sameAsRebuilt requires the observer's state, brought up to date record
// by record, to equal the state a fresh observer builds from the whole
// store.
func sameAsRebuilt(t *testing.T, r *durableRig, step int) {
	t.Helper()
	fresh := NewDurable(r.store, testNS, r.d.unit, r.d.cooldown, NewHistory())
	if _, v := fresh.refreshAll(); v != nil {
		t.Fatal(v)
	}
	want, _ := fresh.rebuild()
	got := *r.d.Snapshot()
	got.At = 0
	if !reflect.DeepEqual(&got, want) {
		t.Fatalf("step %d: the state updated in place differs from the state rebuilt from the store", step)
	}
}
