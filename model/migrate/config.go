package migrate

import (
	"time"

	"shardsim/model/bugs"
	"shardsim/model/migrate/group"
	"shardsim/model/migrate/hotspot"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/route"
	"shardsim/model/migrate/rpc"
	"shardsim/simclock"
	"shardsim/simkv"
)

// Config holds the protocol's tunables.
type Config struct {
	EpochMs       uint64        // added to node clock readings (ms) for HLC physical time
	CeilingWindow time.Duration // how far ahead of its clock a leader raises the ceiling

	ExportRows   int           // rows per export chunk
	ExportBudget int           // rows scanned per export chunk
	PromoteBatch int           // staged versions per promotion entry
	PromotePace  time.Duration // pause between promotion entries
	Grace        time.Duration // CLEANUP: wait after CUTOVER before deleting source data

	Poll          time.Duration // migrator idle poll
	Backoff       time.Duration // base retry backoff
	StepRetries   int           // consecutive failures of one step before FAILED
	FailedBackoff time.Duration // pause in FAILED before retrying
	History       job.HistoryBound

	Detect   bool // run the hotspot detector on the group-0 leader
	Detector hotspot.Config

	HeartbeatEvery time.Duration // group-0 leader's watermark heartbeats
	OwnershipTTL   time.Duration // how long an ownership answer is cached
	OwnerTimeout   time.Duration // how long a read waits for an ownership answer before failing closed
	CompactEvery   time.Duration // each leader compacts this often (0: never)
	Retention      time.Duration // history kept below a leader's clock by compaction
	LockTTL        time.Duration // a migration's lock drain rolls back locks older than this
	LiveJobCap     int           // live jobs at most (FAILED ones included)
}

// DefaultConfig returns the tunables the scenarios start from.
func DefaultConfig() Config {
	return Config{
		EpochMs:       1_000_000,
		CeilingWindow: 300 * time.Millisecond,
		ExportRows:    16,
		ExportBudget:  32,
		PromoteBatch:  8,
		PromotePace:   10 * time.Millisecond,
		Grace:         100 * time.Millisecond,
		Poll:          200 * time.Millisecond,
		Backoff:       10 * time.Millisecond,
		StepRetries:   6,
		FailedBackoff: 200 * time.Millisecond,
		History:       job.DefaultHistoryBound,
		Detector:      hotspot.DefaultConfig(),

		HeartbeatEvery: 100 * time.Millisecond,
		OwnershipTTL:   300 * time.Millisecond,
		OwnerTimeout:   100 * time.Millisecond,
		CompactEvery:   500 * time.Millisecond,
		Retention:      2 * time.Second,
		LockTTL:        300 * time.Millisecond,
		LiveJobCap:     4,
	}
}

// Env is what every node of the data plane shares: the loop, the cluster
// of groups, the network to group leaders and nodes, the metadata store,
// each node's routing engine (durable node-local state) and watcher lag,
// and the counters the protocol keeps of its guards.
type Env struct {
	Loop     *simclock.Loop
	Cluster  *group.Cluster
	Net      *rpc.Network
	Meta     *simkv.Server
	Engines  []*route.Engine
	WatchLag []time.Duration // per node: how late its watcher applies a snapshot, at most
	Bugs     bugs.Set
	Cfg      Config
	Hooks    Hooks
	Counters *Counters

	catalogs catalogCache // the world's decoded catalog snapshots
}

// Counters count how often each guard of the protocol acted (reachability:
// a sweep that never reaches one has not tested it).
type Counters struct {
	ReadsMovedByView    int // reads a node's view showed moved
	ReadsCutoverPending int // reads an armed cutover read fence refused
	ReadsMovedByOwner   int // reads an ownership answer showed moved
	OwnerQueries        int // ownership queries sent to group 0
	OwnerQueryFailures  int // ... that got no answer (failed closed)
	OwnerCacheHits      int // reads decided by a cached ownership answer
	CallerTSWrites      int // writes (and prepares) with a caller-supplied timestamp
	CallerTSRejected    int // ... refused as too old (timestamp cache, floor)
	FencePasses         int // commits with lock proof (and rollbacks) admitted through a write fence
	ViewStale           int // requests a leader refused because its view was older than its group requires
	AmbiguousCutovers   int // CUTOVER CASes whose answer was lost, resolved by reading back
	BarrierWaits        int // all-voter barrier rounds that found a voter not yet there
	BarrierNewVoters    int // voters a barrier asked after the voter set changed
	LockDrainWaits      int // drain rounds that found pending locks in the moving span
	LocksResolved       int // stale locks the drain rolled back
	StaleImports        int // import batches the target answered as already stored (repeated, stale, duplicated)
	AbortedImports      int // import batches refused because the job was abandoned on the target
	DeltaBelowSnapshot  int // jobs whose delta floor lay below snapshot_ts
	JobsCollected       int // history entries evicted by job GC
}

// Hooks lets a harness observe protocol-internal moments that have no
// durable trace (reads admitted and finished on a leader: a read is named
// by group, node, leader term and a per-incarnation id). Nil fields are
// ignored; hooks must not change the world.
type Hooks struct {
	ReadOpen  func(group, node int, term, id uint64, span keys.Span)
	ReadClose func(group, node int, term, id uint64)
	// Detected is told each hotspot decision: a split (job != 0) or a
	// decline.
	Detected func(d hotspot.Decision, job uint64)
	// ViewAdopted is told each catalog version a node's watcher applies.
	ViewAdopted func(node int, version uint64)
}
