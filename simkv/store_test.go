package simkv

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"shardsim/simclock"
)

// The cases below pin down etcd 3.4 behaviour that the conformance test in
// realetcd/etcdconf checks against a real server; here they run without one.

func b(s string) []byte { return []byte(s) }

func mustApply(t *testing.T, s *Store, now simclock.Time, req Request) Response {
	t.Helper()
	resp, err := s.Apply(now, req)
	if err != nil {
		t.Fatalf("%s: %v", req, err)
	}
	return resp
}

func put(t *testing.T, s *Store, k, v string) *PutResponse {
	t.Helper()
	return mustApply(t, s, 0, Request{Put: &PutRequest{Key: b(k), Value: b(v)}}).Put
}

func get(t *testing.T, s *Store, r RangeRequest) *RangeResponse {
	t.Helper()
	return mustApply(t, s, 0, Request{Range: &r}).Range
}

func wantErr(t *testing.T, s *Store, req Request, want error) {
	t.Helper()
	before := s.Fingerprint()
	if _, err := s.Apply(0, req); !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", req, err, want)
	}
	if s.Fingerprint() != before {
		t.Fatalf("%s: failed request changed the store", req)
	}
}

var equate = cmpopts.EquateEmpty()

func TestRevisionsAndVersions(t *testing.T) {
	s := NewStore(StoreConfig{})
	if s.Revision() != 1 {
		t.Fatalf("fresh store at revision %d, want 1", s.Revision())
	}
	if got := put(t, s, "a", "1").Header.Revision; got != 2 {
		t.Fatalf("first put at %d, want 2", got)
	}
	put(t, s, "a", "2")
	kv := get(t, s, RangeRequest{Key: b("a")}).Kvs[0]
	want := KeyValue{Key: b("a"), Value: b("2"), CreateRevision: 2, ModRevision: 3, Version: 2}
	if diff := cmp.Diff(want, kv, equate); diff != "" {
		t.Fatal(diff)
	}
	// A delete of nothing does not move the revision; a delete does.
	r := mustApply(t, s, 0, Request{DeleteRange: &DeleteRangeRequest{Key: b("zz")}}).DeleteRange
	if r.Header.Revision != 3 || r.Deleted != 0 || s.Revision() != 3 {
		t.Fatalf("empty delete: %+v at %d", r, s.Revision())
	}
	mustApply(t, s, 0, Request{DeleteRange: &DeleteRangeRequest{Key: b("a")}})
	put(t, s, "a", "3")
	kv = get(t, s, RangeRequest{Key: b("a")}).Kvs[0]
	if kv.CreateRevision != 5 || kv.Version != 1 {
		t.Fatalf("recreated key: %+v, want create 5 version 1", kv)
	}
}

func TestRangeQuirks(t *testing.T) {
	s := NewStore(StoreConfig{})
	for _, k := range []string{"a", "b", "c", "d"} {
		put(t, s, k, "v")
	}
	put(t, s, "c", "w") // c: version 2, mod 6
	all := RangeRequest{Key: b("a"), RangeEnd: []byte{0}}
	r := get(t, s, RangeRequest{Key: b("a"), RangeEnd: []byte{0}, Limit: 2})
	if len(r.Kvs) != 2 || !r.More || r.Count != 4 {
		t.Fatalf("limit: %+v", r)
	}
	// Filters prune the kvs but not the count.
	r = get(t, s, RangeRequest{Key: b("a"), RangeEnd: []byte{0}, MinModRevision: 5})
	if len(r.Kvs) != 2 || r.Count != 4 {
		t.Fatalf("filter: %+v", r)
	}
	// A target other than key with order NONE sorts ascending, after the
	// limit+1 prefetch in key order: only a, b, c are sorted.
	r = get(t, s, RangeRequest{Key: b("a"), RangeEnd: []byte{0}, Limit: 2, SortTarget: SortByVersion})
	if string(r.Kvs[0].Key) != "a" || string(r.Kvs[1].Key) != "b" || !r.More {
		t.Fatalf("default sort: %+v", r)
	}
	r = get(t, s, RangeRequest{Key: b("a"), RangeEnd: []byte{0}, SortOrder: SortDescend, SortTarget: SortByVersion, Limit: 1})
	if string(r.Kvs[0].Key) != "c" {
		t.Fatalf("descending by version: %+v", r)
	}
	all.CountOnly = true
	if r := get(t, s, all); r.Count != 4 || len(r.Kvs) != 0 {
		t.Fatalf("count only: %+v", r)
	}
	all.CountOnly, all.KeysOnly = false, true
	if r := get(t, s, all); r.Kvs[0].Value != nil {
		t.Fatalf("keys only: %+v", r)
	}
	// Historical read, and the revision checks.
	if r := get(t, s, RangeRequest{Key: b("c"), Revision: 4}); string(r.Kvs[0].Value) != "v" || r.Header.Revision != 6 {
		t.Fatalf("historical: %+v", r)
	}
	wantErr(t, s, Request{Range: &RangeRequest{Key: b("a"), Revision: 7}}, ErrFutureRev)
	wantErr(t, s, Request{Range: &RangeRequest{}}, ErrEmptyKey)
	wantErr(t, s, Request{Range: &RangeRequest{Key: b("a"), SortTarget: 9}}, ErrInvalidSortOption)
}

func TestCompaction(t *testing.T) {
	s := NewStore(StoreConfig{})
	// etcd starts its compact revision at -1, so compacting at 0 works once.
	mustApply(t, s, 0, Request{Compact: &CompactRequest{Revision: 0}})
	wantErr(t, s, Request{Compact: &CompactRequest{Revision: 0}}, ErrCompacted)
	put(t, s, "a", "1")
	put(t, s, "a", "2")
	wantErr(t, s, Request{Compact: &CompactRequest{Revision: 4}}, ErrFutureRev)
	mustApply(t, s, 0, Request{Compact: &CompactRequest{Revision: 3}})
	wantErr(t, s, Request{Compact: &CompactRequest{Revision: 3}}, ErrCompacted)
	wantErr(t, s, Request{Range: &RangeRequest{Key: b("a"), Revision: 2}}, ErrCompacted)
	if r := get(t, s, RangeRequest{Key: b("a"), Revision: 3}); string(r.Kvs[0].Value) != "2" {
		t.Fatalf("read at the compact revision: %+v", r)
	}
	// Inside a txn a negative revision is checked against the compaction.
	wantErr(t, s, Request{Txn: &TxnRequest{Success: []RequestOp{{Range: &RangeRequest{Key: b("a"), Revision: -1}}}}}, ErrCompacted)
}

func TestTxnSemantics(t *testing.T) {
	s := NewStore(StoreConfig{})
	put(t, s, "a", "1") // rev 2
	// A nested txn's compares see the state before the outer txn: a is
	// still "1" although the outer txn changed it first.
	txn := &TxnRequest{
		Compare: []Compare{{Key: b("a"), Target: CompareValue, Result: CompareEqual, Value: b("1")}},
		Success: []RequestOp{
			{Put: &PutRequest{Key: b("a"), Value: b("2")}},
			{Txn: &TxnRequest{
				Compare: []Compare{{Key: b("a"), Target: CompareValue, Result: CompareEqual, Value: b("1")}},
				Success: []RequestOp{{Range: &RangeRequest{Key: b("a")}}},
			}},
		},
	}
	r := mustApply(t, s, 0, Request{Txn: txn}).Txn
	nested := r.Responses[1].Txn
	if !r.Succeeded || r.Header.Revision != 3 || !nested.Succeeded || nested.Header.Revision != 0 {
		t.Fatalf("nested txn: %+v / %+v", r, nested)
	}
	if got := nested.Responses[0].Range; string(got.Kvs[0].Value) != "2" || got.Header.Revision != 3 {
		t.Fatalf("range inside the txn sees its writes: %+v", got)
	}
	// A txn that writes nothing keeps the revision.
	r = mustApply(t, s, 0, Request{Txn: &TxnRequest{Success: []RequestOp{{DeleteRange: &DeleteRangeRequest{Key: b("x")}}}}}).Txn
	if r.Header.Revision != 3 || s.Revision() != 3 {
		t.Fatalf("no-op txn moved the revision: %+v", r)
	}
	// Compares over a range: every key must hold; missing keys compare as
	// zero, except for values.
	put(t, s, "b", "1")
	rangeCmp := Compare{Key: b("a"), RangeEnd: b("c"), Target: CompareVersion, Result: CompareGreater, Version: 0}
	if !compareHolds(rangeCmp, get(t, s, RangeRequest{Key: b("a"), RangeEnd: b("c")}).Kvs) {
		t.Fatal("range compare")
	}
	if compareHolds(Compare{Key: b("zz"), Target: CompareValue, Result: CompareEqual}, nil) ||
		!compareHolds(Compare{Key: b("zz"), Target: CompareVersion, Result: CompareEqual}, nil) {
		t.Fatal("missing key compares")
	}
}

func TestTxnRejections(t *testing.T) {
	s := NewStore(StoreConfig{MaxTxnOps: 4})
	put(t, s, "a", "1")
	p := func(k string) RequestOp { return RequestOp{Put: &PutRequest{Key: b(k)}} }
	d := func(k, end string) RequestOp {
		return RequestOp{DeleteRange: &DeleteRangeRequest{Key: b(k), RangeEnd: []byte(end)}}
	}
	txn := func(ops ...RequestOp) Request { return Request{Txn: &TxnRequest{Success: ops}} }
	wantErr(t, s, txn(p("a"), p("a")), ErrDuplicateKey)
	wantErr(t, s, txn(d("a", "c"), p("b")), ErrDuplicateKey)
	wantErr(t, s, txn(p("b"), RequestOp{Txn: &TxnRequest{Failure: []RequestOp{p("b")}}}), ErrDuplicateKey)
	wantErr(t, s, txn(p("a"), p("b"), p("c"), p("d"), p("e")), ErrTooManyOps)
	// A nested txn gets the budget its parent leaves: 4 - 2.
	wantErr(t, s, txn(p("a"), RequestOp{Txn: &TxnRequest{Success: []RequestOp{p("b"), p("c"), p("d")}}}), ErrTooManyOps)
	wantErr(t, s, txn(RequestOp{}), ErrKeyNotFound)
	wantErr(t, s, txn(RequestOp{Put: &PutRequest{Key: b("q"), IgnoreValue: true}}), ErrKeyNotFound)
	wantErr(t, s, txn(RequestOp{Put: &PutRequest{Key: b("a"), Lease: 9}}), ErrLeaseNotFound)
	// The one txn etcd 3.4 accepts and then crashes on.
	wantErr(t, s, txn(d("a", "\x00"), RequestOp{Put: &PutRequest{Key: b("a"), IgnoreValue: true}}), ErrTxnWouldCrash)
	// Allowed: the same key in both branches of a nested txn, and a from-key
	// delete next to a put (etcd does not see the overlap).
	mustApply(t, s, 0, txn(RequestOp{Txn: &TxnRequest{Success: []RequestOp{p("x")}, Failure: []RequestOp{p("x")}}}))
	r := mustApply(t, s, 0, txn(p("a"), d("a", "\x00"))).Txn
	if s.Revision() != 4 || len(get(t, s, RangeRequest{Key: b("a")}).Kvs) != 0 || r.Responses[1].DeleteRange.Deleted != 2 {
		t.Fatalf("put then from-key delete: %+v", r)
	}
}

func TestPutOptions(t *testing.T) {
	s := NewStore(StoreConfig{})
	lg := mustApply(t, s, 0, Request{LeaseGrant: &LeaseGrantRequest{ID: 7, TTL: 60}}).LeaseGrant
	mustApply(t, s, 0, Request{Put: &PutRequest{Key: b("a"), Value: b("1"), Lease: lg.ID}})
	r := mustApply(t, s, 0, Request{Put: &PutRequest{Key: b("a"), Value: b("2"), IgnoreLease: true, PrevKv: true}}).Put
	if r.PrevKv == nil || string(r.PrevKv.Value) != "1" {
		t.Fatalf("prev kv: %+v", r)
	}
	mustApply(t, s, 0, Request{Put: &PutRequest{Key: b("a"), IgnoreValue: true}})
	kv := get(t, s, RangeRequest{Key: b("a")}).Kvs[0]
	// ignore_value alone keeps the value but not the lease.
	if string(kv.Value) != "2" || kv.Lease != 0 || kv.Version != 3 {
		t.Fatalf("ignore_value/ignore_lease: %+v", kv)
	}
	wantErr(t, s, Request{Put: &PutRequest{Key: b("a"), Value: b("x"), IgnoreValue: true}}, ErrValueProvided)
	wantErr(t, s, Request{Put: &PutRequest{Key: b("a"), Lease: 7, IgnoreLease: true}}, ErrLeaseProvided)
	wantErr(t, s, Request{Put: &PutRequest{Key: b("zz"), IgnoreValue: true}}, ErrKeyNotFound)
	// A missing lease is reported before a missing key.
	wantErr(t, s, Request{Put: &PutRequest{Key: b("zz"), IgnoreValue: true, Lease: 99}}, ErrLeaseNotFound)
	wantErr(t, s, Request{Put: &PutRequest{Value: b("x")}}, ErrEmptyKey)
	wantErr(t, s, Request{}, ErrInvalidRequest)
}

func TestLeases(t *testing.T) {
	s := NewStore(StoreConfig{})
	sec := simclock.Time(time.Second)
	g := mustApply(t, s, 0, Request{LeaseGrant: &LeaseGrantRequest{ID: 1, TTL: 1}}).LeaseGrant
	if g.TTL != DefaultMinLeaseTTL {
		t.Fatalf("TTL below the minimum granted as %d", g.TTL)
	}
	wantErr(t, s, Request{LeaseGrant: &LeaseGrantRequest{ID: 1, TTL: 10}}, ErrLeaseExist)
	wantErr(t, s, Request{LeaseGrant: &LeaseGrantRequest{ID: 2, TTL: MaxLeaseTTL + 1}}, ErrLeaseTTLTooLarge)
	mustApply(t, s, 0, Request{Put: &PutRequest{Key: b("k2"), Lease: 1}})
	mustApply(t, s, 0, Request{Put: &PutRequest{Key: b("k1"), Lease: 1}})
	ttl := mustApply(t, s, sec/2, Request{LeaseTimeToLive: &LeaseTimeToLiveRequest{ID: 1, Keys: true}}).LeaseTimeToLive
	want := &LeaseTimeToLiveResponse{Header: ResponseHeader{Revision: 3}, ID: 1, TTL: 1, GrantedTTL: 2, Keys: [][]byte{b("k1"), b("k2")}}
	if diff := cmp.Diff(want, ttl, equate); diff != "" {
		t.Fatal(diff)
	}
	if r := mustApply(t, s, 0, Request{LeaseTimeToLive: &LeaseTimeToLiveRequest{ID: 5}}).LeaseTimeToLive; r.TTL != -1 {
		t.Fatalf("missing lease TTL: %+v", r)
	}
	if r := mustApply(t, s, 0, Request{LeaseKeepAlive: &LeaseKeepAliveRequest{ID: 5}}).LeaseKeepAlive; r.TTL != 0 || r.ID != 5 {
		t.Fatalf("missing lease keep-alive: %+v", r)
	}
	// Keep-alive at 1s moves the deadline to 3s.
	mustApply(t, s, sec, Request{LeaseKeepAlive: &LeaseKeepAliveRequest{ID: 1}})
	if at, _ := s.NextLeaseDeadline(); at != 3*sec {
		t.Fatalf("deadline %v, want 3s", at)
	}
	if n := s.ExpireLeases(3*sec - 1); n != 0 || s.Revision() != 3 {
		t.Fatal("lease expired before its deadline")
	}
	id, _ := s.Watch(WatchRequest{Key: b("k"), RangeEnd: b("l")})
	if n := s.ExpireLeases(3 * sec); n != 1 || s.Revision() != 4 {
		t.Fatalf("expiry: %d leases, revision %d", n, s.Revision())
	}
	ws := s.TakeWatchResponses()
	if len(ws) != 2 || ws[1].WatchID != id || len(ws[1].Events) != 2 ||
		string(ws[1].Events[0].Kv.Key) != "k1" || ws[1].Events[0].Type != EventDelete {
		t.Fatalf("expiry events: %+v", ws)
	}
	if _, ok := s.NextLeaseDeadline(); ok {
		t.Fatal("expired lease still there")
	}
	wantErr(t, s, Request{LeaseRevoke: &LeaseRevokeRequest{ID: 1}}, ErrLeaseNotFound)
}

func TestWatch(t *testing.T) {
	s := NewStore(StoreConfig{})
	put(t, s, "a", "1")                                                        // 2
	put(t, s, "b", "1")                                                        // 3
	mustApply(t, s, 0, Request{DeleteRange: &DeleteRangeRequest{Key: b("a")}}) // 4
	put(t, s, "a", "2")                                                        // 5
	id, err := s.Watch(WatchRequest{Key: b("a"), StartRevision: 2, PrevKv: true})
	if err != nil || id != 0 {
		t.Fatal(id, err)
	}
	ws := s.TakeWatchResponses()
	want := []WatchResponse{
		{Header: ResponseHeader{Revision: 5}, WatchID: 0, Created: true},
		{Header: ResponseHeader{Revision: 5}, WatchID: 0, Events: []Event{
			{Type: EventPut, Kv: KeyValue{Key: b("a"), Value: b("1"), CreateRevision: 2, ModRevision: 2, Version: 1}},
			{Type: EventDelete, Kv: KeyValue{Key: b("a"), ModRevision: 4},
				PrevKv: &KeyValue{Key: b("a"), Value: b("1"), CreateRevision: 2, ModRevision: 2, Version: 1}},
			{Type: EventPut, Kv: KeyValue{Key: b("a"), Value: b("2"), CreateRevision: 5, ModRevision: 5, Version: 1}},
		}},
	}
	if diff := cmp.Diff(want, ws, equate); diff != "" {
		t.Fatal(diff)
	}
	// Filters, and a future start revision.
	s.Watch(WatchRequest{Key: b("a"), RangeEnd: b("c"), Filters: []WatchFilter{FilterNoPut}})
	s.Watch(WatchRequest{Key: b("a"), StartRevision: 7})
	s.TakeWatchResponses()
	mustApply(t, s, 0, Request{DeleteRange: &DeleteRangeRequest{Key: b("a"), RangeEnd: b("c")}}) // 6
	put(t, s, "a", "3")                                                                          // 7
	ws = s.TakeWatchResponses()
	var got []string
	for _, w := range ws {
		got = append(got, fmt.Sprintf("%d@%dx%d", w.WatchID, w.Header.Revision, len(w.Events)))
	}
	if diff := cmp.Diff([]string{"0@6x1", "1@6x2", "0@7x1", "2@7x1"}, got); diff != "" {
		t.Fatal(diff)
	}
	// Compaction cancels a watch that starts below it.
	mustApply(t, s, 0, Request{Compact: &CompactRequest{Revision: 6}})
	id, _ = s.Watch(WatchRequest{Key: b("a"), StartRevision: 5})
	ws = s.TakeWatchResponses()
	if len(ws) != 2 || !ws[1].Canceled || ws[1].CompactRevision != 6 || ws[1].WatchID != id {
		t.Fatalf("compacted watch: %+v", ws)
	}
	// At the compact revision itself etcd has dropped that revision's deletes.
	s.Watch(WatchRequest{Key: b("a"), RangeEnd: b("c"), StartRevision: 6})
	if ws = s.TakeWatchResponses(); len(ws) != 2 || len(ws[1].Events) != 1 || ws[1].Events[0].Kv.ModRevision != 7 {
		t.Fatalf("watch from the compact revision: %+v", ws)
	}
	if _, err := s.Watch(WatchRequest{Key: b("b"), RangeEnd: b("a")}); !errors.Is(err, ErrEmptyWatcherRange) {
		t.Fatal(err)
	}
	if ws = s.TakeWatchResponses(); len(ws) != 1 || ws[0].WatchID != -1 || !ws[0].Canceled {
		t.Fatalf("empty range: %+v", ws)
	}
	if !s.CancelWatch(0) || s.CancelWatch(0) {
		t.Fatal("cancel")
	}
}

func TestCloneIsIndependent(t *testing.T) {
	s := NewStore(StoreConfig{})
	put(t, s, "a", "1")
	mustApply(t, s, 0, Request{LeaseGrant: &LeaseGrantRequest{ID: 3, TTL: 10}})
	c := s.Clone()
	if c.Fingerprint() != s.Fingerprint() {
		t.Fatal("clone differs")
	}
	put(t, c, "a", "2")
	mustApply(t, c, 0, Request{Put: &PutRequest{Key: b("b"), Lease: 3}})
	if string(get(t, s, RangeRequest{Key: b("a")}).Kvs[0].Value) != "1" || s.Revision() != 2 {
		t.Fatal("write to the clone reached the original")
	}
	if r := mustApply(t, s, 0, Request{LeaseTimeToLive: &LeaseTimeToLiveRequest{ID: 3, Keys: true}}).LeaseTimeToLive; len(r.Keys) != 0 {
		t.Fatal("lease attachment leaked from the clone")
	}
	put(t, s, "a", "2")
	mustApply(t, s, 0, Request{Put: &PutRequest{Key: b("b"), Lease: 3}})
	if c.Fingerprint() != s.Fingerprint() {
		t.Fatal("same writes, different fingerprints")
	}
}

// leasedStore returns the store TestCloneIsCopyOnWrite and
// TestForkIsIndependent copy and change: key a written twice, and key b
// attached to lease 3.
func leasedStore(t *testing.T) *Store {
	t.Helper()
	s := NewStore(StoreConfig{})
	put(t, s, "a", "1")
	put(t, s, "a", "2")
	mustApply(t, s, 0, Request{LeaseGrant: &LeaseGrantRequest{ID: 3, TTL: 10}})
	mustApply(t, s, 0, Request{Put: &PutRequest{Key: b("b"), Value: b("x"), Lease: 3}})
	return s
}

// Clone shares the key index and the leases copy-on-write: every kind of
// change, on either side, must leave the other side as it was.
func TestCloneIsCopyOnWrite(t *testing.T) {
	changes := map[string]func(s *Store){
		"put":    func(s *Store) { s.Apply(0, Request{Put: &PutRequest{Key: b("a"), Value: b("9")}}) },
		"delete": func(s *Store) { s.Apply(0, Request{DeleteRange: &DeleteRangeRequest{Key: b("a")}}) },
		"attach": func(s *Store) { s.Apply(0, Request{Put: &PutRequest{Key: b("c"), Lease: 3}}) },
		"detach": func(s *Store) { s.Apply(0, Request{DeleteRange: &DeleteRangeRequest{Key: b("b")}}) },
		"grant":  func(s *Store) { s.Apply(0, Request{LeaseGrant: &LeaseGrantRequest{ID: 4, TTL: 10}}) },
		"revoke": func(s *Store) { s.Apply(0, Request{LeaseRevoke: &LeaseRevokeRequest{ID: 3}}) },
		"keepalive": func(s *Store) {
			s.Apply(simclock.Time(time.Second), Request{LeaseKeepAlive: &LeaseKeepAliveRequest{ID: 3}})
		},
		"refresh": func(s *Store) { s.RefreshLeases(simclock.Time(5 * time.Second)) },
		"expire":  func(s *Store) { s.ExpireLeases(simclock.Time(time.Hour)) },
		"compact": func(s *Store) { s.Apply(0, Request{Compact: &CompactRequest{Revision: 3}}) },
	}
	for name, change := range changes {
		for _, side := range []string{"original", "clone"} {
			s := leasedStore(t)
			c := s.Clone()
			changed, other := s, c
			if side == "clone" {
				changed, other = c, s
			}
			before := other.Fingerprint()
			change(changed)
			if changed.Fingerprint() == before {
				t.Fatalf("%s on the %s changed nothing: the test shows nothing", name, side)
			}
			if other.Fingerprint() != before {
				t.Fatalf("%s on the %s reached the other side", name, side)
			}
		}
	}
}

// Fork is Clone for a template: a change on either side leaves the other
// as it was (a fork shares the template's histories and watch log, never
// their arrays' spare room), and the same change on both ends the same.
func TestForkIsIndependent(t *testing.T) {
	changes := map[string]func(s *Store){
		"put":     func(s *Store) { s.Apply(0, Request{Put: &PutRequest{Key: b("a"), Value: b("9")}}) },
		"new key": func(s *Store) { s.Apply(0, Request{Put: &PutRequest{Key: b("aa"), Value: b("9")}}) },
		"delete":  func(s *Store) { s.Apply(0, Request{DeleteRange: &DeleteRangeRequest{Key: b("a")}}) },
		"attach":  func(s *Store) { s.Apply(0, Request{Put: &PutRequest{Key: b("c"), Lease: 3}}) },
		"detach":  func(s *Store) { s.Apply(0, Request{DeleteRange: &DeleteRangeRequest{Key: b("b")}}) },
		"grant":   func(s *Store) { s.Apply(0, Request{LeaseGrant: &LeaseGrantRequest{ID: 4, TTL: 10}}) },
		"revoke":  func(s *Store) { s.Apply(0, Request{LeaseRevoke: &LeaseRevokeRequest{ID: 3}}) },
		"refresh": func(s *Store) { s.RefreshLeases(simclock.Time(5 * time.Second)) },
		"compact": func(s *Store) { s.Apply(0, Request{Compact: &CompactRequest{Revision: 3}}) },
	}
	// state is what decides a store's answers, and its watch log as a
	// catch-up watch from the start reads it (on a fork, so that the
	// watch changes nothing: a Clone would mark s copy-on-write itself and
	// so protect the two sides whatever Fork does).
	state := func(s *Store) string {
		c := s.Fork()
		c.Watch(WatchRequest{Key: []byte{0}, RangeEnd: []byte{0}, StartRevision: 1})
		return fmt.Sprintf("%x %v", s.Fingerprint(), c.TakeWatchResponses())
	}
	for name, change := range changes {
		for _, side := range []string{"template", "fork"} {
			s := leasedStore(t)
			f := s.Fork()
			if state(f) != state(s) {
				t.Fatal("fork differs")
			}
			changed, other := s, f
			if side == "fork" {
				changed, other = f, s
			}
			before := state(other)
			change(changed)
			if state(changed) == before {
				t.Fatalf("%s on the %s changed nothing: the test shows nothing", name, side)
			}
			if state(other) != before {
				t.Fatalf("%s on the %s reached the other side", name, side)
			}
			change(other)
			if state(other) != state(changed) {
				t.Fatalf("%s: template and fork differ after the same change", name)
			}
		}
	}
}

// Forks of one template made and written by goroutines at once do not
// touch the template or one another (-race shows any shared write).
func TestForkConcurrently(t *testing.T) {
	s := NewStore(StoreConfig{})
	for i := 0; i < 5; i++ {
		put(t, s, fmt.Sprintf("k%d", i), "v")
	}
	want := s.Fingerprint()
	// What makes it safe, seen directly (a plain run seldom shows a race):
	// the fork appends into none of the template's arrays.
	f := s.Fork()
	for k, h := range f.ks.hist {
		if h.tail != nil {
			t.Fatalf("the fork's history of %q appends into the template's array", k)
		}
	}
	if f.logTail != nil || cap(f.log) != len(f.log) {
		t.Fatal("the fork's watch log appends into the template's array")
	}
	// Nor may a reader's append to a key or value it read: they have no
	// spare room.
	for _, kv := range get(t, f, RangeRequest{Key: b("k"), RangeEnd: b("l")}).Kvs {
		if cap(kv.Key) != len(kv.Key) || cap(kv.Value) != len(kv.Value) {
			t.Fatalf("%q=%q has spare room a reader's append would write into", kv.Key, kv.Value)
		}
	}
	done := make(chan string)
	for g := 0; g < 4; g++ {
		go func() {
			f := s.Fork()
			for i := 0; i < 50; i++ {
				f.Apply(0, Request{Put: &PutRequest{Key: b(fmt.Sprintf("k%d", i%7)), Value: b(fmt.Sprint(g, i))}})
			}
			f.Apply(0, Request{Compact: &CompactRequest{Revision: 20}})
			done <- f.Fingerprint()
		}()
	}
	var got []string
	for g := 0; g < 4; g++ {
		got = append(got, <-done)
	}
	if s.Fingerprint() != want {
		t.Fatal("the forks' writes reached the template")
	}
	for _, fp := range got[1:] {
		if fp == got[0] {
			t.Fatal("two forks wrote different values and ended the same: the test shows nothing")
		}
	}
}

func TestStrings(t *testing.T) {
	req := Request{Txn: &TxnRequest{
		Compare: []Compare{{Key: b("k"), Target: CompareMod, Result: CompareLess, ModRevision: 4}},
		Success: []RequestOp{{Put: &PutRequest{Key: b("k"), Value: b("v"), PrevKv: true}}},
		Failure: []RequestOp{{Range: &RangeRequest{Key: b("k"), RangeEnd: []byte{0}, Limit: 1}}},
	}}
	if got, want := req.String(), `txn(if(cmp(mod "k" < 4)) then(put("k" "v" prev)) else(range("k" end=0x00 limit=1)))`; got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if !req.IsWrite() || (Request{Txn: &TxnRequest{Success: []RequestOp{{Range: &RangeRequest{}}}}}).IsWrite() {
		t.Fatal("IsWrite")
	}
	s := NewStore(StoreConfig{})
	resp := mustApply(t, s, 0, req)
	if got, want := resp.String(), `rev=2 then(resp(rev=2))`; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

// TestWatchEventsShareTheLog checks the sharing of logged events with the
// watchers that take a whole revision: what a watcher got stays as it was
// whatever the store does after (more writes to the same keys, a watcher
// with PrevKv, compaction), and a later catch-up watch still reads the
// revision as logged. That a holder's append cannot reach the log is
// TestSharedWatchEventsHaveNoRoom's (a txn's events here are sized
// exactly, so an append here copies whatever the store does).
func TestWatchEventsShareTheLog(t *testing.T) {
	s := NewStore(StoreConfig{})
	all, _ := s.Watch(WatchRequest{Key: b("a"), RangeEnd: b("z")})                    // takes whole revisions: shared
	justA, _ := s.Watch(WatchRequest{Key: b("a")})                                    // takes part of the txn: a copy
	withPrev, _ := s.Watch(WatchRequest{Key: b("a"), RangeEnd: b("z"), PrevKv: true}) // a copy with PrevKv
	s.TakeWatchResponses()
	put(t, s, "a", "0")                                               // 2
	mustApply(t, s, 0, Request{Txn: &TxnRequest{Success: []RequestOp{ // 3
		{Put: &PutRequest{Key: b("a"), Value: b("1")}}, {Put: &PutRequest{Key: b("b"), Value: b("1")}}}}})
	got := map[int64][]Event{}
	for _, r := range s.TakeWatchResponses() {
		if r.Header.Revision == 3 {
			got[r.WatchID] = r.Events
		}
	}
	wantAll := []Event{
		{Type: EventPut, Kv: KeyValue{Key: b("a"), Value: b("1"), CreateRevision: 2, ModRevision: 3, Version: 2}},
		{Type: EventPut, Kv: KeyValue{Key: b("b"), Value: b("1"), CreateRevision: 3, ModRevision: 3, Version: 1}},
	}
	if diff := cmp.Diff(wantAll, got[all], equate); diff != "" {
		t.Fatal(diff)
	}
	if diff := cmp.Diff(wantAll[:1], got[justA], equate); diff != "" {
		t.Fatal(diff)
	}
	if p := got[withPrev][0].PrevKv; p == nil || string(p.Value) != "0" || got[withPrev][1].PrevKv != nil {
		t.Fatalf("PrevKv: %+v", got[withPrev])
	}
	// The store writes on and compacts.
	mustApply(t, s, 0, Request{DeleteRange: &DeleteRangeRequest{Key: b("a"), RangeEnd: b("z")}}) // 4
	put(t, s, "b", "2")                                                                          // 5
	mustApply(t, s, 0, Request{Compact: &CompactRequest{Revision: 2}})
	s.TakeWatchResponses()
	if diff := cmp.Diff(wantAll, got[all], equate); diff != "" {
		t.Fatalf("delivered events changed: %s", diff)
	}
	s.Watch(WatchRequest{Key: b("a"), RangeEnd: b("z"), StartRevision: 3})
	ws := s.TakeWatchResponses()
	if len(ws) != 2 || len(ws[1].Events) != 5 {
		t.Fatalf("catch-up from 3: %+v", ws)
	}
	if diff := cmp.Diff(wantAll, ws[1].Events[:2], equate); diff != "" {
		t.Fatalf("logged revision 3 changed: %s", diff)
	}
}

// TestTakeWatchResponsesReusesArrays checks the server's way of taking
// watch responses: each answer holds exactly the responses since the last
// take, in order, and a steady stream of them allocates nothing.
func TestTakeWatchResponsesReusesArrays(t *testing.T) {
	s := NewStore(StoreConfig{})
	s.Watch(WatchRequest{Key: b("a"), RangeEnd: b("z")})
	if got := s.takeWatchResponses(); len(got) != 1 || !got[0].Created {
		t.Fatalf("created: %+v", got)
	}
	for i := 0; i < 4; i++ {
		put(t, s, "a", "v")
		put(t, s, "b", "v")
		got := s.takeWatchResponses()
		if len(got) != 2 || got[0].Header.Revision != s.Revision()-1 || got[1].Header.Revision != s.Revision() ||
			string(got[0].Events[0].Kv.Key) != "a" || string(got[1].Events[0].Kv.Key) != "b" {
			t.Fatalf("take %d: %+v", i, got)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		s.queue(WatchResponse{WatchID: 7})
		s.queue(WatchResponse{WatchID: 8})
		if got := s.takeWatchResponses(); len(got) != 2 || got[0].WatchID != 7 || got[1].WatchID != 8 {
			t.Fatalf("take: %+v", got)
		}
	})
	if allocs != 0 {
		t.Fatalf("a take with reused arrays allocated %v times", allocs)
	}
}

// A watcher that takes a whole revision gets the logged events with no
// room past them, so its holder's append copies instead of writing into
// the log: checked on a range delete, whose logged list grows by appends
// (a txn's is sized exactly, so it would pass without the cap).
func TestSharedWatchEventsHaveNoRoom(t *testing.T) {
	s := NewStore(StoreConfig{})
	all, _ := s.Watch(WatchRequest{Key: b("a"), RangeEnd: b("z")})
	for _, k := range []string{"a", "b", "c"} {
		put(t, s, k, "1")
	}
	s.TakeWatchResponses()
	mustApply(t, s, 0, Request{DeleteRange: &DeleteRangeRequest{Key: b("a"), RangeEnd: b("z")}})
	var got []Event
	for _, r := range s.TakeWatchResponses() {
		if r.WatchID == all {
			got = r.Events
		}
	}
	if len(got) != 3 {
		t.Fatalf("the delete's events: %+v", got)
	}
	if cap(got) != len(got) {
		t.Fatalf("the delivered events have room for %d, want exactly their %d", cap(got), len(got))
	}
}
