// Package fate decides what a simulated network does to one request: whether
// it arrives, whether its answer comes back, how long each way takes and
// whether it is held back. Every world that sends requests over a simulated
// network (the etcd model in simkv, the migration RPCs in model/migrate/rpc,
// and whatever comes next) draws its requests' fates here, from one Config
// type and in one fixed order of draws, so a fault mix means the same thing
// in every world and a replay decides alike.
//
// What the fate means for the caller is the world's business: a lost request
// or a lost answer both end in the caller's deadline, which cannot tell them
// apart; a refused request (partition, no leader) fails fast and surely
// unapplied.
package fate

import (
	"fmt"
	"time"

	"shardsim/simclock"
)

// Config sets the request-level faults of a simulated network. Rates are
// probabilities per request; zero rates are a perfect network.
type Config struct {
	MinLatency time.Duration // one-way latency, lower bound
	MaxLatency time.Duration // one-way latency, upper bound
	Timeout    time.Duration // the caller's deadline per request (0: the world's default)

	LoseRequest  float64       // dropped before the receiver saw it: nothing applied
	LoseResponse float64       // applied, answer dropped: the caller cannot know
	Delay        float64       // held back by up to MaxDelay more (may outlive the deadline and still apply)
	MaxDelay     time.Duration // upper bound of an extra delay
}

// TimeoutOr returns the configured deadline, or def when none is set.
func (c Config) TimeoutOr(def time.Duration) time.Duration {
	if c.Timeout <= 0 {
		return def
	}
	return c.Timeout
}

// String renders the configuration (the deadline as set, 0 for the
// world's default) for traces and swarm reports.
func (c Config) String() string {
	return fmt.Sprintf("latency=%v..%v timeout=%v lose_req=%.3f lose_resp=%.3f delay=%.3f/%v",
		c.MinLatency, c.MaxLatency, c.Timeout, c.LoseRequest, c.LoseResponse, c.Delay, c.MaxDelay)
}

// Latency draws one one-way latency (an answer's way back, for instance).
func (c Config) Latency(ch *simclock.Choices) time.Duration {
	return ch.Duration(c.MinLatency, c.MaxLatency)
}

// Decision is the drawn fate of one request.
type Decision struct {
	Fate    Fate          // Delivered, LostRequest or LostResponse
	Latency time.Duration // the request's way to the receiver, any extra delay included
	Delayed bool          // an extra delay was drawn
}

// Draw decides one request's fate. The draws come in a fixed order (latency,
// loss of the request, loss of the answer unless the request was lost, the
// extra delay and its length), so a replay decides alike and a byte stream's
// minimiser meets them in the same place every time.
func (c Config) Draw(ch *simclock.Choices) Decision {
	d := Decision{Fate: Delivered, Latency: c.Latency(ch)}
	switch {
	case ch.Chance(c.LoseRequest):
		d.Fate = LostRequest
	case ch.Chance(c.LoseResponse):
		d.Fate = LostResponse
	}
	if ch.Chance(c.Delay) {
		d.Delayed = true
		d.Latency += ch.Duration(0, c.MaxDelay)
	}
	return d
}

// Fate is what the network did to one request.
type Fate int

const (
	// Delivered: it arrived and its answer comes back.
	Delivered Fate = iota
	// LostRequest: dropped before the receiver saw it.
	LostRequest
	// LostResponse: it arrived and was handled, but the answer never comes.
	LostResponse
	// Refused: the receiver could not be reached (partition, no leader); the
	// caller learns so at once and the request surely did not apply.
	Refused
	// Overtaken: a leader change hit the request in flight.
	Overtaken
)

func (f Fate) String() string {
	switch f {
	case Delivered:
		return "delivered"
	case LostRequest:
		return "lost-request"
	case LostResponse:
		return "lost-response"
	case Refused:
		return "refused"
	case Overtaken:
		return "leader-change"
	}
	return fmt.Sprintf("Fate(%d)", int(f))
}
