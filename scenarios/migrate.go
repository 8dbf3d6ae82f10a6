package scenarios

import "shardsim/property"

// migrateProperties are the properties the migration scenarios judge.
var migrateProperties = []property.Name{
	property.MCatalogNonOverlap, property.MCatalogVersionMonotone, property.MSingleWriter, property.MNoLostWrite,
	property.MSnapshotReads, property.MLinearizable, property.MHLCMonotone, property.MFencedWritesRejected,
	property.MExactlyOnceCopy, property.MPhaseOrder, property.MCleanupSafe, property.MJobTerminates,
}

func init() {
	Register(Scenario{
		Name:        "migrate",
		Description: "one manual range split moves half a route to another raft group while clients write, delete, read (latest and snapshot) and scan both halves, through crashes, pauses, leader changes, clock skew and lost or ambiguous requests",
		Properties:  migrateProperties,
		Run:         func(cfg Config) (Result, error) { return runMigrate("migrate", splitOnce, cfg) },
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
	m.w.Run()
	m.chk.final(cfg)
	m.count()
	return m.w.Result(), nil
}

// count publishes what the run did.
func (m *migrateWorld) count() {
	w := m.w
	for _, k := range []string{"writes_acked", "writes_ambiguous", "writes_failed", "reads", "scans"} {
		w.Count(k, m.rec.counts[k])
	}
	w.Count("jobs", int64(m.chk.jobsSeen))
	w.Count("job_failures", m.chk.failedPhases)
	w.Count("versions_imported", m.chk.imported)
	w.Count("keys_moved", int64(len(m.chk.movedKeys)))
	w.Count("versions_promoted", m.chk.promoted)
	w.Count("versions_cleaned", m.chk.cleaned)
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
	cs := m.chaos.Stats()
	w.Count("leader_moves", int64(cs.GroupLeaderMoves))
	w.Count("crashes", int64(cs.Crashes))
	w.Count("pauses", int64(cs.Pauses))
	w.Count("clock_faults", int64(cs.ClockFaults))
	ks := m.meta.Stats()
	w.Count("meta_indeterminate", int64(ks.Indeterminate))
}
