// Package fsm is the state machine every voter of a group applies, entry by
// entry, from the group's committed log: an MVCC store (transaction lock
// rows included), the timestamp state (last commit timestamp and physical
// ceiling), the compaction watermark, and the migration bookkeeping that
// must be replicated (import sequence numbers, staged rows, promotion
// progress, durable write floors, write trackers, retention pins and cutover
// read fences).
//
// Apply is deterministic: its only inputs are the entry and the state, so
// every voter that applies the same log reaches the same state, whatever
// its pace. The catalog is not part of it: a group judges ownership and the
// write fence by its leader's node-local view when it admits a request
// (package route); what the log carries has been admitted. Reads and
// exports are served from a voter's applied state.
//
// Transactions are optimistic. A client reads at a snapshot (ReadTS) and
// sends its writes with the read set it relied on (Txn.Reads: raw keys and
// raw key ranges). PREPARE, or a one-phase COMMIT, is validated where it is
// applied, in log order, against the versions applied before it, and fails
// with ErrTxnConflict when
//
//   - a key it writes has a version newer than ReadTS (first committer
//     wins), or
//   - a key it read has a version newer than ReadTS, or a key in a range it
//     read does (a row that appeared in the range since the snapshot, a
//     phantom, included; staged rows count under the transaction's staging
//     job), or
//   - a key it read holds another transaction's lock (that transaction
//     may commit below this one's commit timestamp).
//
// Write-write detection alone is snapshot isolation; with the read set a
// transaction commits only if what it read is still what a read at its
// commit timestamp would see, which makes the committed transactions of a
// group serializable in commit-timestamp order. The leader records the read
// set in its timestamp cache at the commit timestamp, so a caller-supplied
// timestamp can no longer slip a write under it. A transaction whose read
// set is empty keeps the write-write rule alone, as before.
//
// A one-phase commit may name slots of its keys (Txn.Stamps) that only the
// leader can fill: it writes the commit timestamp it issues there before
// proposing, so a raw key can embed the commit timestamp of the write that
// creates it (seed 001's delta keys) and be unique by construction.
package fsm

import (
	"fmt"
	"strconv"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// Kind is an entry's type.
type Kind uint8

// Entry kinds.
const (
	// KindWrite is a client write (put or delete) at an admitted ts.
	KindWrite Kind = iota + 1
	// KindCeiling raises the physical ceiling of the group's clock.
	KindCeiling
	// KindImport is one idempotent import batch into the staged keyspace.
	KindImport
	// KindFloor makes a migration's write floor durable on the target and
	// raises the last commit ts (and ceiling) to it: target readiness.
	KindFloor
	// KindPromote copies the next staged rows of a job to live.
	KindPromote
	// KindCleanup deletes a moved span's source versions up to fence_ts.
	KindCleanup
	// KindAbandonStaged deletes a job's staged rows and import state and
	// refuses the job's later imports.
	KindAbandonStaged
	// KindBarrier changes nothing; its result carries the last commit ts,
	// the timestamp horizon and (with a job) the job's tracked minimum.
	KindBarrier
	// KindConfig changes the group's voter set (the replication layer acts
	// on it) and raises the view floor new leaders must meet.
	KindConfig
	// KindArmTracker starts tracking the admitted timestamps of a moving
	// span and pins its retention (no compaction) for a job.
	KindArmTracker
	// KindPin moves a job's retention pin.
	KindPin
	// KindRelease drops a job's tracker and retention pin.
	KindRelease
	// KindCompact compacts versions below a timestamp (pins respected).
	KindCompact
	// KindArmFence arms a cutover read fence; KindDisarmFence drops it.
	KindArmFence
	KindDisarmFence
	// KindPrepare, KindCommit, KindRollback are the transaction steps.
	KindPrepare
	KindCommit
	KindRollback
	// KindDeleteRange deletes every visible user key of a route-key span.
	KindDeleteRange
)

var kindNames = [...]string{"?", "write", "ceiling", "import", "floor", "promote", "cleanup", "abandon-staged",
	"barrier", "config", "arm-tracker", "pin", "release", "compact", "arm-fence", "disarm-fence",
	"prepare", "commit", "rollback", "delete-range"}

// String names the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind?"
}

// Write is a client write.
type Write struct {
	Key       string
	Value     string
	Tombstone bool
	TTLms     uint64 // 0: no expiry
	TS        hlc.TS
	CallerTS  bool   // the client supplied TS (else the leader issued it)
	Staging   uint64 // the job whose staged rows count as existing versions (0: none)
	Op        string // the client operation id, for traces and checkers

	// put is the row the write creates, which the Puts of a voter's Result
	// hold: a function of the write alone, so every voter that applies it
	// makes the same row, and all of them share this one (an apply sets it
	// again, to what it holds already) instead of allocating one each.
	put [1]mvcc.Row
}

// Import is one import batch of a migration.
type Import struct {
	Job     uint64
	Bracket uint32 // job.BracketID(pass, family)
	Seq     uint64
	Rows    []mvcc.Row
	Cursor  []byte // the export cursor after this batch
	Moving  keys.Span

	staged []string // the rows' staged keys, made by the first apply (see stagedKey)
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

// Guard is a migration's per-span replicated guard: a durable write floor
// (KindFloor), a tracker (KindArmTracker), a retention pin (KindPin), or a
// cutover read fence (KindArmFence: TS is unused, Expected and Target say
// which CUTOVER it waits for).
type Guard struct {
	Job      uint64
	Span     keys.Span
	TS       hlc.TS
	Expected uint64
	Target   int
}

// Txn is a transaction step. Keys are user keys; Primary is one of them.
type Txn struct {
	ID       string
	Primary  string
	Keys     []string
	Values   []string
	Deletes  []bool
	ReadTS   hlc.TS // prepare: the snapshot the transaction read (first committer wins)
	StartTS  hlc.TS
	CommitTS hlc.TS
	AbortTS  hlc.TS // rollback: the timestamp its rollback record is written at
	CallerTS bool   // the client supplied CommitTS
	Staging  uint64 // the job whose staged rows the step's probes must see (0: none)
	OnePhase bool   // commit: prepare and commit in one step (no locks)
	Reads    []Read // the read set, validated at prepare (or one-phase commit) against ReadTS
	Stamps   []Stamp

	// lock is the step's lock value and what it encodes (see lockValue),
	// shared by every voter that applies the step.
	lock *lockValue
	// keys is the step's record and lock row keys (see txnKeys).
	keys *txnKeys
}

// Read is one entry of a transaction's read set: the raw key Start when End
// is empty, else every raw key in [Start, End).
type Read struct {
	Start, End string
}

// Point reports whether r reads one key.
func (r Read) Point() bool { return r.End == "" }

// Stamp names the eight bytes at Offset of Keys[Key] that the leader fills
// with the commit timestamp (big-endian) it issues for a one-phase commit.
type Stamp struct {
	Key, Offset int
}

// DeleteRange deletes, at TS, every user key whose route key lies in Span
// and which is visible there (live, or staged under Staging).
type DeleteRange struct {
	Span    keys.Span
	TS      hlc.TS
	Staging uint64
	Op      string
}

// Entry is one log entry.
type Entry struct {
	Index uint64
	Term  uint64
	Kind  Kind

	Write    *Write
	Ceiling  uint64
	Import   *Import
	Promote  *Promote
	Cleanup  *Cleanup
	Guard    *Guard
	Txn      *Txn
	DelRange *DeleteRange
	TS       hlc.TS        // KindCompact: the compaction timestamp
	Job      uint64        // KindAbandonStaged, KindBarrier, KindRelease, KindDisarmFence
	Config   *ConfigChange // KindConfig
}

// ConfigChange is a membership change (a KindConfig entry's); it sits
// behind a pointer, so the log's many other entries do not carry its room.
type ConfigChange struct {
	Voters  []int  // the new voter set
	MinView uint64 // the proposing leader's catalog view version
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
		if w.CallerTS {
			s += " caller-ts"
		}
	case KindCeiling:
		s += " " + strconv.FormatUint(e.Ceiling, 10)
	case KindImport:
		s += fmt.Sprintf(" j%d b%x seq=%d rows=%d", e.Import.Job, e.Import.Bracket, e.Import.Seq, len(e.Import.Rows))
	case KindPromote:
		s += fmt.Sprintf(" j%d max=%d", e.Promote.Job, e.Promote.Max)
	case KindCleanup:
		s += fmt.Sprintf(" j%d %s <=%s", e.Cleanup.Job, e.Cleanup.Moving, e.Cleanup.FenceTS)
	case KindFloor, KindArmTracker, KindPin, KindArmFence:
		g := e.Guard
		s += fmt.Sprintf(" j%d %s ts=%s", g.Job, g.Span, g.TS)
		if e.Kind == KindArmFence {
			s += fmt.Sprintf(" expect=v%d ->g%d", g.Expected, g.Target)
		}
	case KindAbandonStaged, KindRelease, KindDisarmFence, KindBarrier:
		if e.Job != 0 {
			s += fmt.Sprintf(" j%d", e.Job)
		}
	case KindConfig:
		s += fmt.Sprintf(" %v minview=v%d", e.Config.Voters, e.Config.MinView)
	case KindCompact:
		s += " <" + e.TS.String()
	case KindPrepare, KindCommit, KindRollback:
		t := e.Txn
		s += fmt.Sprintf(" %s keys=%d start=%s commit=%s", t.ID, len(t.Keys), t.StartTS, t.CommitTS)
		if t.OnePhase {
			s += " one-phase"
		}
		if len(t.Reads) > 0 {
			s += fmt.Sprintf(" reads=%d", len(t.Reads))
		}
	case KindDeleteRange:
		s += fmt.Sprintf(" %s@%s op=%s", e.DelRange.Span, e.DelRange.TS, e.DelRange.Op)
	}
	return s
}

// Result is what applying an entry produced.
type Result struct {
	Err        error
	TS         hlc.TS     // write, commit: the commit ts
	LastCommit hlc.TS     // the group's last commit ts after the entry
	Horizon    hlc.TS     // the highest ts the group's leaders can have issued or observed so far
	Cursor     []byte     // import: the stored cursor (also on a duplicate)
	Seq        uint64     // import: the stored sequence number
	Applied    int        // rows written by import, promote, cleanup or compaction
	Duplicate  bool       // import, commit, prepare: an already-applied step, a no-op
	Done       bool       // promote: nothing staged is left
	Puts       []mvcc.Row // write, commit, rollback, delete-range: the versions the entry created
	Tracked    hlc.TS     // barrier with a job: the lowest timestamp admitted in its span since the tracker was armed (0: none)
	Compacted  hlc.TS     // arm-tracker: the compaction watermark when it was armed
}
