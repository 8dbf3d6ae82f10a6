package simkv

import (
	"time"

	"shardsim/simclock"
)

// DirectFaults are the request faults a DirectFaulty injects, each a
// probability per request. The zero value injects nothing.
type DirectFaults struct {
	// LoseRequest: the request is dropped before the store sees it; the
	// client gives up with ErrDeadlineExceeded (it cannot tell that nothing
	// was applied).
	LoseRequest float64
	// LoseResponse: the store applies the request and the answer is lost;
	// the client sees ErrDeadlineExceeded.
	LoseResponse float64
	// Refuse: the client cannot reach the cluster; ErrUnavailable, nothing
	// applied.
	Refuse float64
	// LeaderChange: an election hits the request in flight; it is applied
	// or not (an even draw) and the client sees ErrLeaderChanged.
	LeaderChange float64
}

// DirectFaultStats counts what a DirectFaulty did.
type DirectFaultStats struct {
	Calls         int // requests handled
	LostRequests  int // dropped before apply
	LostResponses int // applied, answer dropped
	Refused       int // refused, not applied
	LeaderChanges int // hit by a leader change
	LeaderApplied int // ... of which were applied anyway
}

// DirectFaulty is a synchronous KV over a Direct that draws a fault for
// every request from a Choices, so a unit test can drive protocol code
// through lost requests and lost answers without a simulated network.
// Faults never move the clock: a lost request returns at once, and only
// Sleep (the caller's backoff) advances time, so tests keep the KV's clock
// in step with their own.
type DirectFaulty struct {
	typed
	inner   *Direct
	faults  DirectFaults
	choices *simclock.Choices
	stats   DirectFaultStats
}

// NewDirectFaulty wraps inner, drawing faults from choices.
func NewDirectFaulty(inner *Direct, faults DirectFaults, choices *simclock.Choices) *DirectFaulty {
	d := &DirectFaulty{inner: inner, faults: faults, choices: choices}
	d.typed = typed{via: d}
	return d
}

// call draws the request's fate, in a fixed draw order so that a replay
// of the same choices decides alike, and applies it through inner or not.
func (d *DirectFaulty) call(r Request) (Response, error) {
	d.stats.Calls++
	switch {
	case d.choices.Chance(d.faults.Refuse):
		d.stats.Refused++
		return Response{}, ErrUnavailable
	case d.choices.Chance(d.faults.LoseRequest):
		d.stats.LostRequests++
		return Response{}, ErrDeadlineExceeded
	case d.choices.Chance(d.faults.LoseResponse):
		d.stats.LostResponses++
		_, _ = d.inner.call(r)
		return Response{}, ErrDeadlineExceeded
	case d.choices.Chance(d.faults.LeaderChange):
		d.stats.LeaderChanges++
		if d.choices.Chance(0.5) {
			d.stats.LeaderApplied++
			_, _ = d.inner.call(r)
		}
		return Response{}, ErrLeaderChanged
	}
	return d.inner.call(r)
}

// Sleep advances the inner clock (see Direct.Sleep).
func (d *DirectFaulty) Sleep(dur time.Duration) { d.inner.Sleep(dur) }

// Inner returns the fault-free Direct underneath, sharing store and clock.
func (d *DirectFaulty) Inner() *Direct { return d.inner }

// SetFaults replaces the fault rates.
func (d *DirectFaulty) SetFaults(f DirectFaults) { d.faults = f }

// Stats returns the counters so far.
func (d *DirectFaulty) Stats() DirectFaultStats { return d.stats }
