package scenarios

import "shardsim/property"

// migrateProperties are the properties the migration scenarios judge.
var migrateProperties = []property.Name{
	property.MCatalogNonOverlap, property.MCatalogVersionMonotone, property.MSingleWriter, property.MNoLostWrite,
	property.MSnapshotReads, property.MLinearizable, property.MHLCMonotone, property.MFencedWritesRejected,
	property.MExactlyOnceCopy, property.MPhaseOrder, property.MCleanupSafe, property.MJobTerminates,
	property.MNoStaleRead, property.MTxnSerializable,
}

func init() {
	Register(Scenario{
		Name:        "migrate",
		Description: "one manual range split moves half a route to another raft group while clients write (some with their own timestamps), delete ranges, run transactions, read (latest and snapshot) and scan across both halves, through crashes, pauses, leader changes with apply-lagging leaders, membership changes, deposed leaders that keep acting, duplicated and late RPCs, lagging catalog watchers, compaction, clock skew and lost or ambiguous requests",
		Properties:  migrateProperties,
		Run:         func(cfg Config) (Result, error) { return runMigrate("migrate", splitOnce, cfg) },
	})
	Register(Scenario{
		Name:        "migrate-stale",
		Description: "a range split under nodes and coordinators whose catalog watchers lag far behind and read-heavy clients: the equal-stale window around CUTOVER, where only the read fence, the watermark and ownership queries stand between the clients and a stale read",
		Properties:  migrateProperties,
		Run:         func(cfg Config) (Result, error) { return runMigrate("migrate-stale", splitStale, cfg) },
	})
	Register(Scenario{
		Name:        "migrate-abandon",
		Description: "a range split is abandoned at a random phase before CUTOVER, under the same clients and faults as migrate",
		Properties:  migrateProperties,
		Run:         func(cfg Config) (Result, error) { return runMigrate("migrate-abandon", splitAbandoned, cfg) },
	})
}

func runMigrate(name string, kind migrateKind, cfg Config) (Result, error) {
	m, err := newMigrateWorld(name, kind, cfg)
	if err != nil {
		return Result{}, err
	}
	defer m.w.Loop.Close()
	m.w.Run()
	m.chk.final(cfg)
	m.count()
	if err := m.writeTLATrace(cfg); err != nil {
		return Result{}, err
	}
	return m.w.Result(), nil
}

// count publishes what the run did.
func (m *migrateWorld) count() {
	w := m.w
	for k, name := range recCountNames {
		w.Count(name, m.rec.counts[k])
	}
	w.Count("jobs", int64(m.chk.jobsSeen))
	w.Count("job_failures", m.chk.failedPhases)
	w.Count("versions_imported", m.chk.imported)
	w.Count("keys_moved", int64(len(m.chk.movedKeys)))
	w.Count("versions_promoted", m.chk.promoted)
	w.Count("versions_cleaned", m.chk.cleaned)
	w.Count("caller_ts_below_snapshot", m.chk.belowSnapshot)
	if m.kind == hotspotSplits {
		w.Count("hotspot_splits", m.chk.splits)
		w.Count("hotspot_declines", m.chk.declines)
		w.Count("hotspot_isolations", m.chk.isolated)
	}
	ns := m.net.Stats()
	w.Count("rpc_calls", int64(ns.Calls))
	w.Count("rpc_lost_requests", int64(ns.LostRequests))
	w.Count("rpc_lost_responses", int64(ns.LostResponses))
	w.Count("rpc_timeouts", int64(ns.Timeouts))
	w.Count("rpc_duplicated", int64(ns.Duplicated))
	cs := m.chaos.Stats()
	w.Count("leader_moves", int64(cs.GroupLeaderMoves))
	w.Count("crashes", int64(cs.Crashes))
	w.Count("pauses", int64(cs.Pauses))
	w.Count("clock_faults", int64(cs.ClockFaults))
	w.Count("membership_changes", int64(cs.MemberChanges))
	gs := m.cluster.Stats()
	w.Count("elections", int64(gs.Elections))
	w.Count("elections_apply_lagging", int64(gs.ApplyLaggingLeader))
	w.Count("stale_appends", int64(gs.StaleAppends))
	w.Count("log_truncations", int64(gs.Truncations))
	w.Count("snapshots_installed", int64(gs.Snapshots))
	ks := m.meta.Stats()
	w.Count("meta_indeterminate", int64(ks.Indeterminate))
	mc := m.env.Counters
	for _, c := range []struct {
		name string
		v    int
	}{
		{"reads_moved_by_view", mc.ReadsMovedByView}, {"reads_cutover_pending", mc.ReadsCutoverPending},
		{"reads_moved_by_owner", mc.ReadsMovedByOwner}, {"ownership_queries", mc.OwnerQueries},
		{"ownership_failures", mc.OwnerQueryFailures}, {"ownership_cache_hits", mc.OwnerCacheHits},
		{"caller_ts_writes", mc.CallerTSWrites}, {"caller_ts_rejected", mc.CallerTSRejected},
		{"fence_passes", mc.FencePasses}, {"view_stale_refusals", mc.ViewStale},
		{"ambiguous_cutovers", mc.AmbiguousCutovers}, {"barrier_waits", mc.BarrierWaits},
		{"barrier_new_voters", mc.BarrierNewVoters}, {"lock_drain_waits", mc.LockDrainWaits},
		{"locks_resolved", mc.LocksResolved}, {"stale_imports", mc.StaleImports},
		{"aborted_imports", mc.AbortedImports}, {"delta_below_snapshot", mc.DeltaBelowSnapshot},
		{"jobs_collected", mc.JobsCollected},
	} {
		w.Count(c.name, int64(c.v))
	}
}
