package scenarios

import (
	"fmt"
	"shardsim/fate"
	"time"

	"shardsim/model/migrate"
	"shardsim/model/migrate/group"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/rpc"
	"shardsim/nemesis"
	"shardsim/simkv"
)

// migrateOptions is everything a migration run draws before it starts: shape,
// workload, protocol tunables, fault mix and the operator's plan. All of
// it comes from drawMigrateOptions, in one place, and the swarm prints it.
type migrateOptions struct {
	clients, opsPer int
	coordLag        time.Duration   // how late a coordinator's watcher applies a catalog
	nodeLag         []time.Duration // per node: how late its watcher applies a catalog
	wl              *migrateWorkload
	proto           migrate.Config
	netFaults       fate.Config // the group network's request faults
	netChaos        rpc.Chaos
	metaFaults      fate.Config // the metadata store's request faults
	groups          group.Config
	maxSkew         time.Duration
	passive         float64 // share of coordinators that never read the catalog on the request path
	fresh           int     // migrate-stale: how many clients (the first ones) write with an up-to-date view
	split           splitPlan
	priorJobs       int // terminal jobs already in the job history when the run starts

	leaderRate, crashRate, pauseRate, skewRate, partRate, metaLeader, memberRate float64
}

// drawMigrateOptions draws one run's options for scenario kind.
func drawMigrateOptions(sw *nemesis.Swarm, kind migrateKind) migrateOptions {
	var o migrateOptions
	o.clients = sw.Int("clients", 2, 4)
	o.opsPer = sw.Int("ops_per_client", 25, 50)
	drawDataPlane(sw, &o)
	switch kind {
	case splitOnce, splitAbandoned, splitStale:
		o.split.at = sw.Duration("split_at", 50*time.Millisecond, time.Second)
		o.split.route = 2
		o.split.key = fmt.Sprintf("k%02d", sw.Enum("split_key", 2, 10))
		o.split.target = 2
		if kind == splitAbandoned {
			o.split.abandonAt = job.Phase(sw.Enum("abandon_phase", int(job.Planned), int(job.DeltaCopy)))
		}
		if kind == splitStale {
			staleOptions(sw, &o)
		}
	case hotspotSplits:
		o.opsPer += hotspotOptions(sw, &o.proto, o.wl)
	}
	return o
}

// drawDataPlane draws what every world on the migrating data plane shares:
// watcher lags, the workload of the key-value clients, the protocol's
// tunables, the networks, the groups and the fault mix.
func drawDataPlane(sw *nemesis.Swarm, o *migrateOptions) {
	o.coordLag = sw.Duration("watch_lag", 20*time.Millisecond, time.Second)
	nodeLagMax := sw.Duration("node_watch_lag", 10*time.Millisecond, 600*time.Millisecond)
	o.wl = drawWorkload(sw)
	o.proto = drawProtocol(sw)
	o.netFaults, o.metaFaults = drawMigrateNets(sw)
	o.netChaos = rpc.Chaos{Duplicate: sw.Rate("net_duplicate", 0.5, 0.01, 0.1), MaxDupLag: 400 * time.Millisecond}
	o.groups = group.Config{Nodes: migrateNodes, Groups: migrateGroups,
		ReplMin: 200 * time.Microsecond, ReplMax: 2 * time.Millisecond,
		ApplyMin: 100 * time.Microsecond, ApplyMax: time.Millisecond,
		ElectMin: 5 * time.Millisecond, ElectMax: 60 * time.Millisecond}
	o.groups.SlowApply = sw.Rate("slow_apply", 0.6, 0.02, 0.3)
	o.groups.SlowApplyMax = sw.Duration("slow_apply_max", 20*time.Millisecond, 300*time.Millisecond)
	o.groups.LearnMax = sw.Duration("learn_max", time.Millisecond, 200*time.Millisecond)
	o.leaderRate = sw.Rate("leader_change", 0.6, 0.02, 0.2)
	o.crashRate = sw.Rate("crash", 0.5, 0.01, 0.08)
	o.pauseRate = sw.Rate("pause", 0.4, 0.01, 0.08)
	o.skewRate = sw.Rate("clock_skew", 0.6, 0.05, 0.3)
	o.maxSkew = sw.Duration("max_skew", 0, 2*time.Second)
	o.partRate = sw.Rate("meta_partition", 0.4, 0.01, 0.1)
	o.metaLeader = sw.Rate("meta_leader_change", 0.4, 0.01, 0.1)
	o.memberRate = sw.Rate("membership_change", 0.6, 0.02, 0.15)
	// The cluster has moved ranges before: its job history is partly full,
	// so finishing this run's jobs collects the oldest entries.
	o.priorJobs = sw.Int("prior_jobs", 0, maxPriorJobs)
	for n := 0; n < migrateNodes; n++ {
		o.nodeLag = append(o.nodeLag, sw.Duration(nodeLagKnobs[n], 0, nodeLagMax))
	}
}

// drawMigrateNets draws the request faults of the group network and of
// the metadata store.
func drawMigrateNets(sw *nemesis.Swarm) (fate.Config, fate.Config) {
	nf := nemesis.DrawRequestFaults(sw, "net_", nemesis.RequestFaultRange{On: 0.5, MinLose: 0.005, MaxLose: 0.05, MinDelay: 0.01, MaxDelay: 0.1}, rpc.Quiet())
	nf.MaxDelay = 300 * time.Millisecond
	kf := nemesis.DrawRequestFaults(sw, "meta_", nemesis.RequestFaultRange{On: 0.4, MinLose: 0.005, MaxLose: 0.05, MinDelay: 0.01, MaxDelay: 0.1}, simkv.DefaultFaults())
	kf.MaxDelay = 500 * time.Millisecond
	kf.Timeout = 300 * time.Millisecond
	return nf, kf
}

// drawWorkload draws what the clients do.
func drawWorkload(sw *nemesis.Swarm) *migrateWorkload {
	wl := &migrateWorkload{userKeys: migrateUserKeys(), hotShare: 0.3, pace: 100 * time.Millisecond}
	wl.internal = sw.Rate("internal_keys", 0.9, 0.1, 0.5)
	wl.unversioned = sw.Rate("unversioned_writes", 0.8, 0.1, 0.6)
	wl.ttl = sw.Rate("ttl_writes", 0.7, 0.05, 0.3)
	wl.txn = sw.Rate("txn_share", 0.8, 0.1, 0.4)
	wl.onePhase = sw.Rate("one_phase_txns", 0.6, 0.1, 0.5)
	wl.callerTS = sw.Rate("caller_ts", 0.7, 0.1, 0.5)
	wl.rangeDelete = sw.Rate("range_deletes", 0.6, 0.02, 0.1)
	wl.txnStall = sw.Rate("txn_stall", 0.5, 0.05, 0.3)
	wl.abort = sw.Rate("txn_abort", 0.5, 0.02, 0.2)
	// client_rest_until is not drawn (0 unless set): a model checker's
	// preset sets it so that a client's first operation falls before the
	// migration and its next ones inside it (see modelcheck's presets).
	wl.restUntil = sw.FixedDuration("client_rest_until", 0, 10*time.Second)
	wl.readShare = 30
	return wl
}

// drawProtocol draws the protocol's tunables.
func drawProtocol(sw *nemesis.Swarm) migrate.Config {
	p := migrate.DefaultConfig()
	p.ExportRows = sw.Int("export_rows", 2, 12)
	p.ExportBudget = p.ExportRows + sw.Int("export_budget_extra", 0, 12)
	p.PromoteBatch = sw.Int("promote_batch", 1, 4)
	p.PromotePace = sw.Duration("promote_pace", 5*time.Millisecond, 80*time.Millisecond)
	p.Grace = sw.Duration("grace", 10*time.Millisecond, 200*time.Millisecond)
	p.StepRetries = sw.Int("step_retries", 2, 6)
	p.HeartbeatEvery = sw.Duration("heartbeat_every", 20*time.Millisecond, 200*time.Millisecond)
	p.OwnershipTTL = sw.Duration("ownership_ttl", 20*time.Millisecond, time.Second)
	p.OwnerTimeout = sw.Duration("owner_timeout", 5*time.Millisecond, 200*time.Millisecond)
	p.CompactEvery = sw.Duration("compact_every", 100*time.Millisecond, time.Second)
	p.Retention = sw.Duration("retention", 200*time.Millisecond, 3*time.Second)
	p.LockTTL = sw.Duration("lock_ttl", 50*time.Millisecond, 500*time.Millisecond)
	p.History = job.HistoryBound{MaxEntries: sw.Int("history_max_entries", 1, 24),
		MaxAge: sw.Duration("history_max_age", 500*time.Millisecond, 30*time.Second)}
	return p
}

// staleOptions makes migrate-stale's world: nodes and coordinators whose
// watchers lag far behind, heartbeats that are slow, and clients that read
// far more than they write, so the equal-stale window around the cutover
// opens as often as it can.
func staleOptions(sw *nemesis.Swarm, o *migrateOptions) {
	o.coordLag = sw.Duration("stale_coord_lag", 500*time.Millisecond, 3*time.Second)
	for n := range o.nodeLag {
		o.nodeLag[n] = sw.Duration(staleLagKnobs[n], 200*time.Millisecond, 2*time.Second)
	}
	o.proto.HeartbeatEvery = sw.Duration("stale_heartbeat_every", 20*time.Millisecond, 300*time.Millisecond)
	o.proto.OwnershipTTL = sw.Duration("stale_ownership_ttl", 5*time.Millisecond, 100*time.Millisecond)
	o.wl.readShare = 70
	o.wl.pace = 40 * time.Millisecond
	o.opsPer += sw.Int("stale_extra_ops", 60, 140) // keep reading well past the cutover
	o.split.at = sw.Duration("stale_split_at", 20*time.Millisecond, 300*time.Millisecond)
	o.passive = sw.Rate("passive_coordinators", 1, 0.3, 1)
	o.fresh = sw.Int("fresh_writers", 1, 2)
	o.clients += o.fresh
	// A sluggish default group: ownership answers (read from the metadata
	// store by the group-0 leader) often come too late, and reads fail
	// closed.
	o.metaFaults.Delay = sw.Rate("stale_meta_delay", 1, 0.1, 0.4)
	o.metaFaults.MaxDelay = 500 * time.Millisecond // past the 300ms deadline: some CUTOVER CASes end ambiguous
	o.wl.rangeDelete = sw.Rate("stale_range_deletes", 1, 0.05, 0.3)
	// Half the runs give ownership queries a deadline of a few
	// milliseconds, shorter than a metadata round trip often takes: only
	// then do queries time out often enough that a read fence which serves
	// on a timeout (migrate.ownership-timeout-serves) meets a stale view
	// (with deadlines of 5ms and more it did in about 0.2% of seeds).
	if sw.Flag("stale_owner_rush", 0.5) {
		o.proto.OwnerTimeout = sw.Duration("stale_owner_rush_timeout", time.Millisecond, 4*time.Millisecond)
	} else {
		o.proto.OwnerTimeout = sw.Duration("stale_owner_timeout", 5*time.Millisecond, 60*time.Millisecond)
	}
}
