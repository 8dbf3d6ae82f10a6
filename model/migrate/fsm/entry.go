// Package fsm is the state machine every voter of a group applies, entry by
// entry, from the group's committed log: an MVCC store, the catalog view the
// group enforces, the timestamp state (last commit timestamp and physical
// ceiling) and the migration bookkeeping (import sequence numbers, staged
// rows, promotion progress).
//
// Apply is deterministic: its only inputs are the entry and the state, so
// every voter that applies the same log reaches the same state, whatever
// its pace. Reads and exports are served from a voter's applied state.
package fsm

import (
	"fmt"
	"strconv"

	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// Kind is an entry's type.
type Kind uint8

// Entry kinds.
const (
	// KindWrite is a client write (put or delete) at a leader-issued ts.
	KindWrite Kind = iota + 1
	// KindCeiling raises the physical ceiling of the group's clock.
	KindCeiling
	// KindCatalog installs a catalog snapshot into the group's view
	// (forward only); its result carries the last commit ts, which is how
	// snapshot_ts and fence_ts are taken.
	KindCatalog
	// KindImport is one idempotent import batch into the staged keyspace.
	KindImport
	// KindFloor raises the last commit ts (and ceiling) to a cutover floor.
	KindFloor
	// KindPromote copies the next staged rows of a job to live.
	KindPromote
	// KindCleanup deletes a moved span's source versions up to fence_ts.
	KindCleanup
	// KindAbandonStaged deletes a job's staged rows and import state.
	KindAbandonStaged
	// KindBarrier changes nothing; its result carries the last commit ts.
	KindBarrier
)

var kindNames = [...]string{"?", "write", "ceiling", "catalog", "import", "floor", "promote", "cleanup", "abandon-staged", "barrier"}

// String names the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind?"
}

// Write is a client write.
type Write struct {
	Key        string
	Value      string
	Tombstone  bool
	TTLms      uint64 // 0: no expiry
	TS         hlc.TS
	HasVersion bool   // the coordinator stamped its observed catalog version
	Observed   uint64 // that version
	Op         string // the client operation id, for traces and checkers
}

// Import is one import batch of a migration.
type Import struct {
	Job     uint64
	Bracket uint32 // job.BracketID(pass, family)
	Seq     uint64
	Rows    []mvcc.Row
	Cursor  []byte // the export cursor after this batch
	Moving  keys.Span
}

// Promote asks to promote up to Max staged versions of Job.
type Promote struct {
	Job uint64
	Max int
}

// Cleanup deletes the moved span's versions at or below FenceTS.
type Cleanup struct {
	Job     uint64
	Moving  keys.Span
	FenceTS hlc.TS
}

// Entry is one log entry.
type Entry struct {
	Index uint64
	Term  uint64
	Kind  Kind

	Write   *Write
	Ceiling uint64
	Catalog *catalog.Catalog
	Import  *Import
	Floor   hlc.TS
	Promote *Promote
	Cleanup *Cleanup
	Job     uint64 // KindAbandonStaged
}

// String renders the entry for traces.
func (e Entry) String() string {
	s := strconv.FormatUint(e.Index, 10) + ":" + e.Kind.String()
	switch e.Kind {
	case KindWrite:
		w := e.Write
		s += " " + keys.Quote(w.Key) + "@" + w.TS.String() + " op=" + w.Op
		if w.Tombstone {
			s += " del"
		}
	case KindCeiling:
		s += " " + strconv.FormatUint(e.Ceiling, 10)
	case KindCatalog:
		s += " v" + strconv.FormatUint(e.Catalog.Version, 10)
	case KindImport:
		s += fmt.Sprintf(" j%d b%x seq=%d rows=%d", e.Import.Job, e.Import.Bracket, e.Import.Seq, len(e.Import.Rows))
	case KindFloor:
		s += " " + e.Floor.String()
	case KindPromote:
		s += fmt.Sprintf(" j%d max=%d", e.Promote.Job, e.Promote.Max)
	case KindCleanup:
		s += fmt.Sprintf(" j%d %s <=%s", e.Cleanup.Job, e.Cleanup.Moving, e.Cleanup.FenceTS)
	case KindAbandonStaged:
		s += fmt.Sprintf(" j%d", e.Job)
	}
	return s
}

// Result is what applying an entry produced.
type Result struct {
	Err        error
	TS         hlc.TS // write: its commit ts
	LastCommit hlc.TS // the group's last commit ts after the entry
	Horizon    hlc.TS // the highest ts the group's leaders can have issued or observed so far
	Version    uint64 // the catalog view's version after the entry
	Cursor     []byte // import: the stored cursor (also on a duplicate)
	Seq        uint64 // import: the stored sequence number
	Applied    int    // rows written by import, promote or cleanup
	Duplicate  bool   // import: an already-applied batch, a no-op
	Done       bool   // promote: nothing staged is left
}
