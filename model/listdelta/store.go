package listdelta

import (
	"errors"
	"fmt"

	"shardsim/model/bugs"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// Backend is the transactional store the collections live on: snapshot
// reads and one-phase optimistic transactions of the data plane (package
// fsm's conflict rule). In the simulated world it is a coordinator of the
// migrating store; in unit tests, Local.
type Backend interface {
	// Get reads raw at ts (0: the latest) and returns the timestamp it was
	// served at.
	Get(raw string, ts hlc.TS) (mvcc.Read, hlc.TS, error)
	// Scan returns the visible rows of family fam whose route key is rk and
	// whose raw key lies in raw, at ts (0: the latest), at most limit (0:
	// all), in raw key order, and the timestamp it was served at.
	Scan(fam keys.Family, rk string, raw keys.Span, ts hlc.TS, limit int) ([]mvcc.ScanRow, hlc.TS, error)
	// Commit commits tx in one phase and returns its commit timestamp.
	Commit(tx fsm.Txn) (hlc.TS, error)
	// Now is the caller's own clock (only a wrong variant uses it).
	Now() hlc.TS
	// Backoff waits before the attempt-th retry of a conflicting command.
	Backoff(attempt int)
}

// Config holds the design's limits, shared by every collection kind (seed
// 001, "Shared Delta Limits").
type Config struct {
	// MaxDeltaCount is the soft limit: a key with this many unapplied
	// deltas is due for compaction.
	MaxDeltaCount int
	// MaxDeltaScanLimit is the hard limit: metadata resolution reads at
	// most this many deltas and fails with ErrDeltaScanTruncated when it
	// finds that many (it cannot know the rest).
	MaxDeltaScanLimit int
	// MaxKeysPerCompactionTx bounds the deltas one compaction folds and the
	// positions it examines on each side for rows to collect.
	MaxKeysPerCompactionTx int
	// ScanWindow is how many claim rows a pop reads at once.
	ScanWindow int
	// Attempts is how often a command is tried when it conflicts.
	Attempts int
}

// DefaultConfig returns the design's defaults.
func DefaultConfig() Config {
	return Config{MaxDeltaCount: 64, MaxDeltaScanLimit: 256, MaxKeysPerCompactionTx: 256, ScanWindow: 128, Attempts: 8}
}

// Errors of the commands. Each says the command did not take effect.
var (
	// ErrDeltaScanTruncated: more unapplied deltas than MaxDeltaScanLimit;
	// the metadata cannot be resolved until a compaction folds them.
	ErrDeltaScanTruncated = errors.New("listdelta: delta scan truncated, compaction needed")
	// ErrIndexOutOfRange: LSET of an index the list does not have.
	ErrIndexOutOfRange = errors.New("listdelta: index out of range")
	// ErrContended: the command conflicted on every attempt.
	ErrContended = errors.New("listdelta: too many conflicting attempts")
	// ErrCorrupt: the rows contradict the metadata (a missing item).
	ErrCorrupt = errors.New("listdelta: rows contradict the metadata")
)

// Stats counts what a store's commands met.
type Stats struct {
	Committed       int // transactions committed
	Conflicts       int // attempts refused with a conflict and retried
	ClaimConflicts  int // ... of pops, which write a claim (concurrent pops contending)
	ClaimSkips      int // positions a pop found claimed and skipped
	Truncated       int // resolutions that found MaxDeltaScanLimit deltas
	Compactions     int // compactions committed
	CompactConflict int // compactions refused with a conflict
	DeltasFolded    int // deltas compactions folded
	RowsCollected   int // item and claim rows compactions deleted
	Execs           int // MULTI/EXEC transactions committed
}

// Store runs the commands of one client (or the compactor) through its
// backend. Every command is one optimistic transaction, retried while it
// conflicts.
type Store struct {
	be    Backend
	cfg   Config
	bugs  bugs.Set
	lay   layout
	name  string
	seq   uint64
	stats Stats

	// OnTruncated, if set, is told every key whose resolution was
	// truncated (the caller may hurry a compaction of it).
	OnTruncated func(kind Kind, uk string)
	// OnAttempt, if set, is told each transaction id a command commits
	// under, before it is sent (an observer ties applies to commands).
	OnAttempt func(txn string)
}

// NewStore returns a store named name (it prefixes transaction ids).
func NewStore(be Backend, cfg Config, set bugs.Set, name string) *Store {
	return &Store{be: be, cfg: cfg, bugs: set, lay: layout{nul: set.Has(bugs.ListdeltaNulSeparator)}, name: name}
}

// Stats returns the counters.
func (s *Store) Stats() Stats { return s.stats }

// txnID returns a fresh transaction id.
func (s *Store) txnID() string {
	s.seq++
	return fmt.Sprintf("%s.%d", s.name, s.seq)
}

// conflict reports whether err says an attempt lost a race and may be
// retried as a new transaction (a definite refusal).
func conflict(err error) bool {
	return errors.Is(err, errs.ErrTxnConflict) || errors.Is(err, errs.ErrWriteTooOld) || errors.Is(err, errs.ErrCompacted)
}

// run tries body as a transaction until it commits, fails for good or
// leaves its outcome open. body builds the attempt and returns the
// command's answer; a read-only attempt (no writes) returns without a
// commit. onConflict is told of each conflicting attempt.
func (s *Store) run(body func(a *attempt) (any, error), onConflict func()) (any, error) {
	for i := 0; i < max(s.cfg.Attempts, 1); i++ {
		if i > 0 {
			s.be.Backoff(i)
		}
		a := &attempt{s: s}
		out, err := body(a)
		if err != nil {
			if conflict(err) {
				continue
			}
			return nil, err
		}
		if len(a.keys) == 0 {
			return out, nil
		}
		_, err = a.commit()
		switch {
		case err == nil:
			s.stats.Committed++
			return out, nil
		case conflict(err):
			s.stats.Conflicts++
			if onConflict != nil {
				onConflict()
			}
			continue
		}
		return nil, err
	}
	return nil, ErrContended
}
