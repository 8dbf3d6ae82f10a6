package kvcheck

import (
	"testing"
	"time"

	"shardsim/property"
	"shardsim/simclock"
	"shardsim/simkv"
)

func TestLeaseExpiryCatchesEarlyExpiryAndLeftovers(t *testing.T) {
	sec := func(n int) simclock.Time { return simclock.Time(time.Duration(n) * time.Second) }
	grant := simkv.Request{LeaseGrant: &simkv.LeaseGrantRequest{ID: 7, TTL: 5}}
	granted := simkv.Response{LeaseGrant: &simkv.LeaseGrantResponse{ID: 7, TTL: 5}}
	revoke := simkv.Request{LeaseRevoke: &simkv.LeaseRevokeRequest{ID: 7}}

	early := NewLeaseExpiry(simkv.NewStore(simkv.StoreConfig{}))
	early.OnApply(1, sec(1), grant, granted, nil, 1, 1)
	early.OnApply(0, sec(5), revoke, simkv.Response{}, nil, 1, 1) // deadline is 6s
	if v := early.Err(); v == nil || v.Property != property.KVLeaseExpiry {
		t.Fatal("an expiry before the deadline went unnoticed")
	}

	kept := NewLeaseExpiry(simkv.NewStore(simkv.StoreConfig{}))
	kept.OnApply(1, sec(1), grant, granted, nil, 1, 1)
	kept.OnApply(2, sec(4), simkv.Request{LeaseKeepAlive: &simkv.LeaseKeepAliveRequest{ID: 7}},
		simkv.Response{LeaseKeepAlive: &simkv.LeaseKeepAliveResponse{ID: 7, TTL: 5}}, nil, 1, 1)
	kept.OnApply(0, sec(7), revoke, simkv.Response{}, nil, 1, 1) // keep-alive moved it to 9s
	if v := kept.Err(); v == nil || v.Property != property.KVLeaseExpiry {
		t.Fatal("an expiry ignoring a keep-alive went unnoticed")
	}

	// A store whose revoke left a key behind.
	store := simkv.NewStore(simkv.StoreConfig{})
	mustApply(t, store, grant)
	mustApply(t, store, simkv.Request{Put: &simkv.PutRequest{Key: []byte("k"), Value: []byte("v"), Lease: 7}})
	left := NewLeaseExpiry(store)
	left.OnApply(0, sec(10), revoke, simkv.Response{}, nil, 2, 2)
	if v := left.Err(); v == nil || v.Property != property.KVLeaseExpiry {
		t.Fatal("a key left attached to an ended lease went unnoticed")
	}
	idle := NewLeaseExpiry(store)
	idle.Finish(sec(100))
	if v := idle.Err(); v == nil || v.Property != property.KVLeaseExpiry {
		t.Fatal("a lease alive at the end went unnoticed")
	}

	ok := NewLeaseExpiry(simkv.NewStore(simkv.StoreConfig{}))
	ok.OnApply(1, sec(1), grant, granted, nil, 1, 1)
	ok.OnApply(0, sec(6), revoke, simkv.Response{}, nil, 1, 1)
	ok.Finish(sec(7))
	if err := ok.Err(); err != nil {
		t.Fatalf("a correct expiry was rejected: %v", err)
	}
}

func mustApply(t *testing.T, s *simkv.Store, r simkv.Request) {
	t.Helper()
	if _, err := s.Apply(0, r); err != nil {
		t.Fatal(err)
	}
}

// An expiry that comes too late is caught: a request applied after a
// lease's deadline finds the lease still held. (The earlier checker only
// looked for expiries before the deadline.) An election's refresh of the
// deadlines is allowed for.
func TestLeaseExpiryCatchesLateExpiry(t *testing.T) {
	sec := func(n int) simclock.Time { return simclock.Time(time.Duration(n) * time.Second) }
	grant := simkv.Request{LeaseGrant: &simkv.LeaseGrantRequest{ID: 7, TTL: 5}}
	granted := simkv.Response{LeaseGrant: &simkv.LeaseGrantResponse{ID: 7, TTL: 5}}
	put := simkv.Request{Put: &simkv.PutRequest{Key: []byte("k"), Value: []byte("v")}}

	late := NewLeaseExpiry(simkv.NewStore(simkv.StoreConfig{}))
	late.OnApply(1, sec(1), grant, granted, nil, 1, 1)
	late.OnApply(2, sec(6), put, simkv.Response{Put: &simkv.PutResponse{}}, nil, 1, 2) // at the deadline: not yet late
	if v := late.Err(); v != nil {
		t.Fatalf("an apply at the deadline flagged: %v", v)
	}
	late.OnApply(3, sec(8), put, simkv.Response{Put: &simkv.PutResponse{}}, nil, 2, 3)
	if v := late.Err(); v == nil || v.Property != property.KVLeaseExpiry {
		t.Fatal("a lease held 2s past its deadline went unnoticed")
	}

	elections := 0
	refreshed := NewLeaseExpiry(simkv.NewStore(simkv.StoreConfig{}))
	refreshed.CountElections(func() (int, simclock.Time) { return elections, sec(4 * elections) })
	refreshed.OnApply(1, sec(1), grant, granted, nil, 1, 1)
	elections++ // the new leader takes office at 4s: the deadline is 9s
	refreshed.OnApply(2, sec(4), put, simkv.Response{Put: &simkv.PutResponse{}}, nil, 1, 2)
	refreshed.OnApply(3, sec(8), put, simkv.Response{Put: &simkv.PutResponse{}}, nil, 2, 3)
	if v := refreshed.Err(); v != nil {
		t.Fatalf("a lease refreshed by an election flagged: %v", v)
	}
}
