package simkv

import (
	"math"
	"sort"
	"time"

	"shardsim/simclock"
)

// lease is a granted lease: its TTL, its deadline on virtual time and the
// keys attached to it.
type lease struct {
	id       int64
	ttl      int64 // granted seconds
	deadline simclock.Time
	keys     map[string]bool
}

func (l *lease) clone() *lease {
	c := *l
	c.keys = make(map[string]bool, len(l.keys))
	for k := range l.keys {
		c.keys[k] = true
	}
	return &c
}

func (l *lease) sortedKeys() []string {
	ks := make([]string, 0, len(l.keys))
	for k := range l.keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func ttlDuration(ttl int64) time.Duration { return time.Duration(ttl) * time.Second }

// deadlineAfter returns from+ttl seconds, saturating instead of
// overflowing for TTLs near MaxLeaseTTL.
func deadlineAfter(from simclock.Time, ttl int64) simclock.Time {
	if d := ttlDuration(ttl); d/time.Second == time.Duration(ttl) && from <= simclock.Time(math.MaxInt64-d) {
		return from.Add(d)
	}
	return simclock.Time(math.MaxInt64)
}

func (s *Store) attach(id int64, key string) {
	s.ownLeases()
	if l := s.leases[id]; l != nil {
		l.keys[key] = true
	}
}

func (s *Store) detach(id int64, key string) {
	s.ownLeases()
	if l := s.leases[id]; l != nil {
		delete(l.keys, key)
	}
}

// nextLeaseID draws ids for ID-0 grants from a splitmix64 sequence seeded
// by LeaseIDSeed, keeping them positive as etcd does.
func (s *Store) nextLeaseID() int64 {
	for {
		s.leaseSeq++
		z := s.cfg.LeaseIDSeed + s.leaseSeq*0x9e3779b97f4a7c15
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		id := int64(z & (1<<63 - 1))
		if id != 0 && s.leases[id] == nil {
			return id
		}
	}
}

// leaseGrant grants a lease that expires ttl seconds after now. A TTL below
// the minimum is raised to it; etcd checks the TTL bound before the id.
func (s *Store) leaseGrant(now simclock.Time, r *LeaseGrantRequest) (*LeaseGrantResponse, error) {
	id := r.ID
	if id == 0 {
		id = s.nextLeaseID()
	}
	if r.TTL > MaxLeaseTTL {
		return nil, ErrLeaseTTLTooLarge
	}
	if s.leases[id] != nil {
		return nil, ErrLeaseExist
	}
	ttl := max(r.TTL, s.cfg.MinLeaseTTL)
	s.ownLeases()
	s.leases[id] = &lease{id: id, ttl: ttl, deadline: deadlineAfter(now, ttl), keys: map[string]bool{}}
	return &LeaseGrantResponse{Header: s.header(), ID: id, TTL: ttl}, nil
}

// leaseRevoke revokes a lease, deleting its keys in one revision.
func (s *Store) leaseRevoke(r *LeaseRevokeRequest) (*LeaseRevokeResponse, error) {
	if s.leases[r.ID] == nil {
		return nil, ErrLeaseNotFound
	}
	s.revoke(r.ID)
	return &LeaseRevokeResponse{Header: s.header()}, nil
}

// revoke deletes the lease's keys in key order, in one write, and drops it.
func (s *Store) revoke(id int64) {
	s.ownLeases()
	l := s.leases[id]
	w := s.newWriter()
	for _, k := range l.sortedKeys() {
		if kv, ok := s.ks.at(k, w.rev()); ok {
			w.delete(&kv)
		}
	}
	delete(s.leases, id)
	w.end()
}

// leaseKeepAlive renews a lease for its granted TTL from now. A missing
// lease, or one whose deadline has passed (etcd waits for its revocation,
// then reports it missing), answers TTL 0 rather than an error.
func (s *Store) leaseKeepAlive(now simclock.Time, r *LeaseKeepAliveRequest) *LeaseKeepAliveResponse {
	resp := &LeaseKeepAliveResponse{Header: s.header(), ID: r.ID}
	l := s.leases[r.ID]
	if l == nil || l.deadline <= now {
		return resp
	}
	s.ownLeases()
	l = s.leases[r.ID]
	l.deadline = deadlineAfter(now, l.ttl)
	resp.TTL = l.ttl
	return resp
}

// leaseTimeToLive reports a lease's remaining whole seconds (truncated
// toward zero, so it can go negative for a lease past its deadline but not
// yet revoked), or TTL -1 for a missing lease, which etcd does not treat as
// an error.
func (s *Store) leaseTimeToLive(now simclock.Time, r *LeaseTimeToLiveRequest) *LeaseTimeToLiveResponse {
	resp := &LeaseTimeToLiveResponse{Header: s.header(), ID: r.ID, TTL: -1}
	l := s.leases[r.ID]
	if l == nil {
		return resp
	}
	resp.TTL = int64(l.deadline.Sub(now) / time.Second)
	resp.GrantedTTL = l.ttl
	if r.Keys {
		for _, k := range l.sortedKeys() {
			resp.Keys = append(resp.Keys, []byte(k))
		}
	}
	return resp
}

// byDeadline returns the lease ids ordered by deadline, then id.
func (s *Store) byDeadline() []*lease {
	ls := make([]*lease, 0, len(s.leases))
	for _, l := range s.leases {
		ls = append(ls, l)
	}
	sort.Slice(ls, func(i, j int) bool {
		if ls[i].deadline != ls[j].deadline {
			return ls[i].deadline < ls[j].deadline
		}
		return ls[i].id < ls[j].id
	})
	return ls
}

func (s *Store) leaseList() *LeaseLeasesResponse {
	resp := &LeaseLeasesResponse{Header: s.header()}
	for _, l := range s.byDeadline() {
		resp.Leases = append(resp.Leases, l.id)
	}
	return resp
}

// ExpiredLeases returns the ids of the leases whose deadline is at or
// before now, by deadline then id, without revoking them. Revoking each with
// a LeaseRevoke request is what etcd's lessor does on expiry.
func (s *Store) ExpiredLeases(now simclock.Time) []int64 {
	// Callers ask on every request; don't sort the leases when none is due.
	if at, ok := s.NextLeaseDeadline(); !ok || at > now {
		return nil
	}
	var ids []int64
	for _, l := range s.byDeadline() {
		if l.deadline > now {
			break
		}
		ids = append(ids, l.id)
	}
	return ids
}

// ExpireLeases revokes every lease whose deadline is at or before now, by
// deadline then id; each revocation deletes that lease's keys in one
// revision. It returns how many leases expired.
func (s *Store) ExpireLeases(now simclock.Time) int {
	ids := s.ExpiredLeases(now)
	for _, id := range ids {
		s.revoke(id)
	}
	return len(ids)
}

// NextLeaseDeadline returns the earliest lease deadline, if any lease exists.
func (s *Store) NextLeaseDeadline() (simclock.Time, bool) {
	var at simclock.Time
	found := false
	for _, l := range s.leases {
		if !found || l.deadline < at {
			at, found = l.deadline, true
		}
	}
	return at, found
}

// RefreshLeases gives every lease a full TTL counted from until, as etcd's
// lessor does when a new leader takes over (Promote): no lease expires
// because of an election.
func (s *Store) RefreshLeases(until simclock.Time) {
	s.ownLeases()
	for _, l := range s.leases {
		l.deadline = deadlineAfter(until, l.ttl)
	}
}

// LeaseDeadline returns a lease's deadline, if it exists.
func (s *Store) LeaseDeadline(id int64) (simclock.Time, bool) {
	if l := s.leases[id]; l != nil {
		return l.deadline, true
	}
	return 0, false
}
