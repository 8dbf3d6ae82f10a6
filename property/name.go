package property

// Name is a property's catalog name, e.g. "C.MutualExclusion". The prefix
// names the system: KV (the etcd model), C (shard coordination), M (range
// split and migration), KM (key-level migration), L (delta lists), H (the
// harness itself).
type Name string

// String returns the name as written in the catalog.
func (n Name) String() string { return string(n) }

// The KV model (simkv).
const (
	KVLinearizable     Name = "KV.Linearizable"
	KVRevisionMonotone Name = "KV.RevisionMonotone"
	KVLeaseExpiry      Name = "KV.LeaseExpiry"
	KVWatchOrdered     Name = "KV.WatchOrdered"
	KVWatchUnique      Name = "KV.WatchUnique"
	KVWatchAtomic      Name = "KV.WatchAtomic"
	KVWatchReliable    Name = "KV.WatchReliable"
	KVWatchResumable   Name = "KV.WatchResumable"
)

// Shard coordination (model/coord, seed 004).
const (
	CMutualExclusion            Name = "C.MutualExclusion"
	CZombieRejection            Name = "C.ZombieRejection"
	CFenceMonotonicity          Name = "C.FenceMonotonicity"
	CTerminalIrreversibility    Name = "C.TerminalIrreversibility"
	CTerminalUnleased           Name = "C.TerminalUnleased"
	CRecordInvariants           Name = "C.RecordInvariants"
	CCursorMonotonicity         Name = "C.CursorMonotonicity"
	CCursorBounds               Name = "C.CursorBounds"
	CSplitCoverage              Name = "C.SplitCoverage"
	CSplitAtomicity             Name = "C.SplitAtomicity"
	CIdempotency                Name = "C.Idempotency"
	CTenantIsolation            Name = "C.TenantIsolation"
	CRunTerminalIrreversibility Name = "C.RunTerminalIrreversibility"
	CCooldown                   Name = "C.Cooldown"
	CEventuallyLeased           Name = "C.EventuallyLeased"
	CConvergence                Name = "C.Convergence"
)

// Range split and cross-group migration (model/migrate, seeds 000 and 003).
const (
	MCatalogNonOverlap      Name = "M.CatalogNonOverlap"
	MCatalogVersionMonotone Name = "M.CatalogVersionMonotone"
	MSingleWriter           Name = "M.SingleWriter"
	MNoLostWrite            Name = "M.NoLostWrite"
	MSnapshotReads          Name = "M.SnapshotReads"
	MLinearizable           Name = "M.Linearizable"
	MHLCMonotone            Name = "M.HLCMonotone"
	MFencedWritesRejected   Name = "M.FencedWritesRejected"
	MNoStaleRead            Name = "M.NoStaleRead"
	MExactlyOnceCopy        Name = "M.ExactlyOnceCopy"
	MPhaseOrder             Name = "M.PhaseOrder"
	MCleanupSafe            Name = "M.CleanupSafe"
	MJobTerminates          Name = "M.JobTerminates"
	// MTxnSerializable is this project's addition (see Extras): the data
	// plane's transactions are atomic and their committed dependencies
	// acyclic, across the migration.
	MTxnSerializable Name = "M.TxnSerializable"
)

// Key-level migration (model/keymove, seed 002).
const (
	KMSingleSwap         Name = "KM.SingleSwap"
	KMNoDualMapping      Name = "KM.NoDualMapping"
	KMVerifiedBeforeSwap Name = "KM.VerifiedBeforeSwap"
	KMNoLoss             Name = "KM.NoLoss"
	KMIdempotent         Name = "KM.Idempotent"
	KMCompletes          Name = "KM.Completes"
	// KMLinearizable is this project's addition (see Extras): client reads
	// and writes of the keys being moved, per key, linearize against a
	// register across the migration.
	KMLinearizable Name = "KM.Linearizable"
)

// Delta and claim collection metadata (model/listdelta, seed 001).
const (
	LLinearizable   Name = "L.Linearizable"
	LNoLostItem     Name = "L.NoLostItem"
	LNoDoublePop    Name = "L.NoDoublePop"
	LMetaConsistent Name = "L.MetaConsistent"
	// LCountConsistent is this project's addition (see Extras): a hash's,
	// set's or sorted set's count (base plus unapplied deltas) equals the
	// number of its members, the L.MetaConsistent of the counted
	// collections.
	LCountConsistent Name = "L.CountConsistent"
)

// The harness.
const (
	HDeterministic Name = "H.Deterministic"
	HReplayable    Name = "H.Replayable"
	HBugsDetected  Name = "H.BugsDetected"
	// HPanic is this project's addition (see Extras): a panic inside a
	// world is reported as a violation of it, never as a crash of the
	// harness, so a sweep records it like any other finding.
	HPanic Name = "H.Panic"
	// CLinearizable is this project's addition (see Extras): each shard's
	// history of coordination requests linearizes against the protocol's
	// transitions. A history that does not, and whose first inexplicable
	// answer names no more specific property, is reported under it, as is
	// a check that ran out of time (verdict unknown).
	CLinearizable Name = "C.Linearizable"
)
