package property

import (
	"cmp"
	"slices"
)

// Kind says when a property is judged.
type Kind string

// The kinds of PROPERTIES.md.
const (
	// Safety properties are checked after every step or on the history.
	Safety Kind = "safety"
	// Liveness properties are checked after the heal phase, within a
	// bounded virtual time.
	Liveness Kind = "liveness"
	// Harness properties are about the harness itself (determinism,
	// replay, detection budgets).
	Harness Kind = "harness"
)

// Entry is one property of the catalog: its name, kind and a short
// statement (the full statement is in PROPERTIES.md).
type Entry struct {
	Name Name
	Kind Kind
	Text string
}

// Extras are the catalog entries this project adds to PROPERTIES.md. The
// catalog test accepts exactly these as absent from the document.
var Extras = []Name{HPanic, KMLinearizable, MTxnSerializable, CLinearizable, LCountConsistent}

var catalog = []Entry{
	{KVLinearizable, Safety, "client KV operations, ambiguous writes allowed either way, linearize against etcd's KV semantics"},
	{KVRevisionMonotone, Safety, "the store revision never decreases and rises by exactly one per changing write"},
	{KVLeaseExpiry, Safety, "a lease's keys go in one revision when, and not before, its TTL lapses; revoke does the same at once"},
	{KVWatchOrdered, Safety, "watch events arrive in revision order"},
	{KVWatchUnique, Safety, "each watch event arrives once"},
	{KVWatchAtomic, Safety, "the events of one transaction arrive together"},
	{KVWatchReliable, Safety, "a watch stream has no gaps"},
	{KVWatchResumable, Safety, "a watch resumed from revision r sees exactly the events after r, or a compaction error"},
	{CMutualExclusion, Safety, "no two unexpired leases on one shard; accepted progress never interleaves two fence epochs"},
	{CZombieRejection, Safety, "a lease-gated operation with a fence below the shard's is rejected"},
	{CFenceMonotonicity, Safety, "a shard's fence never decreases; acquire and unpark raise it"},
	{CTerminalIrreversibility, Safety, "Done and Split never change; Parked only returns to Active by unpark with a fence bump"},
	{CTerminalUnleased, Safety, "a Done, Split or Parked shard holds no lease"},
	{CRecordInvariants, Safety, "every shard and run record satisfies its structural invariants"},
	{CCursorMonotonicity, Safety, "a shard's cursor never moves backwards and never returns to none"},
	{CCursorBounds, Safety, "a cursor lies in its shard's [start, end)"},
	{CSplitCoverage, Safety, "split children (or parent and residual) exactly partition the old range"},
	{CSplitAtomicity, Safety, "a Split parent's children all exist; no derived shard lacks its parent's record of it"},
	{CIdempotency, Safety, "a retried op id with the same payload returns the first result without a second effect; another payload is a conflict"},
	{CTenantIsolation, Safety, "no request of tenant A reads or changes tenant B's records or learns B's data from an error"},
	{CRunTerminalIrreversibility, Safety, "run states Done, Failed and Cancelled never change"},
	{CCooldown, Safety, "with a claim cooldown, one worker's successful claims are at least that far apart"},
	{CLinearizable, Safety, "each shard's history of coordination requests linearizes against the protocol's transitions"},
	{CEventuallyLeased, Liveness, "an Active, unleased shard is eventually leased while a worker is available"},
	{CConvergence, Liveness, "after heal every shard and the run reach a terminal state"},
	{MCatalogNonOverlap, Safety, "no published catalog snapshot has overlapping routes"},
	{MCatalogVersionMonotone, Safety, "the catalog version rises by one per change and no node's applied version decreases"},
	{MSingleWriter, Safety, "at every instant at most one group would accept a write for a key"},
	{MNoLostWrite, Safety, "every acknowledged write stays readable at its commit timestamp until superseded"},
	{MSnapshotReads, Safety, "a read at ts returns the newest committed version at or below ts"},
	{MLinearizable, Safety, "per-key client operations on the moving range are linearizable across the migration"},
	{MHLCMonotone, Safety, "target commit timestamps after CUTOVER exceed max(max_imported_ts, fence_ts)"},
	{MFencedWritesRejected, Safety, "once the write fence is in force the source accepts no write to the moving range"},
	{MNoStaleRead, Safety, "after CUTOVER no source read returns a value older than a write the target acknowledged before it began"},
	{MExactlyOnceCopy, Safety, "every source version with commit_ts <= fence_ts reaches the target exactly once"},
	{MPhaseOrder, Safety, "a SplitJob takes only its state machine's transitions; CUTOVER once; no abandon after it"},
	{MCleanupSafe, Safety, "moved source data is deleted only after durable promotion and drained reads"},
	{MJobTerminates, Liveness, "after heal every split job reaches DONE or ABANDONED, leaving no migration guard or staged row behind"},
	{MTxnSerializable, Safety, "committed transactions are atomic and their dependency graph (with real-time order) is acyclic; aborted ones leave nothing"},
	{KMSingleSwap, Safety, "a key's assignment changes at most once per migration plan"},
	{KMNoDualMapping, Safety, "a reader never sees a key mapped to both or neither shard"},
	{KMVerifiedBeforeSwap, Safety, "no key is swapped before its copy was verified (unless forced)"},
	{KMNoLoss, Safety, "after the plan ends every key's value is on its assigned shard"},
	{KMIdempotent, Safety, "running the same plan again, from any checkpoint, ends in the same state"},
	{KMCompletes, Liveness, "after heal the plan reaches Done with every key Done or Failed and reported"},
	{KMLinearizable, Safety, "per-key client reads and writes are linearizable across the key migration"},
	{LLinearizable, Safety, "list operations are linearizable against a deque model"},
	{LNoLostItem, Safety, "no pushed item disappears unless a pop returned it"},
	{LNoDoublePop, Safety, "no item is returned by two pops"},
	{LMetaConsistent, Safety, "base metadata plus the unapplied deltas equals the true head, tail and length"},
	{LCountConsistent, Safety, "a hash, set or sorted set's count (base plus unapplied deltas) equals the number of its members"},
	{HDeterministic, Harness, "same scenario, options and choices give the same trace digest anywhere"},
	{HReplayable, Harness, "every corpus file replays to its recorded verdict and digest"},
	{HBugsDetected, Harness, "every registered bug is detected within its sweep budget"},
	{HPanic, Harness, "a panic inside a simulated world is reported as a verdict naming where it happened, never as a harness crash"},
}

// Catalog returns every property, sorted by name.
func Catalog() []Entry {
	out := slices.Clone(catalog)
	slices.SortFunc(out, func(a, b Entry) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the catalog entry of name.
func Lookup(name Name) (Entry, bool) {
	for _, e := range catalog {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// Known reports whether name is in the catalog.
func Known(name Name) bool {
	_, ok := Lookup(name)
	return ok
}
