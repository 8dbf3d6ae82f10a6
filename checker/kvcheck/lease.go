package kvcheck

import (
	"time"

	"shardsim/property"
	"shardsim/simclock"
	"shardsim/simkv"
)

// LeaseExpiry checks KV.LeaseExpiry as the server applies requests: a lease
// is never expired before the TTL counted from its grant or its last
// keep-alive has elapsed; after an expiry or a revoke none of its keys
// remain; and once the world is idle no lease is left (every lease that is
// not kept alive does expire).
type LeaseExpiry struct {
	store    *simkv.Store
	deadline map[int64]simclock.Time
	first    property.First
}

// NewLeaseExpiry returns a checker reading keys from store.
func NewLeaseExpiry(store *simkv.Store) *LeaseExpiry {
	return &LeaseExpiry{store: store, deadline: map[int64]simclock.Time{}}
}

// Err returns the first violation, or nil.
func (c *LeaseExpiry) Err() *property.Violation { return c.first.Err() }

func (c *LeaseExpiry) fail(format string, args ...any) {
	c.first.Failf(property.KVLeaseExpiry, format, args...)
}

// OnInvoke implements simkv.Observer.
func (c *LeaseExpiry) OnInvoke(uint64, string, simclock.Time, simkv.Request) {}

// OnReturn implements simkv.Observer.
func (c *LeaseExpiry) OnReturn(uint64, simclock.Time, simkv.Response, error) {}

// OnApply implements simkv.Observer.
func (c *LeaseExpiry) OnApply(call uint64, at simclock.Time, req simkv.Request, resp simkv.Response, err error, before, after int64) {
	if err != nil {
		return
	}
	switch {
	case req.LeaseGrant != nil && resp.LeaseGrant != nil:
		c.deadline[resp.LeaseGrant.ID] = at.Add(time.Duration(resp.LeaseGrant.TTL) * time.Second)
	case req.LeaseKeepAlive != nil && resp.LeaseKeepAlive != nil && resp.LeaseKeepAlive.TTL > 0:
		c.deadline[req.LeaseKeepAlive.ID] = at.Add(time.Duration(resp.LeaseKeepAlive.TTL) * time.Second)
	case req.LeaseRevoke != nil:
		id := req.LeaseRevoke.ID
		if dl, ok := c.deadline[id]; call == 0 && ok && at < dl {
			c.fail("lease %x expired at %v, %v before its deadline %v", id, at, dl.Sub(at), dl)
		}
		delete(c.deadline, id)
		c.checkNoKeys(id, at)
	}
}

// checkNoKeys verifies no key is still attached to lease id.
func (c *LeaseExpiry) checkNoKeys(id int64, at simclock.Time) {
	resp, err := c.store.Apply(at, simkv.Request{Range: &simkv.RangeRequest{Key: []byte{0}, RangeEnd: []byte{0}}})
	if err != nil || resp.Range == nil {
		c.fail("cannot read the store after lease %x ended: %v", id, err)
		return
	}
	for _, kv := range resp.Range.Kvs {
		if kv.Lease == id {
			c.fail("key %q still attached to lease %x after it ended at %v", kv.Key, id, at)
			return
		}
	}
}

// Finish checks, once the world is idle, that no lease outlived its TTL.
func (c *LeaseExpiry) Finish(now simclock.Time) {
	resp, err := c.store.Apply(now, simkv.Request{LeaseLeases: &simkv.LeaseLeasesRequest{}})
	if err != nil || resp.LeaseLeases == nil {
		c.fail("cannot list leases at the end: %v", err)
		return
	}
	if n := len(resp.LeaseLeases.Leases); n > 0 {
		c.fail("%d leases still exist at %v with the world idle", n, now)
	}
}
