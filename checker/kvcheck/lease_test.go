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
