package migrate

import (
	"shardsim/model/bugs"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
)

// cleanup: once promotion is durable, turn staged visibility off (the
// route keeps its write floor); after the grace period, once every source
// voter's view shows the cutover (so none serves the moved span from its
// view) and no source node has a read of the span in flight, delete the
// moved source versions; then disarm the read fence and release the
// tracker and pin on every source voter; then DONE. (The
// cleanup-before-promotion variant deletes before waiting for promotion.)
func (m *migrator) cleanup(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	early := m.bugs.Has(bugs.MigrateCleanupBeforePromotion)
	switch {
	case !j.StagedCleared && !(early && !j.SourceCleaned):
		return m.clearStaged(j, rev)
	case !j.SourceCleaned:
		return m.cleanSource(j, rev)
	case !j.Disarmed:
		if err := m.disarm(j); err != nil {
			return j, rev, err
		}
		if err := m.release(j); err != nil {
			return j, rev, err
		}
		return m.transition(j, rev, job.Cleanup, nil, 0, func(x *job.SplitJob) { x.Disarmed = true })
	}
	return m.finish(j, rev, job.Done)
}

func (m *migrator) clearStaged(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	r, err := m.call(j.TargetGroup, StatusReq{Job: j.ID})
	if err != nil {
		return j, rev, err
	}
	if !r.(StatusResp).Promoted {
		return j, rev, errNotYet
	}
	cat, catRev, err := m.n.env.loadCatalog(m.kv)
	if err != nil {
		return j, rev, err
	}
	n, err := cat.ClearStaged(j.MovingRouteID, m.bugs.Has(bugs.MigrateFloorClearedAtCleanup))
	if err != nil {
		return j, rev, err
	}
	if m.bugs.Has(bugs.MigrateFloorClearedAtCleanup) {
		if _, err := m.guardOp(j.TargetGroup, fsm.KindRelease, fsm.Guard{Job: j.ID}); err != nil {
			return j, rev, err
		}
	}
	return m.transition(j, rev, job.Cleanup, &n, catRev, func(x *job.SplitJob) { x.StagedCleared = true })
}

// cleanSource deletes the moved source versions (commit_ts <= fence_ts).
func (m *migrator) cleanSource(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	m.t.Sleep(m.cfg.Grace)
	if !m.bugs.Has(bugs.MigrateDisarmBeforeViews) {
		if err := m.allVoters(j.SourceGroup, false, m.viewAtLeast(j.CutoverVersion)); err != nil {
			return j, rev, err
		}
	}
	if err := m.allVoters(j.SourceGroup, false, m.drained(j)); err != nil {
		return j, rev, err
	}
	if _, err := m.call(j.SourceGroup, CleanupReq{Job: j.ID, Moving: j.Moving(), FenceTS: j.FenceTS}); err != nil {
		return j, rev, err
	}
	return m.transition(j, rev, job.Cleanup, nil, 0, func(x *job.SplitJob) { x.SourceCleaned = true })
}

// drained asks a node whether reads of the moving span are in flight on
// it (the drain-fence-ts-only variant counts only those at or below
// fence_ts).
func (m *migrator) drained(j job.SplitJob) func(int) bool {
	return func(node int) bool {
		r, err := m.callNode(node, DrainReq{Span: j.Moving(), AtOrBelow: m.drainBound(j)})
		return err == nil && r.(DrainResp).Open == 0
	}
}

func (m *migrator) drainBound(j job.SplitJob) hlc.TS {
	if m.bugs.Has(bugs.MigrateDrainFenceTSOnly) {
		return j.FenceTS
	}
	return 0
}

// disarm removes j's cutover read fence from every source voter.
func (m *migrator) disarm(j job.SplitJob) error {
	if _, err := m.guardOp(j.SourceGroup, fsm.KindDisarmFence, fsm.Guard{Job: j.ID, Expected: j.ExpectedCutover}); err != nil {
		return err
	}
	return m.allVoters(j.SourceGroup, false, m.holds(j.SourceGroup, fsm.KindDisarmFence, j, 0))
}

// release drops j's write tracker and retention pin on every source voter.
func (m *migrator) release(j job.SplitJob) error {
	if _, err := m.guardOp(j.SourceGroup, fsm.KindRelease, fsm.Guard{Job: j.ID}); err != nil {
		return err
	}
	return m.allVoters(j.SourceGroup, false, m.holds(j.SourceGroup, fsm.KindRelease, j, 0))
}

// clearGuards drops j's read fence without waiting (the wrong variants
// that clear guards on a retry or an ambiguous CUTOVER).
func (m *migrator) clearGuards(j job.SplitJob) {
	_, _ = m.guardOp(j.SourceGroup, fsm.KindDisarmFence, fsm.Guard{Job: j.ID, Expected: j.ExpectedCutover})
}

// abandon undoes a job that has not reached CUTOVER, from the durable
// ABANDONING witness the abandon request wrote: the target refuses the
// job's imports and drops its staged rows, the read fence (if arming was
// ever recorded) is disarmed on every source voter, the fence is lifted by
// a catalog CAS, the tracker and pin are released, then ABANDONED.
func (m *migrator) abandon(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	if _, err := m.call(j.TargetGroup, AbandonStagedReq{Job: j.ID}); err != nil {
		return j, rev, err
	}
	if j.ReadFence != job.FenceNone {
		if err := m.disarm(j); err != nil {
			return j, rev, err
		}
		return m.transition(j, rev, job.Abandoning, nil, 0, func(x *job.SplitJob) { x.ReadFence = job.FenceNone })
	}
	cat, catRev, err := m.n.env.loadCatalog(m.kv)
	if err != nil {
		return j, rev, err
	}
	if r, ok := cat.Route(j.MovingRouteID); ok && j.MovingRouteID != 0 && r.State == catalog.WriteFenced &&
		!m.bugs.Has(bugs.MigrateAbandonKeepsFence) {
		n, err := cat.Unfence(j.MovingRouteID)
		if err != nil {
			return j, rev, err
		}
		return m.transition(j, rev, job.Abandoning, &n, catRev, nil)
	}
	// Released even if the record never said it was armed: the arm may have
	// landed without the record's update. A late arm is refused after it.
	if err := m.release(j); err != nil {
		return j, rev, err
	}
	return m.finish(j, rev, job.Abandoned)
}
