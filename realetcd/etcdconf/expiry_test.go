package etcdconf

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"shardsim/simclock"
	"shardsim/simkv"
)

// TestLeaseExpiryConformance lets a real lease run out on wall-clock time
// and checks that etcd does what the model's ExpireLeases does: nothing
// before the deadline, then every key of the lease deleted in one revision,
// in key order, seen so by a watch.
func TestLeaseExpiryConformance(t *testing.T) {
	t.Parallel()
	srv := startEtcd(t)
	r := &runner{t: t, c: newClient(t, srv), m: simkv.NewStore(simkv.StoreConfig{}), seed: 0,
		modelW: map[int64][]simkv.WatchResponse{}, pastStarts: map[int64]int64{}, outcomes: map[string]int{},
		lastPhysical: true, start: time.Now()}
	r.apply(simkv.Request{Put: &simkv.PutRequest{Key: []byte("x/other"), Value: []byte("stays")}})
	r.watch(simkv.WatchRequest{Key: []byte("x/"), RangeEnd: prefixEnd("x/"), PrevKv: true})
	granted := time.Now()
	r.apply(simkv.Request{LeaseGrant: &simkv.LeaseGrantRequest{ID: 42, TTL: 1}}) // raised to the 2s minimum
	for _, k := range []string{"x/c", "x/a", "x/b"} {
		r.apply(simkv.Request{Put: &simkv.PutRequest{Key: []byte(k), Value: []byte("v"), Lease: 42}})
	}
	deadline, ok := r.m.LeaseDeadline(42)
	if !ok || deadline != simclock.Time(2*time.Second) {
		t.Fatalf("model deadline %v", deadline)
	}
	if n := r.m.ExpireLeases(deadline - 1); n != 0 {
		t.Fatal("model expired the lease early")
	}
	// Wait for etcd's lessor (it looks for expired leases every 500ms).
	all := simkv.Request{Range: &simkv.RangeRequest{Key: []byte("x/"), RangeEnd: prefixEnd("x/"), CountOnly: true}}
	for {
		resp, err := r.c.do(all)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Range.Count == 1 {
			break
		}
		if time.Since(granted) > 10*time.Second {
			t.Fatal("etcd did not expire the lease within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if el := time.Since(granted); el < 2*time.Second {
		t.Fatalf("etcd expired a 2s lease after %v", el)
	}
	if n := r.m.ExpireLeases(deadline); n != 1 {
		t.Fatalf("model expired %d leases at the deadline", n)
	}
	r.takeModelWatches()
	// From here both sides must agree again on everything.
	r.apply(simkv.Request{Range: &simkv.RangeRequest{Key: []byte("x/"), RangeEnd: prefixEnd("x/")}})
	r.apply(simkv.Request{LeaseTimeToLive: &simkv.LeaseTimeToLiveRequest{ID: 42, Keys: true}})
	r.apply(simkv.Request{LeaseLeases: &simkv.LeaseLeasesRequest{}})
	r.endSequence(&gen{}, []int64{0})
	_, evs, _ := split(r.modelW[0])
	last := evs[len(evs)-3:]
	for i, k := range []string{"x/a", "x/b", "x/c"} {
		want := simkv.Event{Type: simkv.EventDelete, Kv: simkv.KeyValue{Key: []byte(k), ModRevision: 6}}
		if diff := cmp.Diff(want, simkv.Event{Type: last[i].Type, Kv: last[i].Kv}, equateEmpty); diff != "" {
			t.Fatalf("expiry event %d:\n%s", i, diff)
		}
	}
}
