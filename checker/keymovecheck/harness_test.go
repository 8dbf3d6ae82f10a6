package keymovecheck

import (
	"shardsim/property"
	"testing"

	"shardsim/model/keymove"
	"shardsim/simclock"
	"shardsim/simkv"
)

// harness drives a Durable checker by hand: it applies requests to bare
// stores and tells the observers, as a simulated server would.
type harness struct {
	t      *testing.T
	plan   keymove.Plan
	ks     keymove.Keyspace
	meta   *simkv.Store
	shards map[keymove.ShardID]*simkv.Store
	d      *Durable
	obs    map[keymove.ShardID]simkv.Observer
	metaO  simkv.Observer
	call   uint64
	now    simclock.Time
	ck     keymove.Checkpoint
}

// newHarness: key "a" moves s1 -> s2 with value "v0"; key "b" stays on s1.
func newHarness(t *testing.T, force bool) *harness {
	h := &harness{t: t, plan: keymove.Plan{ID: "p1", Moves: []keymove.KeyMove{{Key: "a", Source: "s1", Target: "s2"}}},
		meta: simkv.NewStore(simkv.StoreConfig{}), shards: map[keymove.ShardID]*simkv.Store{
			"s1": simkv.NewStore(simkv.StoreConfig{}), "s2": simkv.NewStore(simkv.StoreConfig{})}}
	put := func(s *simkv.Store, k, v string) {
		s.Apply(0, simkv.Request{Put: &simkv.PutRequest{Key: []byte(k), Value: []byte(v)}})
	}
	for _, k := range []string{"a", "b"} {
		put(h.meta, string(h.ks.MapKey(k)), "s1")
		put(h.shards["s1"], "c/"+k, keymove.CtlOpen)
		put(h.shards["s1"], "d/"+k, "v0-"+k)
	}
	h.d = NewDurable(Config{Plan: h.plan, Keys: h.ks, Meta: h.meta, Shards: h.shards, Force: force,
		IsClient: func(a string) bool { return a == "client" }})
	h.metaO = h.d.MetaObserver()
	h.obs = map[keymove.ShardID]simkv.Observer{"s1": h.d.ShardObserver("s1"), "s2": h.d.ShardObserver("s2")}
	h.ck = keymove.Checkpoint{PlanID: "p1", Keys: make([]keymove.KeyState, 1)}
	return h
}

func (h *harness) apply(store *simkv.Store, o simkv.Observer, actor string, req simkv.Request) simkv.Response {
	h.call++
	h.now += simclock.Time(1000)
	o.OnInvoke(h.call, actor, h.now, req)
	before := store.Revision()
	resp, err := store.Apply(h.now, req)
	o.OnApply(h.call, h.now, req, resp, err, before, store.Revision())
	o.OnReturn(h.call, h.now, resp, err)
	return resp
}

// shard applies a put of key=value on shard s by actor.
func (h *harness) shardPut(s keymove.ShardID, actor, key, value string) int64 {
	r := h.apply(h.shards[s], h.obs[s], actor, simkv.Request{Txn: &simkv.TxnRequest{
		Success: []simkv.RequestOp{{Put: &simkv.PutRequest{Key: []byte(key), Value: []byte(value)}}}}})
	return r.Txn.Header.Revision
}

// setMap writes key's map entry.
func (h *harness) setMap(key string, s keymove.ShardID) {
	h.apply(h.meta, h.metaO, "executor", simkv.Request{Txn: &simkv.TxnRequest{
		Success: []simkv.RequestOp{{Put: &simkv.PutRequest{Key: h.ks.MapKey(key), Value: []byte(s)}}}}})
}

// checkpoint records key a in state st (CopiedRev rev).
func (h *harness) checkpoint(st keymove.State, rev int64, forced bool) {
	h.ck.Seq++
	h.ck.Keys[0].State, h.ck.Keys[0].CopiedRev, h.ck.Keys[0].Forced = st, rev, forced
	if st.Terminal() {
		h.ck.LastProcessedIndex = 1
	}
	h.ck.Complete = st.Terminal()
	h.apply(h.meta, h.metaO, "executor", simkv.Request{Txn: &simkv.TxnRequest{Success: []simkv.RequestOp{{
		Put: &simkv.PutRequest{Key: h.ks.CheckpointKey("p1"), Value: h.ck.Encode()}}}}})
}

// goodMove performs a correct move of key a, stopping before the swap
// when swap is false. It returns the copied revision.
func (h *harness) goodMove(swap bool) int64 {
	h.checkpoint(keymove.Copying, 0, false)
	src, _ := h.d.get("s1", []byte("d/a"))
	rev := src.ModRevision
	h.shardPut("s2", "executor", "d/a", string(src.Value))
	h.shardPut("s2", "executor", "c/a", keymove.CtlOpen)
	h.checkpoint(keymove.Copied, rev, false)
	h.checkpoint(keymove.Verifying, rev, false)
	h.checkpoint(keymove.Verified, rev, false)
	h.checkpoint(keymove.Swapping, rev, false)
	h.shardPut("s1", "executor", "c/a", keymove.CtlMoved("p1"))
	if swap {
		h.setMap("a", "s2")
		h.checkpoint(keymove.Done, rev, false)
	}
	return rev
}

func wantViolation(t *testing.T, v *property.Violation, want property.Name) {
	t.Helper()
	if v == nil {
		t.Fatalf("no violation, want %s", want)
	}
	if v.Property != want {
		t.Fatalf("violation of %s (%s), want %s", v.Property, v.Detail, want)
	}
	t.Logf("%s: %s", v.Property, v.Detail)
}
