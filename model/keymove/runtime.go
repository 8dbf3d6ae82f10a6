package keymove

import (
	"time"

	"shardsim/simkv"
)

// Conn is one worker's handles on the world: the metadata store (etcd),
// each shard store, and its clock. Every handle speaks simkv.KV, so the
// executor could run over real etcd clients and real shard providers.
type Conn interface {
	Meta() simkv.KV
	Shard(ShardID) simkv.KV
	// Sleep waits d on the worker's clock (backoff).
	Sleep(d time.Duration)
	// Now is the worker's clock, in nanoseconds.
	Now() int64
}

// Runtime is where an executor runs: a Conn for its main line of work, the
// ability to run workers concurrently, and semaphores for backpressure.
type Runtime interface {
	Conn
	// Parallel runs body for workers 0..n-1 concurrently, each with a Conn
	// of its own, and returns when all have returned.
	Parallel(n int, body func(worker int, c Conn))
	// NewSem returns a counting semaphore of n slots.
	NewSem(n int) Sem
}

// Sem is a counting semaphore: the seed's backpressure.
type Sem interface {
	Acquire(c Conn)
	Release(c Conn)
}

// Sequential is a Runtime over synchronous KVs (simkv.Direct or
// simkv.DirectFaulty): workers run one after another and semaphores never
// wait. Unit tests and the KM.Idempotent re-runs use it.
type Sequential struct {
	MetaKV  simkv.KV
	ShardKV map[ShardID]simkv.KV
	now     int64
}

var _ Runtime = (*Sequential)(nil)

// Meta implements Conn.
func (s *Sequential) Meta() simkv.KV { return s.MetaKV }

// Shard implements Conn; an unknown shard is unreachable.
func (s *Sequential) Shard(id ShardID) simkv.KV {
	if kv, ok := s.ShardKV[id]; ok {
		return kv
	}
	return unreachable{}
}

// Sleep advances every store's clock by d.
func (s *Sequential) Sleep(d time.Duration) {
	s.now += int64(d)
	s.MetaKV.Sleep(d)
	for _, id := range sortedShardIDs(s.ShardKV) {
		s.ShardKV[id].Sleep(d)
	}
}

// Now implements Conn.
func (s *Sequential) Now() int64 { return s.now }

// Parallel implements Runtime: one worker after another.
func (s *Sequential) Parallel(n int, body func(int, Conn)) {
	for i := 0; i < n; i++ {
		body(i, s)
	}
}

// NewSem implements Runtime.
func (s *Sequential) NewSem(n int) Sem { return &countSem{cap: n} }

// countSem only counts: with one worker at a time nothing ever waits, and
// an acquire past capacity is a bug in the executor.
type countSem struct{ cap, used int }

func (c *countSem) Acquire(Conn) {
	if c.used >= c.cap {
		panic("keymove: semaphore over capacity in a sequential runtime")
	}
	c.used++
}

func (c *countSem) Release(Conn) { c.used-- }

// unreachable is the KV of a shard the runtime does not know.
type unreachable struct{}

func (unreachable) Range(simkv.RangeRequest) (*simkv.RangeResponse, error) {
	return nil, simkv.ErrUnavailable
}
func (unreachable) Put(simkv.PutRequest) (*simkv.PutResponse, error) {
	return nil, simkv.ErrUnavailable
}
func (unreachable) DeleteRange(simkv.DeleteRangeRequest) (*simkv.DeleteRangeResponse, error) {
	return nil, simkv.ErrUnavailable
}
func (unreachable) Txn(simkv.TxnRequest) (*simkv.TxnResponse, error) {
	return nil, simkv.ErrUnavailable
}
func (unreachable) Compact(simkv.CompactRequest) (*simkv.CompactResponse, error) {
	return nil, simkv.ErrUnavailable
}
func (unreachable) LeaseGrant(simkv.LeaseGrantRequest) (*simkv.LeaseGrantResponse, error) {
	return nil, simkv.ErrUnavailable
}
func (unreachable) LeaseRevoke(simkv.LeaseRevokeRequest) (*simkv.LeaseRevokeResponse, error) {
	return nil, simkv.ErrUnavailable
}
func (unreachable) LeaseKeepAlive(simkv.LeaseKeepAliveRequest) (*simkv.LeaseKeepAliveResponse, error) {
	return nil, simkv.ErrUnavailable
}
func (unreachable) LeaseTimeToLive(simkv.LeaseTimeToLiveRequest) (*simkv.LeaseTimeToLiveResponse, error) {
	return nil, simkv.ErrUnavailable
}
func (unreachable) Sleep(time.Duration) {}

// Unreachable returns a KV that refuses every request (ErrUnavailable): the
// handle of a shard that a world does not have.
func Unreachable() simkv.KV { return unreachable{} }
