package linearizability

import "sort"

// Property is one entry of the property catalog (../shared/design/PROPERTIES.md):
// every checker and TLA+ invariant uses these names.
type Property struct {
	Name string
	Kind string // "safety", "liveness" or "harness"
	Text string
}

var catalog = []Property{
	{"KV.Linearizable", "safety", "client KV operations, ambiguous writes allowed either way, linearize against etcd's KV semantics"},
	{"KV.RevisionMonotone", "safety", "the store revision never decreases and rises by exactly one per changing write"},
	{"KV.LeaseExpiry", "safety", "a lease's keys go in one revision when, and not before, its TTL lapses; revoke does the same at once"},
	{"KV.WatchOrdered", "safety", "watch events arrive in revision order"},
	{"KV.WatchUnique", "safety", "each watch event arrives once"},
	{"KV.WatchAtomic", "safety", "the events of one transaction arrive together"},
	{"KV.WatchReliable", "safety", "a watch stream has no gaps"},
	{"KV.WatchResumable", "safety", "a watch resumed from revision r sees exactly the events after r, or a compaction error"},
	{"C.MutualExclusion", "safety", "no two unexpired leases on one shard; accepted progress never interleaves two fence epochs"},
	{"C.ZombieRejection", "safety", "a lease-gated operation with a fence below the shard's is rejected"},
	{"C.FenceMonotonicity", "safety", "a shard's fence never decreases; acquire and unpark raise it"},
	{"C.TerminalIrreversibility", "safety", "Done and Split never change; Parked only returns to Active by unpark with a fence bump"},
	{"C.TerminalUnleased", "safety", "a Done, Split or Parked shard holds no lease"},
	{"C.RecordInvariants", "safety", "every shard and run record satisfies its structural invariants"},
	{"C.CursorMonotonicity", "safety", "a shard's cursor never moves backwards and never returns to none"},
	{"C.CursorBounds", "safety", "a cursor lies in its shard's [start, end)"},
	{"C.SplitCoverage", "safety", "split children (or parent and residual) exactly partition the old range"},
	{"C.SplitAtomicity", "safety", "a Split parent's children all exist; no derived shard lacks its parent's record of it"},
	{"C.Idempotency", "safety", "a retried op id with the same payload returns the first result without a second effect; another payload is a conflict"},
	{"C.TenantIsolation", "safety", "no request of tenant A reads or changes tenant B's records or learns B's data from an error"},
	{"C.RunTerminalIrreversibility", "safety", "run states Done, Failed and Cancelled never change"},
	{"C.Cooldown", "safety", "with a claim cooldown, one worker's successful claims are at least that far apart"},
	{"C.EventuallyLeased", "liveness", "an Active, unleased shard is eventually leased while a worker is available"},
	{"C.Convergence", "liveness", "after heal every shard and the run reach a terminal state"},
	{"M.CatalogNonOverlap", "safety", "no published catalog snapshot has overlapping routes"},
	{"M.CatalogVersionMonotone", "safety", "the catalog version rises by one per change and no node's applied version decreases"},
	{"M.SingleWriter", "safety", "at every instant at most one group would accept a write for a key"},
	{"M.NoLostWrite", "safety", "every acknowledged write stays readable at its commit timestamp until superseded"},
	{"M.SnapshotReads", "safety", "a read at ts returns the newest committed version at or below ts"},
	{"M.Linearizable", "safety", "per-key client operations on the moving range are linearizable across the migration"},
	{"M.HLCMonotone", "safety", "target commit timestamps after CUTOVER exceed max(max_imported_ts, fence_ts)"},
	{"M.FencedWritesRejected", "safety", "once the write fence is in force the source accepts no write to the moving range"},
	{"M.NoStaleRead", "safety", "after CUTOVER no source read returns a value older than a write the target acknowledged before it began"},
	{"M.ExactlyOnceCopy", "safety", "every source version with commit_ts <= fence_ts reaches the target exactly once"},
	{"M.PhaseOrder", "safety", "a SplitJob takes only its state machine's transitions; CUTOVER once; no abandon after it"},
	{"M.CleanupSafe", "safety", "moved source data is deleted only after durable promotion and drained reads"},
	{"M.JobTerminates", "liveness", "after heal every split job reaches DONE or ABANDONED"},
	{"H.Deterministic", "harness", "same scenario, options and choices give the same trace digest anywhere"},
	{"H.Replayable", "harness", "every corpus file replays to its recorded verdict and digest"},
	{"H.BugsDetected", "harness", "every registered bug is detected within its sweep budget"},
}

// Properties returns the catalog sorted by name.
func Properties() []Property {
	out := append([]Property(nil), catalog...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// KnownProperty reports whether name is in the catalog.
func KnownProperty(name string) bool {
	for _, p := range catalog {
		if p.Name == name {
			return true
		}
	}
	return false
}
