package keymove

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"shardsim/simclock"
	"shardsim/simkv"
)

// machine is the rapid state machine of an executor under faults: each
// action runs one incarnation (with request faults, and a crash at a drawn
// request); the invariants hold after every action, and once a fault-free
// incarnation runs, the plan ends.
type machine struct {
	w    *testWorld
	cfg  Config
	seed uint64
	runs int
	done *Summary
}

func (m *machine) runtime(t *rapid.T, faults simkv.DirectFaults) *Sequential {
	rt := m.w.runtime()
	m.seed++
	ch := simclock.NewSeeded(m.seed)
	rt.MetaKV = simkv.NewDirectFaulty(rt.MetaKV.(*simkv.Direct), faults, ch.Fork("meta"))
	for _, id := range sortedShardIDs(rt.ShardKV) {
		rt.ShardKV[id] = simkv.NewDirectFaulty(rt.ShardKV[id].(*simkv.Direct), faults, ch.Fork(string(id)))
	}
	return rt
}

// RunFaulty runs an incarnation under drawn request faults that crashes at
// a drawn request (or ends).
func (m *machine) RunFaulty(t *rapid.T) {
	faults := simkv.DirectFaults{
		LoseRequest:  rapid.Float64Range(0, 0.2).Draw(t, "lose_request"),
		LoseResponse: rapid.Float64Range(0, 0.2).Draw(t, "lose_response"),
		Refuse:       rapid.Float64Range(0, 0.2).Draw(t, "refuse"),
	}
	at := rapid.IntRange(1, 400).Draw(t, "crash_at")
	n := 0
	m.run(t, crashing(m.runtime(t, faults), &n, at, rapid.Bool().Draw(t, "crash_after_apply")))
}

// RunClean runs an incarnation with no faults at all: the plan must end.
func (m *machine) RunClean(t *rapid.T) {
	m.run(t, m.w.runtime())
	if m.done == nil {
		t.Fatal("a fault-free incarnation did not end the plan")
	}
}

func (m *machine) run(t *rapid.T, rt Runtime) {
	m.runs++
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crashSignal); !ok {
				panic(r)
			}
		}
	}()
	ex, err := NewExecutor(m.w.plan, m.cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := ex.Run(rt)
	if err == nil {
		m.done = &sum
	}
}

// Check holds after every action: a key's map entry changes at most once
// and only to its target; a key on its target holds its value there and
// its source refuses it; a finished plan accounts for every key.
func (m *machine) Check(t *rapid.T) {
	ck := m.checkpoint(t)
	for i, mv := range m.w.plan.Moves {
		owner, version := m.mapEntry(t, mv.Key)
		if version > 2 || (owner != mv.Source && owner != mv.Target) {
			t.Fatalf("%s: map entry %s at version %d", mv.Key, owner, version)
		}
		if owner == mv.Target {
			data, _, _ := m.w.read(mv.Target, mv.Key)
			_, _, srcCtl := m.w.read(mv.Source, mv.Key)
			if data != m.w.values[mv.Key] || srcCtl == CtlOpen {
				t.Fatalf("%s on its target holds %q (want %q), source control %q", mv.Key, data, m.w.values[mv.Key], srcCtl)
			}
		}
		if m.done == nil || ck == nil {
			continue
		}
		st := ck.Keys[i]
		switch {
		case st.State == Done && owner == mv.Target:
		case st.State == Failed && owner == mv.Source:
		default:
			t.Fatalf("plan ended, %s is %v and mapped to %s", mv.Key, st.State, owner)
		}
	}
}

func (m *machine) checkpoint(t *rapid.T) *Checkpoint {
	resp, _ := m.w.meta.Apply(0, simkv.Request{Range: &simkv.RangeRequest{Key: Keyspace{}.CheckpointKey(m.w.plan.ID)}})
	if len(resp.Range.Kvs) == 0 {
		return nil
	}
	ck, err := DecodeCheckpoint(resp.Range.Kvs[0].Value, m.w.plan.ID, len(m.w.plan.Moves))
	if err != nil {
		t.Fatal(err)
	}
	return &ck
}

func (m *machine) mapEntry(t *rapid.T, key string) (ShardID, int64) {
	resp, _ := m.w.meta.Apply(0, simkv.Request{Range: &simkv.RangeRequest{Key: Keyspace{}.MapKey(key)}})
	kv := resp.Range.Kvs[0]
	return ShardID(kv.Value), kv.Version
}

func TestExecutorStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := DefaultOptions()
		opts.CopyConcurrency = rapid.IntRange(1, 4).Draw(t, "copy_concurrency")
		opts.VerifyConcurrency = rapid.IntRange(1, 4).Draw(t, "verify_concurrency")
		opts.SwapBatchSize = rapid.IntRange(1, 5).Draw(t, "swap_batch")
		opts.MaxRetries = rapid.IntRange(0, 4).Draw(t, "max_retries")
		opts.InterleaveCopyAndVerify = rapid.Bool().Draw(t, "interleave")
		opts.Verification = VerificationMode(rapid.IntRange(0, 2).Draw(t, "verification"))
		nKeys := rapid.IntRange(4, 24).Draw(t, "keys")
		next := []Topology{topo4, {Shards: []ShardID{"s1", "s2"}}, {Shards: []ShardID{"s2", "s3", "s4"}}}[rapid.IntRange(0, 2).Draw(t, "change")]
		m := &machine{w: newTestWorld(t, nKeys, topo3, next, map[string]bool{fmt.Sprintf("user%03d", nKeys/2): true}), cfg: Config{Options: opts}}
		t.Repeat(map[string]func(*rapid.T){
			"faulty": m.RunFaulty,
			"":       m.Check,
		})
		m.RunClean(t)
		m.Check(t)
	})
}
