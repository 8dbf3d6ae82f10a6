package simkv

import (
	"errors"
	"fmt"
	"time"
)

// Client-visible transport errors. They mirror what etcd's Go client reports
// when the network or the cluster misbehaves. None of them says whether the
// request was applied, except ErrUnavailable, which is returned only when the
// request never left the client.
var (
	// ErrDeadlineExceeded: no answer within the client's deadline. The request
	// may or may not have been applied.
	ErrDeadlineExceeded = errors.New("context deadline exceeded")
	// ErrLeaderChanged: the leader changed while the request was in flight.
	// The request may or may not have been applied.
	ErrLeaderChanged = errors.New("etcdserver: leader changed")
	// ErrUnavailable: the client could not reach the cluster; the request was
	// not sent, so it was not applied.
	ErrUnavailable = errors.New("etcdserver: unavailable: no connection to the cluster")
)

// IsIndeterminate reports whether err leaves open whether the request took
// effect. Protocol code must resolve such errors by reading back, never by
// guessing; the linearizability model treats such writes as maybe-applied.
func IsIndeterminate(err error) bool {
	return errors.Is(err, ErrDeadlineExceeded) || errors.Is(err, ErrLeaderChanged)
}

// IsTransport reports whether err came from the network or the cluster
// rather than from etcd's KV semantics (a compaction, a missing lease, ...).
func IsTransport(err error) bool {
	return IsIndeterminate(err) || errors.Is(err, ErrUnavailable)
}

// FaultConfig sets the request-level faults of a simulated etcd. Rates are
// probabilities per request; zero everywhere is a perfect network.
type FaultConfig struct {
	MinLatency time.Duration // one-way network latency, lower bound
	MaxLatency time.Duration // one-way network latency, upper bound
	Timeout    time.Duration // client deadline per request (default 1s)

	LoseRequest  float64       // dropped before apply: the client times out, nothing applied
	LoseResponse float64       // applied, answer dropped: the client times out (ambiguous)
	Delay        float64       // held back by up to MaxDelay more (may outlive the deadline and still apply)
	MaxDelay     time.Duration // upper bound of an extra delay
}

// DefaultFaults is a quiet network with loopback-like latencies.
func DefaultFaults() FaultConfig {
	return FaultConfig{MinLatency: 100 * time.Microsecond, MaxLatency: 2 * time.Millisecond, Timeout: time.Second}
}

func (f FaultConfig) timeout() time.Duration {
	if f.Timeout <= 0 {
		return time.Second
	}
	return f.Timeout
}

// String renders the configuration for traces and swarm reports.
func (f FaultConfig) String() string {
	return fmt.Sprintf("latency=%v..%v timeout=%v lose_req=%.3f lose_resp=%.3f delay=%.3f/%v",
		f.MinLatency, f.MaxLatency, f.timeout(), f.LoseRequest, f.LoseResponse, f.Delay, f.MaxDelay)
}

// Fate is what the network decided for one request.
type Fate int

const (
	// Delivered: applied and answered.
	Delivered Fate = iota
	// LostRequest: dropped before the server saw it.
	LostRequest
	// LostResponse: applied, but the answer never arrives.
	LostResponse
	// Refused: the client is partitioned from the cluster.
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
