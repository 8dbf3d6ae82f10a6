package coordcheck

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"shardsim/model/coord"
	"shardsim/simkv"
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
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		r := newDurableRig(0)
		both := watchBoth(r.d)
		var shards []coord.ShardRecord
		nextOp := coord.OpID(1)
		var claimAt coord.LogicalTime
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
			case rng.IntN(4) == 0:
				// A lease granted with its owner binding, or released and
				// the binding deleted; and a claim record written: keys of
				// other kinds join and leave.
				s := &shards[rng.IntN(len(shards))]
				owner := testNS + "o/" + s.Tenant.String() + fmt.Sprintf("/%016x/%016x", uint64(s.Run), uint64(s.Shard))
				var dels []string
				puts := map[string][]byte{}
				if s.Lease.Set {
					s.Lease = coord.Opt[coord.LeaseHolder]{}
					dels = append(dels, owner)
				} else {
					s.Fence++
					s.Lease = coord.Some(coord.LeaseHolder{Owner: 7, Deadline: 1000})
					b := coord.OwnerBinding{Worker: 7, Fence: s.Fence, Deadline: 1000}
					puts[owner] = coord.EncodeOwnerBinding(&b)
				}
				puts[shardKey(s.Tenant, s.Run, s.Shard)] = stored(coord.EncodeShardRecord(s))
				claimAt++
				c := coord.ClaimRecord{Worker: coord.WorkerID(rng.IntN(3) + 1), LastClaimAt: claimAt}
				puts[claimKey(s.Tenant, c.Worker)] = coord.EncodeClaimRecord(&c)
				r.writeDeleting(nil, puts, dels)
			default:
				puts := map[string][]byte{}
				for i := range shards {
					if rng.IntN(3) != 0 {
						continue
					}
					s := &shards[i]
					switch rng.IntN(3) {
					case 0:
						if !s.Lease.Set { // a leased shard's fence is its binding's too
							s.Fence++
						}
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
	want, _ := fresh.snapshot()
	got := *r.d.Snapshot()
	got.At = 0
	if diff := cmp.Diff(want, &got, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("step %d: the state updated in place differs from the state rebuilt from the store:\n%s", step, diff)
	}
}

// writeDeleting is write with deletes of whole keys after the puts, in one
// transaction.
func (r *durableRig) writeDeleting(op *Request, puts map[string][]byte, dels []string) {
	var ops []simkv.RequestOp
	for _, k := range sortedKeys(puts) {
		ops = append(ops, simkv.RequestOp{Put: &simkv.PutRequest{Key: []byte(k), Value: puts[k]}})
	}
	for _, k := range dels {
		ops = append(ops, simkv.RequestOp{DeleteRange: &simkv.DeleteRangeRequest{Key: []byte(k)}})
	}
	req := simkv.Request{Txn: &simkv.TxnRequest{Success: ops}}
	r.call++
	r.h.Tag(op)
	r.d.OnInvoke(r.call, "test", 0, req)
	before := r.store.Revision()
	resp, err := r.store.Apply(0, req)
	r.d.OnApply(r.call, 0, req, resp, err, before, r.store.Revision())
}
