package simkv

import (
	"errors"
	"time"

	"shardsim/fate"
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

// FaultConfig is the request-level faults of a simulated etcd: the shared
// request-fate configuration of package fate, under the name simkv's users
// know.
type FaultConfig = fate.Config

// defaultTimeout is a client's deadline when the configuration sets none.
const defaultTimeout = time.Second

// DefaultFaults is a quiet network with loopback-like latencies.
func DefaultFaults() FaultConfig {
	return FaultConfig{MinLatency: 100 * time.Microsecond, MaxLatency: 2 * time.Millisecond, Timeout: defaultTimeout}
}

// Fate is what the network decided for one request (package fate's).
type Fate = fate.Fate

// The request fates, as package fate names them.
const (
	Delivered    = fate.Delivered
	LostRequest  = fate.LostRequest
	LostResponse = fate.LostResponse
	Refused      = fate.Refused
	Overtaken    = fate.Overtaken
)
