package migrate

import (
	"time"

	"shardsim/model/bugs"
	"shardsim/model/migrate/group"
	"shardsim/model/migrate/hotspot"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
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
	}
}

// Env is what every node of the data plane shares: the loop, the cluster
// of groups, the network to group leaders and the metadata store.
type Env struct {
	Loop    *simclock.Loop
	Cluster *group.Cluster
	Net     *rpc.Network
	Meta    *simkv.Server
	Bugs    bugs.Set
	Cfg     Config
	Hooks   Hooks
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
}
