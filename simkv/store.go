package simkv

import (
	"slices"

	"shardsim/simclock"
)

// Defaults of StoreConfig, equal to etcd's defaults.
const (
	// DefaultMaxTxnOps is etcd's --max-txn-ops default.
	DefaultMaxTxnOps = 128
	// DefaultMinLeaseTTL is etcd's minimum lease TTL in seconds with the
	// default 100ms heartbeat and 1s election timeout: ceil(1.5 election
	// timeouts), that is ceil(1.5s) = 2.
	DefaultMinLeaseTTL = 2
	// MaxLeaseTTL is the largest TTL etcd grants, in seconds.
	MaxLeaseTTL = 9000000000
)

// StoreConfig configures a Store. The zero value means etcd's defaults.
type StoreConfig struct {
	// MaxTxnOps bounds the compares and the ops of each branch of a txn,
	// like etcd's --max-txn-ops (default 128).
	MaxTxnOps int
	// MinLeaseTTL is the smallest TTL granted, in seconds (default 2).
	// Shorter requests are granted this TTL.
	MinLeaseTTL int64
	// LeaseIDSeed seeds the ids given to leases granted with ID 0.
	LeaseIDSeed uint64
}

// Store is the in-memory etcd: a revisioned key space with leases and
// watches. It is a deterministic state machine; see the package comment.
// A Store is not safe for concurrent use.
type Store struct {
	cfg        StoreConfig
	rev        int64 // current revision; 1 for a fresh store, as in etcd
	compactRev int64 // -1 until the first compaction, as in etcd
	ks         keyspace
	leases     map[int64]*lease
	leasesCOW  bool   // leases (map and values) may be shared with a clone: copy before changing
	leaseSeq   uint64 // how many ids were drawn for ID-0 grants
	log        []revEvents
	logTail    *sharedTail // log's backing array, shared with clones (appendShared)
	watch      watchState
}

// NewStore returns an empty store at revision 1.
func NewStore(cfg StoreConfig) *Store {
	if cfg.MaxTxnOps <= 0 {
		cfg.MaxTxnOps = DefaultMaxTxnOps
	}
	if cfg.MinLeaseTTL <= 0 {
		cfg.MinLeaseTTL = DefaultMinLeaseTTL
	}
	return &Store{
		cfg:        cfg,
		rev:        1,
		compactRev: -1,
		ks:         newKeyspace(),
		leases:     map[int64]*lease{},
		watch:      newWatchState(),
	}
}

// Config returns the store's configuration, with defaults filled in.
func (s *Store) Config() StoreConfig { return s.cfg }

// Revision returns the current revision.
func (s *Store) Revision() int64 { return s.rev }

// CompactRevision returns the revision of the last compaction, 0 if none.
// (etcd starts at -1 internally, which is why compacting at 0 succeeds once
// on a fresh store.)
func (s *Store) CompactRevision() int64 {
	if s.compactRev < 0 {
		return 0
	}
	return s.compactRev
}

// Clone returns a copy of the store, watches and pending watch responses
// included, that behaves as a deep copy. The key index and the leases are
// shared copy-on-write: a linearizability check clones the model store at
// every step it tries, and most steps (reads, refused writes) change
// nothing, so the copy is made only by the first change on either side.
// The watch log's array is shared as well: the first side to log a
// revision appends in place, the other copies (appendShared).
func (s *Store) Clone() *Store {
	s.ks.cow, s.leasesCOW = true, true
	c := *s
	c.watch = s.watch.clone()
	return &c
}

// Fork returns a copy of the store, as Clone does, for a store that is
// a template: one built once and then only forked (a world's initial
// metadata, the same in many runs). Unlike Clone, Fork writes nothing in
// s, so any number of goroutines may fork one s at once while nothing
// changes it. The copy owns its key index, leases and watch state and
// shares only what is never written once made: the histories' entries
// and the logged events, with no tail (appendShared), so its first write
// to a key or to the log copies that slice rather than appending into
// the array the template and its other forks hold.
func (s *Store) Fork() *Store {
	c := *s
	c.ks = s.ks.fork()
	c.leases = make(map[int64]*lease, len(s.leases))
	for id, l := range s.leases {
		c.leases[id] = l.clone()
	}
	c.leasesCOW = false
	c.log, c.logTail = s.log[:len(s.log):len(s.log)], nil
	c.watch = s.watch.clone()
	return &c
}

// ownLeases makes the leases this store's own before it changes one.
func (s *Store) ownLeases() {
	if !s.leasesCOW {
		return
	}
	own := make(map[int64]*lease, len(s.leases))
	for id, l := range s.leases {
		own[id] = l.clone()
	}
	s.leases, s.leasesCOW = own, false
}

// Latest returns the live version of key at the current revision, as a
// Range of the key would, without building a request or a response: for
// observers that re-read what a write changed. The key and value share the
// store's bytes, as a Range's answer does; callers must not modify them.
func (s *Store) Latest(key []byte) (KeyValue, bool) {
	return s.ks.atBytes(key, s.rev)
}

// Apply applies one request at virtual time now and returns etcd's answer.
// Requests etcd rejects are rejected here with the same error and change
// nothing. now matters only to leases.
func (s *Store) Apply(now simclock.Time, req Request) (Response, error) {
	if one(req.Range != nil)+one(req.Put != nil)+one(req.DeleteRange != nil)+one(req.Txn != nil)+
		one(req.Compact != nil)+one(req.LeaseGrant != nil)+one(req.LeaseRevoke != nil)+
		one(req.LeaseKeepAlive != nil)+one(req.LeaseTimeToLive != nil)+one(req.LeaseLeases != nil) != 1 {
		return Response{}, ErrInvalidRequest
	}
	switch {
	case req.Range != nil:
		r, err := s.applyRange(req.Range, req.rangeRoom)
		return wrap(Response{Range: r}, err)
	case req.Put != nil:
		r, err := s.applyPut(req.Put)
		return wrap(Response{Put: r}, err)
	case req.DeleteRange != nil:
		r, err := s.applyDelete(req.DeleteRange)
		return wrap(Response{DeleteRange: r}, err)
	case req.Txn != nil:
		r, err := s.applyTxn(req.Txn, req.txnRoom)
		return wrap(Response{Txn: r}, err)
	case req.Compact != nil:
		r, err := s.applyCompact(req.Compact)
		return wrap(Response{Compact: r}, err)
	case req.LeaseGrant != nil:
		r, err := s.leaseGrant(now, req.LeaseGrant)
		return wrap(Response{LeaseGrant: r}, err)
	case req.LeaseRevoke != nil:
		r, err := s.leaseRevoke(req.LeaseRevoke)
		return wrap(Response{LeaseRevoke: r}, err)
	case req.LeaseKeepAlive != nil:
		return Response{LeaseKeepAlive: s.leaseKeepAlive(now, req.LeaseKeepAlive)}, nil
	case req.LeaseTimeToLive != nil:
		return Response{LeaseTimeToLive: s.leaseTimeToLive(now, req.LeaseTimeToLive)}, nil
	default:
		return Response{LeaseLeases: s.leaseList()}, nil
	}
}

// wrap drops the response when there is an error, as gRPC does.
func wrap(r Response, err error) (Response, error) {
	if err != nil {
		return Response{}, err
	}
	return r, nil
}

// one is 1 for true and 0 for false: a sum of ones counts the fields a
// union sets (every request is counted; a variadic count built an array
// and looped over it each time).
func one(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *Store) header() ResponseHeader { return ResponseHeader{Revision: s.rev} }

// cloneBytes copies b so the store never aliases a caller's slice; empty
// stays nil. The copy has no spare room (cap == len): keys and values go
// out to readers as they are stored, and a reader's append to one then
// copies it instead of writing past its end into an array that the store's
// clones and forks share (Fork's templates are shared by worlds that run
// at once).
func cloneBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return slices.Clip(append([]byte(nil), b...))
}

// applyCompact compacts the key space at the given revision. Like etcd, a
// revision at or below the last compaction is ErrCompacted (so a repeated
// compaction fails) and one above the current revision is ErrFutureRev.
func (s *Store) applyCompact(r *CompactRequest) (*CompactResponse, error) {
	if r.Revision <= s.compactRev {
		return nil, ErrCompacted
	}
	if r.Revision > s.rev {
		return nil, ErrFutureRev
	}
	s.compactRev = r.Revision
	s.ks.compact(r.Revision)
	s.compactLog(r.Revision)
	return &CompactResponse{Header: s.header()}, nil
}
