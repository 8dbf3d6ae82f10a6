package simkv

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"shardsim/simclock"
)

// harness drives a store with random requests, time steps and lease
// expiry, and checks the KV.* properties of PROPERTIES.md as it goes. One
// watch on every key, opened at the start, sees every change.
type harness struct {
	t       *rapid.T
	s       *Store
	now     simclock.Time
	watchID int64
	watched []WatchResponse
	bumped  []int64                       // revisions that writes created, in order
	snaps   map[int64]map[string]KeyValue // the key space after each revision
	leases  []int64                       // ids granted so far
}

var propKeys = []string{"a", "b", "c", "d", "e"}

func newHarness(t *rapid.T) *harness {
	h := &harness{t: t, s: NewStore(StoreConfig{LeaseIDSeed: 7}), snaps: map[int64]map[string]KeyValue{1: {}}}
	id, err := h.s.Watch(WatchRequest{Key: []byte{0}, RangeEnd: []byte{0}, PrevKv: true})
	if err != nil {
		t.Fatal(err)
	}
	h.watchID = id
	h.collect()
	return h
}

func (h *harness) collect() {
	for _, w := range h.s.TakeWatchResponses() {
		if w.WatchID == h.watchID && !w.Created {
			h.watched = append(h.watched, w)
		}
	}
}

// snapshot returns the whole key space at rev, read through Range.
func (h *harness) snapshot(rev int64) map[string]KeyValue {
	r, err := h.s.Apply(h.now, Request{Range: &RangeRequest{Key: []byte{0}, RangeEnd: []byte{0}, Revision: rev}})
	if err != nil {
		h.t.Fatalf("snapshot at %d: %v", rev, err)
	}
	m := map[string]KeyValue{}
	for _, kv := range r.Range.Kvs {
		m[string(kv.Key)] = kv
	}
	return m
}

// noteRevisions records the revisions created since before (KV.RevisionMonotone).
func (h *harness) noteRevisions(before int64) {
	after := h.s.Revision()
	if after < before {
		h.t.Fatalf("revision went back from %d to %d", before, after)
	}
	for r := before + 1; r <= after; r++ {
		h.bumped = append(h.bumped, r)
		h.snaps[r] = h.snapshot(r)
	}
	h.collect()
}

func (h *harness) key() []byte { return []byte(rapid.SampledFrom(propKeys).Draw(h.t, "key")) }

func (h *harness) value() []byte {
	return []byte(rapid.SampledFrom([]string{"", "x", "y"}).Draw(h.t, "value"))
}

func (h *harness) leaseID() int64 {
	if len(h.leases) == 0 || rapid.Bool().Draw(h.t, "unknownLease") {
		return 0
	}
	return rapid.SampledFrom(h.leases).Draw(h.t, "lease")
}

func (h *harness) span() (key, end []byte) {
	switch rapid.IntRange(0, 2).Draw(h.t, "span") {
	case 0:
		return h.key(), nil
	case 1:
		return h.key(), h.key()
	}
	return h.key(), []byte{0}
}

func (h *harness) writeOp() RequestOp {
	if rapid.Bool().Draw(h.t, "opPut") {
		return RequestOp{Put: &PutRequest{Key: h.key(), Value: h.value(), Lease: h.leaseID()}}
	}
	return RequestOp{DeleteRange: &DeleteRangeRequest{Key: h.key()}}
}

// apply runs one request and checks that a write moves the revision by at
// most one, and to the revision its answer reports.
func (h *harness) apply(req Request) {
	before := h.s.Revision()
	resp, err := h.s.Apply(h.now, req)
	after := h.s.Revision()
	if after != before && after != before+1 {
		h.t.Fatalf("%s moved the revision from %d to %d", req, before, after)
	}
	if err == nil && (req.Put != nil || req.DeleteRange != nil || req.Txn != nil || req.LeaseRevoke != nil) &&
		resp.Header().Revision != after {
		h.t.Fatalf("%s answered revision %d, store at %d", req, resp.Header().Revision, after)
	}
	if err != nil && after != before {
		h.t.Fatalf("%s failed (%v) but moved the revision", req, err)
	}
	h.noteRevisions(before)
}

func (h *harness) step() {
	switch rapid.IntRange(0, 9).Draw(h.t, "step") {
	case 0, 1:
		h.apply(Request{Put: &PutRequest{Key: h.key(), Value: h.value(), Lease: h.leaseID()}})
	case 2:
		k, e := h.span()
		h.apply(Request{DeleteRange: &DeleteRangeRequest{Key: k, RangeEnd: e}})
	case 3:
		c := Compare{Key: h.key(), Target: CompareVersion, Result: CompareResult(rapid.IntRange(0, 3).Draw(h.t, "cmp")),
			Version: rapid.Int64Range(0, 2).Draw(h.t, "version")}
		h.apply(Request{Txn: &TxnRequest{Compare: []Compare{c},
			Success: []RequestOp{h.writeOp(), h.writeOp()}, Failure: []RequestOp{h.writeOp()}}})
	case 4:
		id := rapid.Int64Range(0, 5).Draw(h.t, "grantID")
		r, err := h.s.Apply(h.now, Request{LeaseGrant: &LeaseGrantRequest{ID: id, TTL: rapid.Int64Range(1, 6).Draw(h.t, "ttl")}})
		if err == nil && !slices.Contains(h.leases, r.LeaseGrant.ID) {
			h.leases = append(h.leases, r.LeaseGrant.ID)
		}
	case 5:
		h.apply(Request{LeaseKeepAlive: &LeaseKeepAliveRequest{ID: h.leaseID()}})
	case 6:
		h.apply(Request{LeaseRevoke: &LeaseRevokeRequest{ID: h.leaseID()}})
	case 7:
		h.advance(time.Duration(rapid.Int64Range(0, int64(3*time.Second)).Draw(h.t, "advance")))
	case 8:
		cur, c := h.s.Revision(), h.s.CompactRevision()
		h.apply(Request{Compact: &CompactRequest{Revision: rapid.Int64Range(c, cur).Draw(h.t, "compact")}})
	case 9:
		h.checkHistory()
	}
}

// advance moves time on and expires leases, checking KV.LeaseExpiry: every
// lease whose deadline has passed goes, its keys deleted in one revision
// of their own; every other lease and its keys stay.
func (h *harness) advance(d time.Duration) {
	h.now = h.now.Add(d)
	type leaseKeys struct {
		id   int64
		keys [][]byte
	}
	var due, kept []leaseKeys
	for _, id := range h.leases {
		at, ok := h.s.LeaseDeadline(id)
		if !ok {
			continue
		}
		r, _ := h.s.Apply(h.now, Request{LeaseTimeToLive: &LeaseTimeToLiveRequest{ID: id, Keys: true}})
		lk := leaseKeys{id, r.LeaseTimeToLive.Keys}
		if at <= h.now {
			due = append(due, lk)
		} else {
			kept = append(kept, lk)
		}
	}
	before := h.s.Revision()
	if n := h.s.ExpireLeases(h.now); n != len(due) {
		h.t.Fatalf("expired %d leases, %d were due", n, len(due))
	}
	h.noteRevisions(before)
	withKeys := 0
	for _, lk := range due {
		if _, ok := h.s.LeaseDeadline(lk.id); ok {
			h.t.Fatalf("lease %d outlived its deadline", lk.id)
		}
		if len(lk.keys) > 0 {
			withKeys++
		}
		for _, k := range lk.keys {
			if _, ok := h.snaps[h.s.Revision()][string(k)]; ok {
				h.t.Fatalf("key %q of expired lease %d still there", k, lk.id)
			}
		}
	}
	if got := h.s.Revision() - before; got != int64(withKeys) {
		h.t.Fatalf("expiry took %d revisions for %d leases with keys", got, withKeys)
	}
	for _, lk := range kept {
		for _, k := range lk.keys {
			if kv, ok := h.snaps[h.s.Revision()][string(k)]; !ok || kv.Lease != lk.id {
				h.t.Fatalf("key %q of lease %d lost before its deadline", k, lk.id)
			}
		}
	}
}

// checkHistory reads a past revision and compares it with what the key
// space was then.
func (h *harness) checkHistory() {
	lo := max(h.s.CompactRevision(), 1)
	rev := rapid.Int64Range(lo, h.s.Revision()).Draw(h.t, "historical")
	if diff := cmp.Diff(h.snaps[rev], h.snapshot(rev), equate); diff != "" {
		h.t.Fatalf("range at %d differs from the key space then:\n%s", rev, diff)
	}
}

// events flattens watch responses.
func events(ws []WatchResponse) []Event {
	var out []Event
	for _, w := range ws {
		out = append(out, w.Events...)
	}
	return out
}

// finish checks the watch properties over the whole run.
func (h *harness) finish() {
	// WatchOrdered, WatchUnique, WatchAtomic, WatchReliable: one response
	// per revision that changed something, in order, each holding every
	// change of its revision and only those.
	var revs []int64
	for _, w := range h.watched {
		revs = append(revs, w.Header.Revision)
		for _, ev := range w.Events {
			if ev.Kv.ModRevision != w.Header.Revision {
				h.t.Fatalf("event of revision %d in the response for %d", ev.Kv.ModRevision, w.Header.Revision)
			}
			h.checkEvent(ev)
		}
	}
	if !slices.Equal(revs, h.bumped) {
		h.t.Fatalf("watch saw revisions %v, writes made %v", revs, h.bumped)
	}
	// WatchResumable: a watch from r sees exactly the events after r, or is
	// canceled when r is compacted.
	cur, compacted := h.s.Revision(), h.s.CompactRevision()
	from := rapid.Int64Range(compacted+1, cur+1).Draw(h.t, "resumeFrom")
	id, _ := h.s.Watch(WatchRequest{Key: []byte{0}, RangeEnd: []byte{0}, StartRevision: from, PrevKv: true})
	var resumed []WatchResponse
	for _, w := range h.s.TakeWatchResponses() {
		if w.WatchID == id && !w.Created {
			resumed = append(resumed, w)
		}
	}
	var want []Event
	for _, ev := range events(h.watched) {
		if ev.Kv.ModRevision >= from {
			want = append(want, ev)
		}
	}
	if diff := cmp.Diff(want, events(resumed), equate); diff != "" {
		h.t.Fatalf("watch resumed from %d:\n%s", from, diff)
	}
	if compacted > 1 {
		id, _ := h.s.Watch(WatchRequest{Key: []byte{0}, RangeEnd: []byte{0}, StartRevision: compacted - 1})
		ws := h.s.TakeWatchResponses()
		if len(ws) != 2 || ws[1].WatchID != id || !ws[1].Canceled || ws[1].CompactRevision != compacted {
			h.t.Fatalf("watch from a compacted revision: %+v", ws)
		}
	}
	// A clone answers like the original, and so does a fork.
	c, f := h.s.Clone(), h.s.Fork()
	req := Request{Txn: &TxnRequest{Success: []RequestOp{h.writeOp()}, Failure: []RequestOp{h.writeOp()},
		Compare: []Compare{{Key: h.key(), Target: CompareValue, Value: h.value()}}}}
	r1, e1 := h.s.Apply(h.now, req)
	r2, e2 := c.Apply(h.now, req)
	if diff := cmp.Diff(r1, r2, equate); diff != "" || e1 != e2 || h.s.Fingerprint() != c.Fingerprint() {
		h.t.Fatalf("clone answered differently: %v %v\n%s", e1, e2, diff)
	}
	r3, e3 := f.Apply(h.now, req)
	if diff := cmp.Diff(r1, r3, equate); diff != "" || e1 != e3 || h.s.Fingerprint() != f.Fingerprint() {
		h.t.Fatalf("fork answered differently: %v %v\n%s", e1, e3, diff)
	}
}

// checkEvent compares an event with the key space at its revision and,
// for its previous version, the one before.
func (h *harness) checkEvent(ev Event) {
	rev := ev.Kv.ModRevision
	now, ok := h.snaps[rev][string(ev.Kv.Key)]
	switch ev.Type {
	case EventPut:
		if !ok || !cmp.Equal(now, ev.Kv, equate) {
			h.t.Fatalf("put event %+v, key space had %+v", ev.Kv, now)
		}
	case EventDelete:
		if ok {
			h.t.Fatalf("delete event for %q, but the key is there at %d", ev.Kv.Key, rev)
		}
	}
	prev, had := h.snaps[rev-1][string(ev.Kv.Key)]
	isCreate := ev.Type == EventPut && ev.Kv.CreateRevision == rev
	switch {
	case isCreate && ev.PrevKv != nil:
		h.t.Fatalf("create event with a previous version: %+v", ev)
	case !isCreate && had != (ev.PrevKv != nil):
		h.t.Fatalf("event %+v: previous version present=%v, key space had it=%v", ev, ev.PrevKv != nil, had)
	case had && ev.PrevKv != nil && !cmp.Equal(prev, *ev.PrevKv, equate):
		h.t.Fatalf("event previous version %+v, key space had %+v", *ev.PrevKv, prev)
	}
}

// TestStoreProperties checks KV.RevisionMonotone, KV.LeaseExpiry and the
// KV.Watch* properties on random runs, and that historical reads and
// clones agree with the live store.
func TestStoreProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newHarness(t)
		for i := rapid.IntRange(1, 150).Draw(t, "steps"); i > 0; i-- {
			h.step()
		}
		h.finish()
	})
}
