package simclock

import "time"

// NodeClock is one node's view of time: virtual time plus an offset that
// drifts and jumps, always within ±MaxSkew of the true virtual time. Protocol
// code that reads "the time" on a node reads its NodeClock, so skew between
// nodes is part of what a run explores.
type NodeClock struct {
	maxSkew  time.Duration
	offset   time.Duration // skew at anchor
	driftPPM int64         // parts per million the clock gains (or loses)
	anchor   Time          // virtual time at which offset was measured
}

// NewNodeClock returns a clock with no skew that never strays more than
// maxSkew from virtual time. A zero maxSkew pins it to virtual time.
func NewNodeClock(maxSkew time.Duration) *NodeClock {
	if maxSkew < 0 {
		maxSkew = -maxSkew
	}
	return &NodeClock{maxSkew: maxSkew}
}

// Skew returns how far the clock is ahead of virtual time at now.
func (c *NodeClock) Skew(now Time) time.Duration {
	if c == nil {
		return 0
	}
	s := c.offset + time.Duration(int64(now-c.anchor)*c.driftPPM/1_000_000)
	return clampDuration(s, c.maxSkew)
}

// Read returns the node's local reading at virtual time now. With drift above
// -1e6 ppm the reading never runs backwards except through Jump.
func (c *NodeClock) Read(now Time) Time { return now.Add(c.Skew(now)) }

// SetDrift makes the clock gain ppm parts per million from now on.
func (c *NodeClock) SetDrift(now Time, ppm int64) {
	if ppm <= -1_000_000 {
		ppm = -999_999
	}
	c.offset, c.anchor, c.driftPPM = c.Skew(now), now, ppm
}

// Jump moves the clock by d at now (forwards or backwards), within the bound.
func (c *NodeClock) Jump(now Time, d time.Duration) {
	c.offset, c.anchor = clampDuration(c.Skew(now)+d, c.maxSkew), now
}

// Reset removes all skew and drift.
func (c *NodeClock) Reset(now Time) { c.offset, c.driftPPM, c.anchor = 0, 0, now }

// MaxSkew returns the clock's bound.
func (c *NodeClock) MaxSkew() time.Duration { return c.maxSkew }

// RealDuration converts a duration measured on this clock into virtual time:
// a clock that runs fast waits less real time for the same local duration.
func (c *NodeClock) RealDuration(d time.Duration) time.Duration {
	if c == nil || c.driftPPM == 0 || d <= 0 {
		return d
	}
	return time.Duration(int64(d) * 1_000_000 / (1_000_000 + c.driftPPM))
}

func clampDuration(d, bound time.Duration) time.Duration {
	if d > bound {
		return bound
	}
	if d < -bound {
		return -bound
	}
	return d
}
