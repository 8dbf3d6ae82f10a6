package simkv

import (
	"time"

	"shardsim/simclock"
)

// Direct is a fault-free, synchronous KV over a bare Store with its own
// virtual clock: Sleep advances the clock and expires leases. Unit tests of
// protocol code use it; the simulated world uses Client instead.
type Direct struct {
	typed
	store *Store
	now   simclock.Time
}

// NewDirect returns a Direct over store starting at time now.
func NewDirect(store *Store, now simclock.Time) *Direct {
	d := &Direct{store: store, now: now}
	d.typed = typed{via: d}
	return d
}

// call expires due leases, then applies r.
func (d *Direct) call(r Request) (Response, error) {
	d.expire()
	return d.store.Apply(d.now, r)
}

// Store returns the underlying store.
func (d *Direct) Store() *Store { return d.store }

// Now returns the direct clock.
func (d *Direct) Now() simclock.Time { return d.now }

// Sleep advances the clock by d, expiring leases on the way.
func (d *Direct) Sleep(dur time.Duration) { d.Advance(dur) }

// Advance moves the clock forward by dur and expires due leases.
func (d *Direct) Advance(dur time.Duration) {
	if dur > 0 {
		d.now = d.now.Add(dur)
	}
	d.expire()
}

func (d *Direct) expire() {
	for _, id := range d.store.ExpiredLeases(d.now) {
		_, _ = d.store.Apply(d.now, Request{LeaseRevoke: &LeaseRevokeRequest{ID: id}})
	}
}
