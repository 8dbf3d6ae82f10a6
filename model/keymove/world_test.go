package keymove

import (
	"fmt"
	"testing"

	"shardsim/simkv"
)

// testWorld is a fault-free world of Direct stores: etcd with the shard map
// of the old topology, and one store per shard holding its keys.
type testWorld struct {
	meta   *simkv.Store
	shards map[ShardID]*simkv.Store
	plan   Plan
	keys   []string
	values map[string]string
}

func newTestWorld(t tb, nKeys int, old, next Topology, missing map[string]bool) *testWorld {
	t.Helper()
	w := &testWorld{meta: simkv.NewStore(simkv.StoreConfig{}), shards: map[ShardID]*simkv.Store{}, values: map[string]string{}}
	for _, s := range append(append([]ShardID(nil), old.Shards...), next.Shards...) {
		if w.shards[s] == nil {
			w.shards[s] = simkv.NewStore(simkv.StoreConfig{})
		}
	}
	ks := Keyspace{}
	for i := 0; i < nKeys; i++ {
		k := fmt.Sprintf("user%03d", i)
		w.keys = append(w.keys, k)
		owner := old.Owner(k)
		mustApply(t, w.meta, simkv.Request{Put: &simkv.PutRequest{Key: ks.MapKey(k), Value: []byte(owner)}})
		mustApply(t, w.shards[owner], simkv.Request{Put: &simkv.PutRequest{Key: CtlKey(k), Value: []byte(CtlOpen)}})
		if !missing[k] {
			v := fmt.Sprintf("value-of-%s", k)
			w.values[k] = v
			mustApply(t, w.shards[owner], simkv.Request{Put: &simkv.PutRequest{Key: DataKey(k), Value: []byte(v)}})
		}
	}
	p, err := NewPlan(w.keys, old, next)
	if err != nil {
		t.Fatal(err)
	}
	w.plan = p
	return w
}

func mustApply(t tb, s *simkv.Store, r simkv.Request) {
	t.Helper()
	if _, err := s.Apply(0, r); err != nil {
		t.Fatal(err)
	}
}

// runtime returns a Sequential runtime over Direct views of the stores.
func (w *testWorld) runtime() *Sequential {
	rt := &Sequential{MetaKV: simkv.NewDirect(w.meta, 0), ShardKV: map[ShardID]simkv.KV{}}
	for id, s := range w.shards {
		rt.ShardKV[id] = simkv.NewDirect(s, 0)
	}
	return rt
}

// owner reads the shard map entry of key.
func (w *testWorld) owner(t tb, key string) ShardID {
	resp, err := w.meta.Apply(0, simkv.Request{Range: &simkv.RangeRequest{Key: Keyspace{}.MapKey(key)}})
	if err != nil || len(resp.Range.Kvs) != 1 {
		t.Fatalf("map entry of %s: %v", key, err)
	}
	return ShardID(resp.Range.Kvs[0].Value)
}

// read returns key's data and control word on shard s.
func (w *testWorld) read(s ShardID, key string) (data string, found bool, ctl string) {
	for _, k := range [][]byte{DataKey(key), CtlKey(key)} {
		resp, _ := w.shards[s].Apply(0, simkv.Request{Range: &simkv.RangeRequest{Key: k}})
		if len(resp.Range.Kvs) == 1 {
			if k[0] == 'd' {
				data, found = string(resp.Range.Kvs[0].Value), true
			} else {
				ctl = string(resp.Range.Kvs[0].Value)
			}
		}
	}
	return
}

// tb is what the helpers need of a test (testing.T or rapid.T).
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

var (
	topo3 = Topology{Shards: []ShardID{"s1", "s2", "s3"}}
	topo4 = Topology{Shards: []ShardID{"s1", "s2", "s3", "s4"}}
)

func TestRunMovesEveryKey(t *testing.T) {
	w := newTestWorld(t, 40, topo3, topo4, map[string]bool{"user007": true})
	if len(w.plan.Moves) == 0 {
		t.Fatal("scale-out from 3 to 4 shards moved nothing")
	}
	opts := DefaultOptions()
	opts.SwapBatchSize = 3
	ex, err := NewExecutor(w.plan, Config{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := ex.Run(w.runtime())
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Complete {
		t.Fatal("run ended without completing")
	}
	for i, mv := range w.plan.Moves {
		st := ex.Checkpoint().Keys[i]
		data, found, ctl := w.read(mv.Target, mv.Key)
		_, _, srcCtl := w.read(mv.Source, mv.Key)
		if mv.Key == "user007" {
			if st.State != Failed || st.Reason != "not-found" || w.owner(t, mv.Key) != mv.Source {
				t.Fatalf("missing key: state %v (%s), owner %s", st.State, st.Reason, w.owner(t, mv.Key))
			}
			continue
		}
		if st.State != Done || w.owner(t, mv.Key) != mv.Target {
			t.Fatalf("%s: state %v owner %s", mv.Key, st.State, w.owner(t, mv.Key))
		}
		if !found || data != w.values[mv.Key] || ctl != CtlOpen || srcCtl != CtlMoved(w.plan.ID) {
			t.Fatalf("%s: target data %q found=%v ctl %q, source ctl %q", mv.Key, data, found, ctl, srcCtl)
		}
	}
	m := ex.Metrics()
	if m.KeysPlanned != int64(len(w.plan.Moves)) || m.KeysSwapped != int64(sum.Done) || m.KeysFailed != 1 {
		t.Fatalf("metrics %+v, summary %v", m, sum)
	}
}
