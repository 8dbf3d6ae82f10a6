package simkv

import "testing"

// replayCaller applies each request to two stores, as a checker replaying
// a history on a clone of the store does, and answers with the first
// store's answer; the second store's is kept for the test.
type replayCaller struct {
	first, second *Store
	replayed      Response
}

func (c *replayCaller) call(r Request) (Response, error) {
	resp, err := c.first.Apply(0, r)
	c.replayed, _ = c.second.Apply(0, r)
	return resp, err
}

// A one-key range's answer is made with its request (typed.Range), once:
// applying the same request again answers in a fresh allocation, so the
// first answer is never overwritten.
func TestRangeRoomIsTakenOnce(t *testing.T) {
	first, second := NewStore(StoreConfig{}), NewStore(StoreConfig{})
	put(t, first, "k", "v1")
	put(t, second, "k", "v2")
	put(t, second, "k", "v3")
	c := &replayCaller{first: first, second: second}
	got, err := typed{via: c}.Range(RangeRequest{Key: b("k")})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "v1" || got.Kvs[0].Version != 1 || got.Count != 1 {
		t.Fatalf("first answer %+v, want k=v1 version 1", got)
	}
	again := c.replayed.Range
	if again == got || len(again.Kvs) != 1 || string(again.Kvs[0].Value) != "v3" || again.Kvs[0].Version != 2 {
		t.Fatalf("replayed answer %+v (first %p, replayed %p), want its own k=v3 version 2", again, got, again)
	}

	// A key the first store lacks: the room holds the empty answer, and
	// the replay's answer is its own.
	c = &replayCaller{first: NewStore(StoreConfig{}), second: second}
	got, err = typed{via: c}.Range(RangeRequest{Key: b("k")})
	if err != nil {
		t.Fatal(err)
	}
	if again := c.replayed.Range; got.Count != 0 || got.Kvs != nil || again == got || again.Count != 1 {
		t.Fatalf("answers %+v and %+v, want none and k=v3", got, again)
	}
}

// A one-key range over a Direct KV costs one allocation: request and
// answer together.
func TestOneKeyRangeIsOneAllocation(t *testing.T) {
	d := NewDirect(NewStore(StoreConfig{}), 0)
	if _, err := d.Put(PutRequest{Key: b("k"), Value: b("v")}); err != nil {
		t.Fatal(err)
	}
	key := b("k")
	allocs := testing.AllocsPerRun(100, func() {
		if r, err := d.Range(RangeRequest{Key: key}); err != nil || len(r.Kvs) != 1 {
			t.Fatalf("range: %+v, %v", r, err)
		}
	})
	if allocs != 1 {
		t.Fatalf("a one-key range allocated %v times, want 1", allocs)
	}
}

// A one-op txn's answer is made with its request (typed.Txn), once: the
// same request applied again answers in a fresh allocation.
func TestTxnRoomIsTakenOnce(t *testing.T) {
	first, second := NewStore(StoreConfig{}), NewStore(StoreConfig{})
	put(t, second, "k", "v0")
	c := &replayCaller{first: first, second: second}
	got, err := typed{via: c}.Txn(TxnRequest{
		Compare: []Compare{{Key: b("k"), Target: CompareVersion, Result: CompareEqual, Version: 0}},
		Success: []RequestOp{{Put: &PutRequest{Key: b("k"), Value: b("v1"), PrevKv: true}}},
		Failure: []RequestOp{{Range: &RangeRequest{Key: b("k")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Succeeded || len(got.Responses) != 1 || got.Responses[0].Put == nil ||
		got.Responses[0].Put.PrevKv != nil || got.Responses[0].Put.Header.Revision != 2 {
		t.Fatalf("first answer %+v, want the put's, no previous version, revision 2", got)
	}
	again := c.replayed.Txn
	if again == got || again.Succeeded || len(again.Responses) != 1 || again.Responses[0].Range == nil ||
		string(again.Responses[0].Range.Kvs[0].Value) != "v0" {
		t.Fatalf("replayed answer %+v (first %p, replayed %p), want its own failed branch reading k=v0", again, got, again)
	}
	if !got.Succeeded || got.Responses[0].Put == nil || got.Responses[0].Range != nil {
		t.Fatalf("first answer changed by the replay: %+v", got)
	}
}

// A one-put txn over a Direct KV costs, for its request and answer, one
// allocation (the put's value copy and change list are the store's).
func TestOnePutTxnAnswerSharesTheRequest(t *testing.T) {
	d := NewDirect(NewStore(StoreConfig{}), 0)
	key, value := b("k"), b("v")
	ops := []RequestOp{{Put: &PutRequest{Key: key, Value: value}}}
	txn := func() {
		if r, err := d.Txn(TxnRequest{Success: ops}); err != nil || len(r.Responses) != 1 {
			t.Fatalf("txn: %+v, %v", r, err)
		}
	}
	txn() // the key's history exists from here on
	base := testing.AllocsPerRun(100, func() {
		if _, err := d.Put(PutRequest{Key: key, Value: value}); err != nil {
			t.Fatal(err)
		}
	})
	// A top-level put allocates its request, its answer and the store's
	// part; the txn the same store's part plus one: request with answer.
	if got := testing.AllocsPerRun(100, txn); got != base-1 {
		t.Fatalf("a one-put txn allocated %v times, want %v (a put's %v less one)", got, base-1, base)
	}
}
