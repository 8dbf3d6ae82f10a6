package migrate

import (
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// The requests a group leader (or, for the barriers, a node) serves, and
// their answers. Client requests carry the catalog version the coordinator
// routed by (Observed, when HasVersion): the read fence judges reads by it.

// ReadReq reads one raw key at TS (0: the latest).
type ReadReq struct {
	Key        string
	TS         hlc.TS
	HasVersion bool
	Observed   uint64
}

// ReadResp is a read's answer; TS is the timestamp it was served at and
// Group the group that served it. It travels as a *ReadResp (the serving
// read keeps it).
type ReadResp struct {
	Read  mvcc.Read
	TS    hlc.TS
	Group int
}

// ScanReq scans family Family over route keys in Span at TS (0: latest).
// Raw, when set, narrows the scan to raw keys in it (a prefix scan of one
// user key's rows in a length-prefixed family, whose bracket is the whole
// family); the route-key span still decides routing and the read fence.
type ScanReq struct {
	Family     keys.Family
	Span       keys.Span
	TS         hlc.TS
	Limit      int
	HasVersion bool
	Observed   uint64
	Raw        keys.Span
}

// ScanResp is a scan's answer. It travels as a *ScanResp (the serving
// read keeps it).
type ScanResp struct {
	Rows  []mvcc.ScanRow
	TS    hlc.TS
	Group int
}

// WriteReq writes (or deletes) one raw key. TS, when set, is a
// caller-supplied commit timestamp; otherwise the leader issues one.
type WriteReq struct {
	Key        string
	Value      string
	Tombstone  bool
	TTLms      uint64
	TS         hlc.TS
	HasVersion bool
	Observed   uint64
	Op         string
}

// WriteResp carries the commit timestamp.
type WriteResp struct{ TS hlc.TS }

// DeleteRangeReq deletes every user key whose route key lies in Span.
type DeleteRangeReq struct {
	Span       keys.Span
	HasVersion bool
	Observed   uint64
	Op         string
}

// PrepareReq prepares a transaction: locks Keys, fixes a start timestamp
// and a commit timestamp (CommitTS when the caller supplies it). ReadTS is
// the snapshot the transaction read its keys at.
type PrepareReq struct {
	Txn        fsm.Txn
	HasVersion bool
	Observed   uint64
}

// PrepareResp carries the timestamps the transaction was prepared with.
type PrepareResp struct{ StartTS, CommitTS hlc.TS }

// CommitReq commits a prepared transaction, or (OnePhase) prepares and
// commits it in one step. Txn.Reads is validated with the keys; Txn.Stamps
// (one-phase only) are filled with the commit timestamp before proposing.
type CommitReq struct {
	Txn        fsm.Txn
	OnePhase   bool
	HasVersion bool
	Observed   uint64
}

// CommitResp is a commit's answer: the commit timestamp (which a stamped
// key embeds).
type CommitResp struct {
	TS        hlc.TS
	Duplicate bool
}

// RollbackReq rolls a transaction back (resolving its locks).
type RollbackReq struct{ Txn fsm.Txn }

// BarrierReq appends an entry; its answer is the group's last commit ts and
// horizon there and, with a job, the job's tracked minimum.
type BarrierReq struct{ Job uint64 }

// BarrierResp is a barrier's answer.
type BarrierResp struct {
	LastCommit hlc.TS
	Horizon    hlc.TS
	Tracked    hlc.TS
	Index      uint64
}

// ExportReq asks for one export chunk from the source's applied state.
type ExportReq struct{ Export mvcc.ExportRequest }

// ExportResp is the chunk.
type ExportResp struct{ Result mvcc.ExportResult }

// ImportReq appends one import batch.
type ImportReq struct {
	Job     uint64
	Bracket uint32
	Seq     uint64
	Rows    []mvcc.Row
	Cursor  []byte
	Moving  keys.Span
}

// ImportResp is the stored sequence number and cursor after the batch.
type ImportResp struct {
	Seq       uint64
	Cursor    []byte
	Duplicate bool
}

// GuardOp installs or removes one of a job's replicated guards on a group:
// the write tracker with its retention pin, a moved pin, the durable write
// floor (target readiness), a cutover read fence, or their release.
type GuardOp struct {
	Kind  fsm.Kind // KindArmTracker, KindPin, KindFloor, KindArmFence, KindDisarmFence, KindRelease
	Guard fsm.Guard
}

// GuardResp is a guard operation's answer.
type GuardResp struct {
	Index     uint64
	Compacted hlc.TS // arm-tracker: the compaction watermark then
	Tracked   hlc.TS
}

// StatusReq asks the target about a job's staged rows.
type StatusReq struct{ Job uint64 }

// StatusResp says whether promotion is complete (durably: applied).
type StatusResp struct {
	Promoted bool
	Staged   int
}

// CleanupReq deletes a moved span's source versions up to FenceTS.
type CleanupReq struct {
	Job     uint64
	Moving  keys.Span
	FenceTS hlc.TS
}

// AbandonStagedReq deletes a job's staged rows on the target.
type AbandonStagedReq struct{ Job uint64 }

// LocksReq lists the pending transaction locks in Span.
type LocksReq struct{ Span keys.Span }

// LocksResp is that list.
type LocksResp struct{ Locks []fsm.LockRow }

// MembersReq asks a group's leader for the group's voter set.
type MembersReq struct{}

// MembersResp is the voter set.
type MembersResp struct{ Voters []int }

// OwnerReq asks group 0 who owns the routes intersecting Span, read from
// the metadata store (authoritative).
type OwnerReq struct{ Span keys.Span }

// OwnerResp is the answer: the catalog version read and the routes.
type OwnerResp struct {
	Version uint64
	Routes  []catalog.Route
}

// ViewReq asks a node for its routing state (node-addressed).
type ViewReq struct{}

// ViewResp is a node's catalog view version and watermark.
type ViewResp struct {
	Version   uint64
	Watermark uint64
}

// GuardReq asks a node whether its voter of Group has applied a job's
// guard (node-addressed): an all-voter barrier asks every voter.
type GuardReq struct {
	Group int
	Kind  fsm.Kind // KindArmTracker, KindFloor, KindArmFence, KindDisarmFence, KindRelease
	Job   uint64
	TS    hlc.TS // KindFloor: at least this floor
}

// GuardAck is a node's answer: whether its voter holds the guard.
type GuardAck struct {
	Present bool
	Applied uint64
}

// DrainReq asks a node how many reads of Span its leaders admitted and
// have not finished (node-addressed); with AtOrBelow, only those whose
// timestamp is fixed at or below it (a wrong variant's question).
type DrainReq struct {
	Span      keys.Span
	AtOrBelow hlc.TS
}

// DrainResp is that count.
type DrainResp struct{ Open int }

// AccessReq collects (and resets) the leader's access counters.
type AccessReq struct{}

// AccessResp is one window's counters per route.
type AccessResp struct{ Routes []RouteAccess }

// RouteAccess is what a leader saw on one route during a window.
type RouteAccess struct {
	RouteID uint64
	Reads   int
	Writes  int
	Keys    []KeyCount // sampled route keys, sorted by key
}

// KeyCount is one sampled key and how often it was accessed.
type KeyCount struct {
	Key   string
	Count int
}

// The migration's requests between groups may arrive twice (their
// receivers are idempotent: batch sequence numbers, guard states).
func (ExportReq) Retransmittable()        {}
func (ImportReq) Retransmittable()        {}
func (GuardOp) Retransmittable()          {}
func (BarrierReq) Retransmittable()       {}
func (StatusReq) Retransmittable()        {}
func (CleanupReq) Retransmittable()       {}
func (AbandonStagedReq) Retransmittable() {}
func (LocksReq) Retransmittable()         {}
func (MembersReq) Retransmittable()       {}
func (RollbackReq) Retransmittable()      {}
