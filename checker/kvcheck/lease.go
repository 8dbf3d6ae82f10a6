package kvcheck

import (
	"time"

	"shardsim/property"
	"shardsim/simclock"
	"shardsim/simkv"
)

// LeaseExpiry checks KV.LeaseExpiry as the server applies requests: a lease
// is never expired before the TTL counted from its grant or its last
// keep-alive has elapsed, nor later: once a request is applied after a
// lease's deadline, the lease must already be gone; after an expiry or a
// revoke none of its keys remain; and once the world is idle no lease is
// left.
//
// An election refreshes every lease's deadline (etcd's new leader gives
// each a full TTL from when it takes office); the checker learns of it at
// the next apply, with the time the new leader took office, from the
// world (CountElections).
type LeaseExpiry struct {
	store     *simkv.Store
	deadline  map[int64]simclock.Time // the latest the lease may expire
	earliest  map[int64]simclock.Time // the earliest it may expire
	ttl       map[int64]time.Duration
	elections func() (int, simclock.Time) // the server's elections so far and when the last leader took office
	seenUntil simclock.Time
	first     property.First
}

// NewLeaseExpiry returns a checker reading keys from store.
func NewLeaseExpiry(store *simkv.Store) *LeaseExpiry {
	return &LeaseExpiry{store: store, deadline: map[int64]simclock.Time{}, earliest: map[int64]simclock.Time{}, ttl: map[int64]time.Duration{}}
}

// CountElections tells the checker how many elections the server has
// held and when the last one's leader took office, so it can allow for
// the deadline refresh each one makes.
func (c *LeaseExpiry) CountElections(n func() (int, simclock.Time)) { c.elections = n }

// refresh accounts for an election since the last apply: the new leader
// gave every lease a full TTL from when it took office.
func (c *LeaseExpiry) refresh() {
	if c.elections == nil {
		return
	}
	// The leader's office time, not the count, marks a new election: a
	// request the old leader applies during the election is seen before
	// the new leader takes office.
	if _, until := c.elections(); until != c.seenUntil {
		c.seenUntil = until
		for id, ttl := range c.ttl {
			c.earliest[id] = until.Add(ttl)
			c.deadline[id] = until.Add(ttl)
		}
	}
}

// checkLate flags a lease still held although its deadline passed before
// at: its expiry comes too late. Of several, it names the most overdue
// (then the smallest id), so the report does not depend on map order.
func (c *LeaseExpiry) checkLate(at simclock.Time) {
	found := false
	var lateID int64
	var lateDL simclock.Time
	for id, dl := range c.deadline {
		if dl < at && (!found || dl < lateDL || dl == lateDL && id < lateID) {
			found, lateID, lateDL = true, id, dl
		}
	}
	if found {
		c.fail("lease %x outlived its deadline %v: still held at %v, %v late", lateID, lateDL, at, at.Sub(lateDL))
	}
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
	c.refresh()
	if err != nil {
		c.checkLate(at)
		return
	}
	switch {
	case req.LeaseGrant != nil && resp.LeaseGrant != nil:
		id, ttl := resp.LeaseGrant.ID, time.Duration(resp.LeaseGrant.TTL)*time.Second
		c.deadline[id], c.earliest[id], c.ttl[id] = at.Add(ttl), at.Add(ttl), ttl
	case req.LeaseKeepAlive != nil && resp.LeaseKeepAlive != nil && resp.LeaseKeepAlive.TTL > 0:
		id := req.LeaseKeepAlive.ID
		c.deadline[id] = at.Add(time.Duration(resp.LeaseKeepAlive.TTL) * time.Second)
		c.earliest[id] = c.deadline[id]
	case req.LeaseRevoke != nil:
		id := req.LeaseRevoke.ID
		if dl, ok := c.earliest[id]; call == 0 && ok && at < dl {
			c.fail("lease %x expired at %v, %v before its deadline %v", id, at, dl.Sub(at), dl)
		}
		delete(c.deadline, id)
		delete(c.earliest, id)
		delete(c.ttl, id)
		c.checkNoKeys(id, at)
	}
	c.checkLate(at)
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
