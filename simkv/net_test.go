package simkv

import (
	"errors"
	"testing"
	"time"

	"shardsim/simclock"
)

// fn adapts a function to simclock.Actor.
type fn func(*simclock.Context, any)

func (f fn) Receive(ctx *simclock.Context, msg any) { f(ctx, msg) }

// oneCall runs a single put through a server with the given faults and
// returns the client's error and whether the store applied it.
func oneCall(t *testing.T, faults FaultConfig) (error, bool) {
	t.Helper()
	loop := simclock.NewLoop(nil, simclock.Budget{MaxTime: simclock.Time(time.Minute)})
	store := NewStore(StoreConfig{})
	server := NewServer(loop, store, faults, simclock.NewSeeded(1))
	var got error
	answered := false
	loop.Spawn("c", fn(func(ctx *simclock.Context, msg any) {
		if _, ok := msg.(simclock.Started); !ok {
			return
		}
		server.Connect(ctx.Self()).Do(ctx, Request{Put: &PutRequest{Key: []byte("k"), Value: []byte("v")}},
			func(_ *simclock.Context, _ Response, err error) { got, answered = err, true })
	}), nil, nil)
	loop.Run()
	if !answered {
		t.Fatal("the client never got an answer")
	}
	return got, store.Revision() == 2
}

func TestServerFates(t *testing.T) {
	base := DefaultFaults()
	err, applied := oneCall(t, base)
	if err != nil || !applied {
		t.Fatalf("quiet network: err=%v applied=%v", err, applied)
	}
	lost := base
	lost.LoseRequest = 1
	if err, applied := oneCall(t, lost); !errors.Is(err, ErrDeadlineExceeded) || applied {
		t.Fatalf("lost request: err=%v applied=%v, want deadline and not applied", err, applied)
	}
	ambiguous := base
	ambiguous.LoseResponse = 1
	if err, applied := oneCall(t, ambiguous); !errors.Is(err, ErrDeadlineExceeded) || !applied {
		t.Fatalf("lost answer: err=%v applied=%v, want deadline and applied", err, applied)
	}
	slow := base
	slow.Delay, slow.MaxDelay, slow.Timeout = 1, 10*time.Second, 100*time.Millisecond
	// A request delayed past the deadline may still apply after the client
	// gave up; with this seed the delay is long.
	if err, _ := oneCall(t, slow); !IsIndeterminate(err) {
		t.Fatalf("delayed request: err=%v, want an indeterminate error", err)
	}
}

func TestPartitionRefusesAndLeaderChangeIsAmbiguous(t *testing.T) {
	loop := simclock.NewLoop(nil, simclock.Budget{MaxTime: simclock.Time(time.Minute)})
	store := NewStore(StoreConfig{})
	server := NewServer(loop, store, DefaultFaults(), simclock.NewSeeded(2))
	var errs []error
	var id simclock.ActorID
	id = loop.Spawn("c", fn(func(ctx *simclock.Context, msg any) {
		if _, ok := msg.(simclock.Started); !ok {
			return
		}
		client := server.Connect(ctx.Self())
		ctx.Go("w", func(tk *simclock.Task) {
			server.Partition(id)
			_, err := client.Call(tk, Request{Put: &PutRequest{Key: []byte("a"), Value: []byte("1")}})
			errs = append(errs, err)
			server.Heal(id)
			// The leader changes while this request is in flight.
			tk.Context().Loop().After(50*time.Microsecond, func() { server.LeaderChange(time.Second) })
			_, err = client.Call(tk, Request{Put: &PutRequest{Key: []byte("b"), Value: []byte("2")}})
			errs = append(errs, err)
		})
	}), nil, nil)
	loop.Run()
	if len(errs) != 2 || !errors.Is(errs[0], ErrUnavailable) || !errors.Is(errs[1], ErrLeaderChanged) {
		t.Fatalf("errors %v, want [unavailable, leader changed]", errs)
	}
	if store.Revision() > 2 {
		t.Fatalf("the refused request was applied (revision %d)", store.Revision())
	}
	if st := server.Stats(); st.Refused != 1 || st.LeaderChanges != 1 || st.Indeterminate != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestLeaseExpiresOnVirtualTime(t *testing.T) {
	loop := simclock.NewLoop(nil, simclock.Budget{})
	store := NewStore(StoreConfig{})
	server := NewServer(loop, store, DefaultFaults(), nil)
	loop.Spawn("c", fn(func(ctx *simclock.Context, msg any) {
		if _, ok := msg.(simclock.Started); !ok {
			return
		}
		kv := server.Connect(ctx.Self())
		ctx.Go("w", func(tk *simclock.Task) {
			k := kv.In(tk)
			if _, err := k.LeaseGrant(LeaseGrantRequest{ID: 5, TTL: 3}); err != nil {
				t.Error(err)
			}
			if _, err := k.Put(PutRequest{Key: []byte("x"), Value: []byte("y"), Lease: 5}); err != nil {
				t.Error(err)
			}
		})
	}), nil, nil)
	loop.RunUntil(simclock.Time(2900 * time.Millisecond))
	if store.Revision() != 2 {
		t.Fatalf("lease expired early: revision %d", store.Revision())
	}
	loop.Run()
	if store.Revision() != 3 || server.Stats().Expired != 1 {
		t.Fatalf("lease did not expire: revision %d, stats %+v", store.Revision(), server.Stats())
	}
	if loop.Now() < simclock.Time(3*time.Second) {
		t.Fatalf("expired at %v, before the TTL", loop.Now())
	}
}

func TestWatchStreamIsOrderedAndBreaksOnPartition(t *testing.T) {
	loop := simclock.NewLoop(nil, simclock.Budget{MaxTime: simclock.Time(time.Minute)})
	store := NewStore(StoreConfig{})
	faults := DefaultFaults()
	faults.MaxLatency = 50 * time.Millisecond // every message draws its own latency
	server := NewServer(loop, store, faults, simclock.NewSeeded(3))
	var revs []int64
	var broke error
	var watcher simclock.ActorID
	watcher = loop.Spawn("w", fn(func(ctx *simclock.Context, msg any) {
		if _, ok := msg.(simclock.Started); ok {
			server.Connect(ctx.Self()).Watch(ctx, WatchRequest{Key: []byte("a"), RangeEnd: []byte("b"), StartRevision: 1},
				func(_ *simclock.Context, r WatchResponse) {
					for _, e := range r.Events {
						revs = append(revs, e.Kv.ModRevision)
					}
				},
				func(_ *simclock.Context, err error) { broke = err })
		}
	}), nil, nil)
	for i := 0; i < 20; i++ {
		loop.At(simclock.Time(time.Duration(i)*time.Millisecond), func() {
			store.Apply(loop.Now(), Request{Put: &PutRequest{Key: []byte("a"), Value: []byte{byte(i)}}})
			server.afterApply()
		})
	}
	loop.At(simclock.Time(time.Second), func() { server.Partition(watcher) })
	loop.Run()
	if len(revs) != 20 {
		t.Fatalf("got %d events, want 20", len(revs))
	}
	for i := 1; i < len(revs); i++ {
		if revs[i] <= revs[i-1] {
			t.Fatalf("events out of order: %v", revs)
		}
	}
	if !errors.Is(broke, ErrUnavailable) {
		t.Fatalf("partition did not break the stream: %v", broke)
	}
}

// TestWatchSplitTxnKeepsTheLog checks that the WatchSplitTxn mutation,
// which splits a revision's events into two responses, hands out parts a
// holder cannot grow into the store's watch log: the events a watcher
// takes whole are the log's own (Store.filter), so the first part's
// spare capacity was the log's second event.
func TestWatchSplitTxnKeepsTheLog(t *testing.T) {
	loop := simclock.NewLoop(nil, simclock.Budget{})
	defer loop.Close()
	store := NewStore(StoreConfig{})
	server := NewServer(loop, store, DefaultFaults(), simclock.NewSeeded(1))
	server.SetMutation(WatchSplitTxn)
	if _, err := store.Watch(WatchRequest{Key: b("a"), RangeEnd: b("z")}); err != nil {
		t.Fatal(err)
	}
	store.TakeWatchResponses()
	mustApply(t, store, 0, Request{Txn: &TxnRequest{Success: []RequestOp{
		{Put: &PutRequest{Key: b("a"), Value: b("1")}}, {Put: &PutRequest{Key: b("b"), Value: b("1")}}}}})
	out := server.mutateWatch(store.takeWatchResponses())
	if len(out) != 2 || len(out[0].Events) != 1 || len(out[1].Events) != 1 {
		t.Fatalf("split: %+v", out)
	}
	// The holder of the first part appends to it.
	_ = append(out[0].Events, Event{Type: EventDelete, Kv: KeyValue{Key: b("x")}})
	if got := string(out[1].Events[0].Kv.Key); got != "b" {
		t.Fatalf("the second part's event became %q, want b", got)
	}
	store.Watch(WatchRequest{Key: b("a"), RangeEnd: b("z"), StartRevision: 2})
	ws := store.TakeWatchResponses()
	if len(ws) != 2 || len(ws[1].Events) != 2 || string(ws[1].Events[1].Kv.Key) != "b" ||
		ws[1].Events[1].Type != EventPut {
		t.Fatalf("logged revision 2 changed: %+v", ws)
	}
}
