package migrate

import (
	"shardsim/model/bugs"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
)

// plan arms the source's write tracker and retention pin for the moving
// span (so every timestamp admitted there from now on is known, and nothing
// the export still needs is compacted), then takes snapshot_ts through the
// source's log and starts BACKFILL. The tracker-after-snapshot variant
// takes snapshot_ts first.
func (m *migrator) plan(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	late := m.bugs.Has(bugs.MigrateTrackerAfterSnapshot)
	if !j.TrackerArmed && !late {
		r, err := m.guardOp(j.SourceGroup, fsm.KindArmTracker, fsm.Guard{Job: j.ID, Span: j.Moving()})
		if err != nil {
			return j, rev, err
		}
		return m.transition(j, rev, job.Planned, nil, 0, func(n *job.SplitJob) { n.TrackerArmed, n.MinReadTS = true, r.Compacted })
	}
	r, err := m.call(j.SourceGroup, BarrierReq{})
	if err != nil {
		return j, rev, err
	}
	snap := r.(BarrierResp).LastCommit
	if late && !j.TrackerArmed {
		g, err := m.guardOp(j.SourceGroup, fsm.KindArmTracker, fsm.Guard{Job: j.ID, Span: j.Moving()})
		if err != nil {
			return j, rev, err
		}
		j.TrackerArmed, j.MinReadTS = true, g.Compacted
	}
	var cat *catalog.Catalog
	var catRev int64
	if m.bugs.Has(bugs.MigrateOverlappingRoutes) {
		// The wrong variant publishes the target route at once, while the
		// source route still covers the moving span.
		c, cr, err := m.n.env.loadCatalog(m.kv)
		if err != nil {
			return j, rev, err
		}
		n := c.AddRoute(catalog.Route{Start: j.SplitKey, End: j.MovingEnd, Group: j.TargetGroup})
		cat, catRev = &n, cr
	}
	if m.bugs.Has(bugs.MigratePinRelaxedEarly) {
		// The wrong variant relaxes the pin before BACKFILL has copied
		// anything.
		if _, err := m.guardOp(j.SourceGroup, fsm.KindPin, fsm.Guard{Job: j.ID, TS: snap}); err != nil {
			return j, rev, err
		}
	}
	return m.transition(j, rev, job.Backfill, cat, catRev, func(n *job.SplitJob) {
		n.SnapshotTS = snap
		n.TrackerArmed, n.MinReadTS = j.TrackerArmed, j.MinReadTS
		n.ResetBrackets(1)
		if m.bugs.Has(bugs.MigrateExportLocks) {
			n.Brackets = append(n.Brackets, job.Bracket{Family: lockFamily})
		}
	})
}

// fence publishes the split: the source route keeps the left part, the
// moving part becomes a new WriteFenced route, in one catalog CAS.
func (m *migrator) fence(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	cat, catRev, err := m.n.env.loadCatalog(m.kv)
	if err != nil {
		return j, rev, err
	}
	n, moving, err := cat.Fence(j.SourceRouteID, j.SplitKey)
	if err != nil {
		return j, rev, err
	}
	if err := n.Validate(); err != nil {
		return j, rev, err
	}
	return m.transition(j, rev, job.Fence, &n, catRev, func(x *job.SplitJob) {
		x.MovingRouteID, x.FenceVersion = moving, n.Version
	})
}

// fenceApplied waits until the fence is in force on every source voter,
// then for the transactions prepared in the moving span to finish (rolling
// back the ones left too long), and only then takes fence_ts through the
// source's log, with the tracked minimum: DELTA_COPY copies
// (delta_floor, fence_ts] where delta_floor = min(snapshot_ts,
// min_admitted - 1). The retention pin moves down to delta_floor only now
// that BACKFILL is done.
func (m *migrator) fenceApplied(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	if err := m.writeFenceBarrier(j); err != nil {
		return j, rev, err
	}
	if !m.bugs.Has(bugs.MigrateNoLockDrain) {
		if err := m.drainLocks(j); err != nil {
			return j, rev, err
		}
	}
	r, err := m.call(j.SourceGroup, BarrierReq{Job: j.ID})
	if err != nil {
		return j, rev, err
	}
	b := r.(BarrierResp)
	floor := j.SnapshotTS
	if b.Tracked != 0 && b.Tracked-1 < floor && !m.bugs.Has(bugs.MigrateDeltaFromSnapshot) {
		floor = b.Tracked - 1
		m.counters().DeltaBelowSnapshot++
	}
	if _, err := m.guardOp(j.SourceGroup, fsm.KindPin, fsm.Guard{Job: j.ID, TS: floor}); err != nil {
		return j, rev, err
	}
	return m.transition(j, rev, job.DeltaCopy, nil, 0, func(n *job.SplitJob) {
		n.FenceTS, n.DeltaFloor = b.LastCommit, floor
		n.ResetBrackets(2)
		if m.bugs.Has(bugs.MigrateExportLocks) {
			n.Brackets = append(n.Brackets, job.Bracket{Family: lockFamily})
		}
	})
}

// drainLocks waits until no transaction lock is pending in the moving span.
// New prepares are already refused there (the write fence); a prepared
// transaction commits through the fence with its locks as proof, or is
// rolled back here once its locks are older than LockTTL (its client is
// gone or slow: a later COMMIT finds the rollback record).
func (m *migrator) drainLocks(j job.SplitJob) error {
	r, err := m.call(j.SourceGroup, LocksReq{Span: j.SourceSpan()})
	if err != nil {
		return err
	}
	locks := r.(LocksResp).Locks
	pending := false
	old := hlc.Make(uint64(int64(m.cfg.EpochMs)+m.nowMs()-m.cfg.LockTTL.Milliseconds()), 0)
	byTxn := map[string]*fsm.Txn{}
	var order []string
	for _, l := range locks {
		if !j.Moving().Contains(l.Key) && byTxn[l.Txn] == nil {
			continue // outside the moving span: only its own transaction matters
		}
		pending = true
		t := byTxn[l.Txn]
		if t == nil {
			t = &fsm.Txn{ID: l.Txn, Primary: l.Primary, StartTS: l.StartTS, CommitTS: l.CommitTS}
			byTxn[l.Txn] = t
			order = append(order, l.Txn)
		}
		t.Keys = append(t.Keys, l.Key)
	}
	for _, l := range locks { // the same transactions' locks elsewhere in the source route
		if t := byTxn[l.Txn]; t != nil && !j.Moving().Contains(l.Key) {
			t.Keys = append(t.Keys, l.Key)
		}
	}
	if !pending {
		return nil
	}
	m.counters().LockDrainWaits++
	for _, id := range order {
		t := byTxn[id]
		if t.StartTS < old {
			if _, err := m.call(j.SourceGroup, RollbackReq{Txn: *t}); err == nil {
				m.counters().LocksResolved++
			}
		}
	}
	return errNotYet
}

// deltaDone reports whether DELTA_COPY finished (the wrong variant looks
// at the user-key bracket only).
func (m *migrator) deltaDone(j job.SplitJob) bool {
	if m.bugs.Has(bugs.MigrateCutoverBeforeDelta) && len(j.Brackets) > 0 {
		return j.Brackets[0].Done
	}
	return j.AllBracketsDone()
}

// targetFloor makes the target's write floor durable on every target voter
// (target readiness) and returns it.
func (m *migrator) targetFloor(j job.SplitJob, floor hlc.TS) error {
	if _, err := m.guardOp(j.TargetGroup, fsm.KindFloor, fsm.Guard{Job: j.ID, Span: j.Moving(), TS: floor}); err != nil {
		return err
	}
	return m.allVoters(j.TargetGroup, false, m.holds(j.TargetGroup, fsm.KindFloor, j, floor))
}

// prepareCutover readies the target (its write floor above everything
// copied and fence_ts, on every target voter), arms the cutover read fence
// on every source voter (ARMING is recorded first: recovery must finish or
// undo an arming it finds half done), raises the target floor over the
// source's timestamp horizon once the source serves no more reads of the
// moving span, and cuts over.
func (m *migrator) prepareCutover(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	floor := j.FenceTS
	if j.MaxImportedTS > floor || m.bugs.Has(bugs.MigrateFloorImportedOnly) {
		floor = j.MaxImportedTS
	}
	if m.bugs.Has(bugs.MigrateNoHLCAdvance) {
		floor = 0
	}
	switch j.ReadFence {
	case job.FenceNone, job.FenceClearing:
		if floor != 0 {
			if err := m.targetFloor(j, floor); err != nil {
				return j, rev, err
			}
		}
		return m.startArming(j, rev)
	case job.FenceArming:
		return m.finishArming(j, rev)
	}
	return m.cutover(j, rev, floor)
}

// startArming records the intent to arm (ARMING, with the catalog version
// CUTOVER will have) before any source voter is armed.
func (m *migrator) startArming(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	cat, _, err := m.n.env.loadCatalog(m.kv)
	if err != nil {
		return j, rev, err
	}
	if j.ReadFence == job.FenceClearing {
		if err := m.disarm(j); err != nil {
			return j, rev, err
		}
	}
	expect := cat.Version + 1
	if m.bugs.Has(bugs.MigrateArmedBoolNoIntent) {
		// The wrong variant arms first and records only the outcome.
		j.ExpectedCutover = expect
		return m.finishArming(j, rev)
	}
	return m.transition(j, rev, job.DeltaCopy, nil, 0, func(n *job.SplitJob) {
		n.ReadFence, n.ExpectedCutover = job.FenceArming, expect
	})
}

// finishArming arms the read fence on the source (through its log, over
// the whole source route) and waits for every source voter to hold it.
func (m *migrator) finishArming(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	g := fsm.Guard{Job: j.ID, Span: j.SourceSpan(), Expected: j.ExpectedCutover, Target: j.TargetGroup}
	if _, err := m.guardOp(j.SourceGroup, fsm.KindArmFence, g); err != nil {
		return j, rev, err
	}
	if err := m.allVoters(j.SourceGroup, false, m.holds(j.SourceGroup, fsm.KindArmFence, j, 0)); err != nil {
		return j, rev, err
	}
	return m.transition(j, rev, job.DeltaCopy, nil, 0, func(n *job.SplitJob) {
		n.ReadFence, n.ExpectedCutover = job.FenceArmed, j.ExpectedCutover
	})
}

// cutover raises the target floor over the source's horizon (the source
// serves no read of the moving span since the fence was armed, so every
// timestamp it can have served lies at or below it), then swaps the route
// to the target in one O(1) catalog CAS. A CAS whose answer is lost is
// resolved by reading the record back: if CUTOVER landed the job goes on
// with its guards armed; only a proof that it did not sends it back.
func (m *migrator) cutover(j job.SplitJob, rev int64, floor hlc.TS) (job.SplitJob, int64, error) {
	if floor != 0 {
		r, err := m.call(j.SourceGroup, BarrierReq{})
		if err != nil {
			return j, rev, err
		}
		if h := r.(BarrierResp).Horizon; h > floor {
			floor = h
		}
		if err := m.targetFloor(j, floor); err != nil {
			return j, rev, err
		}
	}
	cat, catRev, err := m.n.env.loadCatalog(m.kv)
	if err != nil {
		return j, rev, err
	}
	if cat.Version+1 != j.ExpectedCutover {
		// The catalog moved since the fence was armed for another version:
		// re-arm for the right one.
		return m.transition(j, rev, job.DeltaCopy, nil, 0, func(n *job.SplitJob) { n.ReadFence = job.FenceClearing })
	}
	n, err := cat.Cutover(j.MovingRouteID, j.TargetGroup, j.ID, floor, j.MinReadTS)
	if err != nil {
		return j, rev, err
	}
	nj := j
	nj.Phase, nj.CutoverVersion, nj.CutoverFloor = job.Cutover, n.Version, floor
	if err := nj.Check(); err != nil {
		panic(err)
	}
	nj.Writes++
	k := m.jobKey(j.ID)
	var ps putSet
	ps.put(k, nj.Encode())
	ps.put(job.CatalogKey, n.Encode())
	resolve := !m.bugs.Has(bugs.MigrateAmbiguousCutoverAborts)
	nrev, lost, err := commitTxn(m.kv, []guard{{k, rev}, {job.CatalogKey, catRev}}, ps.list(), nil, k, ps.get(k), resolve)
	if lost {
		m.counters().AmbiguousCutovers++
	}
	if err == errIndeterminate {
		// The wrong variant takes a lost answer for a failed CAS and clears
		// the guards.
		m.clearGuards(j)
		return j, rev, err
	}
	if err != nil {
		return j, rev, err
	}
	nj.Writes++
	m.n.eng.SeeWatermark(n.Version)
	m.logPhase(j.ID, job.DeltaCopy, job.Cutover, &n)
	return nj, nrev, nil
}
