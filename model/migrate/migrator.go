package migrate

import (
	"errors"
	"fmt"

	"shardsim/model/bugs"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/job"
	"shardsim/simclock"
	"shardsim/simkv"
)

// migrator drives the live SplitJob from the group-0 leader. It holds no
// state of its own that matters: every iteration works from the job record
// (reloaded after any error), every phase change is a CAS on the record,
// and every effect on a group is idempotent or guarded, so a migrator that
// crashed or lost leadership mid-step is simply replaced by another that
// resumes from the record.
type migrator struct {
	n        *Node
	ls       *leader
	t        *simclock.Task
	kv       simkv.KV
	cfg      Config
	bugs     bugs.Set
	failures int
}

// errNotYet means a step must wait for something (promotion, drain) that
// is not an error.
var errNotYet = errors.New("not yet")

func (n *Node) startMigrator(ls *leader) {
	n.ctx.Go("migrator", func(t *simclock.Task) {
		m := &migrator{n: n, ls: ls, t: t, kv: n.meta.In(t), cfg: n.env.Cfg, bugs: n.env.Bugs}
		m.run()
	})
}

func (m *migrator) alive() bool { return m.n.lead(0) == m.ls }

func (m *migrator) log(kind, detail string) { m.t.Context().Log(kind, detail) }

func (m *migrator) nowMs() int64 { return int64(m.t.Local()) / 1e6 }

func (m *migrator) run() {
	var j job.SplitJob
	var rev int64
	loaded := false
	for m.alive() {
		if !loaded {
			var ok bool
			var err error
			j, rev, ok, err = LiveJob(m.kv)
			if err != nil {
				m.backoff()
				continue
			}
			if !ok {
				m.t.Sleep(m.cfg.Poll)
				continue
			}
			loaded = true
		}
		nj, nrev, err := m.step(j.Clone(), rev)
		switch {
		case err == nil:
			m.failures = 0
			j, rev = nj, nrev
			if j.Phase.Terminal() {
				loaded = false
			}
		case errors.Is(err, errNotYet):
			m.t.Sleep(m.cfg.Poll / 2)
		case errors.Is(err, errConflict):
			loaded = false
		default:
			loaded = false
			m.failures++
			if m.failures >= m.cfg.StepRetries && j.Phase >= job.Planned && j.Phase < job.Done {
				m.toFailed(j, rev, err)
				m.failures = 0
				continue
			}
			m.backoff()
		}
	}
}

// backoff waits longer after each consecutive failure.
func (m *migrator) backoff() { m.t.Sleep(m.cfg.Backoff << min(m.failures, 5)) }

// save CASes j over the record at rev (and, with cat, the catalog over
// catRev) and returns the new revision.
func (m *migrator) save(j job.SplitJob, rev int64, cat *catalog.Catalog, catRev int64) (int64, error) {
	if err := j.Check(); err != nil {
		panic(err) // the migrator never builds a malformed record
	}
	j.Writes++
	k := job.Key(j.ID)
	var ps putSet
	guards := []guard{{k, rev}}
	ps.put(k, j.Encode())
	if cat != nil {
		guards = append(guards, guard{job.CatalogKey, catRev})
		ps.put(job.CatalogKey, cat.Encode())
	}
	return commit(m.kv, guards, ps.m, ps.order, nil, k, ps.m[k])
}

// transition moves j to phase to (mutate adjusts the record first).
func (m *migrator) transition(j job.SplitJob, rev int64, to job.Phase, cat *catalog.Catalog, catRev int64, mutate func(*job.SplitJob)) (job.SplitJob, int64, error) {
	from := j.Phase
	j.Phase = to
	if mutate != nil {
		mutate(&j)
	}
	nrev, err := m.save(j, rev, cat, catRev)
	if err != nil {
		return job.SplitJob{}, 0, err
	}
	j.Writes++
	if from != to || cat != nil {
		detail := fmt.Sprintf("j%d %s->%s", j.ID, from, to)
		if cat != nil {
			detail += " catalog=" + cat.String()
		}
		m.log("mig.phase", detail)
	}
	return j, nrev, nil
}

// call sends req to group g's leader.
func (m *migrator) call(g int, req any) (any, error) {
	if !m.alive() {
		return nil, errs.ErrNotLeader
	}
	return m.n.env.Net.Call(m.t, g, req)
}

// push installs the current catalog into group g's view, returning the
// group's last commit ts at the install.
func (m *migrator) push(g int, cat catalog.Catalog) (PushResp, error) {
	r, err := m.call(g, PushReq{Catalog: cat})
	if err != nil {
		return PushResp{}, err
	}
	p := r.(PushResp)
	if p.Version < cat.Version {
		return p, fmt.Errorf("group %d view at v%d after push of v%d", g, p.Version, cat.Version)
	}
	return p, nil
}

func (m *migrator) toFailed(j job.SplitJob, rev int64, cause error) {
	retry := j.Phase
	_, _, err := m.transition(j, rev, job.Failed, nil, 0, func(n *job.SplitJob) {
		n.RetryPhase, n.LastError = retry, cause.Error()
	})
	if err != nil {
		m.t.Sleep(m.cfg.Backoff)
	}
}

// step performs the next piece of work of j and returns the record after.
func (m *migrator) step(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	switch j.Phase {
	case job.Planned:
		return m.plan(j, rev)
	case job.Backfill:
		if j.AllBracketsDone() {
			return m.fence(j, rev)
		}
		return m.copyBatch(j, rev, 0, j.SnapshotTS)
	case job.Fence:
		return m.fenceApplied(j, rev)
	case job.DeltaCopy:
		if m.deltaDone(j) {
			return m.cutover(j, rev)
		}
		return m.copyBatch(j, rev, j.SnapshotTS, j.FenceTS)
	case job.Cutover:
		return m.publishCutover(j, rev)
	case job.Cleanup:
		return m.cleanup(j, rev)
	case job.Failed:
		m.t.Sleep(m.cfg.FailedBackoff)
		return m.transition(j, rev, j.RetryPhase, nil, 0, func(n *job.SplitJob) {
			n.RetryPhase = 0
			n.Retries++
		})
	case job.Abandoning:
		return m.abandon(j, rev)
	}
	return j, rev, fmt.Errorf("job %d in unexpected phase %s", j.ID, j.Phase)
}

// plan takes snapshot_ts from the source through its log (every version at
// or below it is applied before the barrier) and starts BACKFILL.
func (m *migrator) plan(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	r, err := m.call(j.SourceGroup, BarrierReq{})
	if err != nil {
		return j, rev, err
	}
	snap := r.(PushResp).LastCommit
	var cat *catalog.Catalog
	var catRev int64
	if m.bugs.Has(bugs.MigrateOverlappingRoutes) {
		// The wrong variant publishes the target route at once, while the
		// source route still covers the moving span.
		c, cr, err := LoadCatalog(m.kv)
		if err != nil {
			return j, rev, err
		}
		n := c.AddRoute(catalog.Route{Start: j.SplitKey, End: j.MovingEnd, Group: j.TargetGroup})
		cat, catRev = &n, cr
	}
	nj, nrev, err := m.transition(j, rev, job.Backfill, cat, catRev, func(n *job.SplitJob) {
		n.SnapshotTS = snap
		n.ResetBrackets(1)
	})
	if err == nil && cat != nil {
		_, _ = m.push(j.TargetGroup, *cat)
	}
	return nj, nrev, err
}

// fence publishes the split: the source route keeps the left part, the
// moving part becomes a new WriteFenced route, in one catalog CAS.
func (m *migrator) fence(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	cat, catRev, err := LoadCatalog(m.kv)
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
	return m.transition(j, rev, job.Fence, &n, catRev, func(x *job.SplitJob) { x.MovingRouteID = moving })
}

// fenceApplied installs the fence in the source's log; fence_ts is the
// source's last commit ts there, above every write it accepted to the
// moving span.
func (m *migrator) fenceApplied(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	cat, _, err := LoadCatalog(m.kv)
	if err != nil {
		return j, rev, err
	}
	p, err := m.push(j.SourceGroup, cat)
	if err != nil {
		return j, rev, err
	}
	return m.transition(j, rev, job.DeltaCopy, nil, 0, func(n *job.SplitJob) {
		n.FenceTS = p.LastCommit
		n.ResetBrackets(2)
	})
}

// deltaDone reports whether DELTA_COPY finished (the wrong variant looks
// at the user-key bracket only).
func (m *migrator) deltaDone(j job.SplitJob) bool {
	if m.bugs.Has(bugs.MigrateCutoverBeforeDelta) && len(j.Brackets) > 0 {
		return j.Brackets[0].Done
	}
	return j.AllBracketsDone()
}

// cutover raises the target's clock floor above everything copied and the
// fence, then swaps the route to the target in one O(1) catalog CAS.
func (m *migrator) cutover(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	floor := j.FenceTS
	if j.MaxImportedTS > floor {
		floor = j.MaxImportedTS
	}
	if m.bugs.Has(bugs.MigrateNoHLCAdvance) {
		floor = 0 // the wrong variant has no floor at all
	} else if _, err := m.call(j.TargetGroup, FloorReq{Floor: floor}); err != nil {
		return j, rev, err
	}
	cat, catRev, err := LoadCatalog(m.kv)
	if err != nil {
		return j, rev, err
	}
	n, err := cat.Cutover(j.MovingRouteID, j.TargetGroup, j.ID, floor)
	if err != nil {
		return j, rev, err
	}
	return m.transition(j, rev, job.Cutover, &n, catRev, func(x *job.SplitJob) { x.CutoverVersion = n.Version })
}

// publishCutover installs the cutover in the source's view first (it stops
// serving the moved span), then in the target's (it starts). In between it
// raises the target's clock to the source's timestamp horizon: the source
// served reads of the moving span at timestamps up to there (above
// fence_ts), and a target write below one of them would change a snapshot
// someone already read.
func (m *migrator) publishCutover(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	cat, _, err := LoadCatalog(m.kv)
	if err != nil {
		return j, rev, err
	}
	p, err := m.push(j.SourceGroup, cat)
	if err != nil {
		return j, rev, err
	}
	if !m.bugs.Has(bugs.MigrateNoHLCAdvance) {
		if _, err := m.call(j.TargetGroup, FloorReq{Floor: p.Horizon}); err != nil {
			return j, rev, err
		}
	}
	if _, err := m.push(j.TargetGroup, cat); err != nil {
		return j, rev, err
	}
	return m.transition(j, rev, job.Cleanup, nil, 0, nil)
}

// cleanup: once promotion is durable, turn staged visibility off; after the
// grace period and once reads drained, delete the moved source versions;
// then DONE. (The wrong variant deletes before waiting for promotion.)
func (m *migrator) cleanup(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	early := m.bugs.Has(bugs.MigrateCleanupBeforePromotion)
	switch {
	case !j.StagedCleared && !(early && !j.SourceCleaned):
		return m.clearStaged(j, rev)
	case !j.SourceCleaned:
		return m.cleanSource(j, rev)
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
	cat, catRev, err := LoadCatalog(m.kv)
	if err != nil {
		return j, rev, err
	}
	n, err := cat.ClearStaged(j.MovingRouteID)
	if err != nil {
		return j, rev, err
	}
	nj, nrev, err := m.transition(j, rev, job.Cleanup, &n, catRev, func(x *job.SplitJob) { x.StagedCleared = true })
	if err == nil {
		_, _ = m.push(j.TargetGroup, n)
	}
	return nj, nrev, err
}

func (m *migrator) cleanSource(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	if j.StagedCleared {
		cat, _, err := LoadCatalog(m.kv)
		if err != nil {
			return j, rev, err
		}
		if _, err := m.push(j.TargetGroup, cat); err != nil {
			return j, rev, err
		}
	}
	m.t.Sleep(m.cfg.Grace)
	r, err := m.call(j.SourceGroup, DrainReq{Span: j.Moving()})
	if err != nil {
		return j, rev, err
	}
	if r.(DrainResp).Open > 0 {
		return j, rev, errNotYet
	}
	if _, err := m.call(j.SourceGroup, CleanupReq{Job: j.ID, Moving: j.Moving(), FenceTS: j.FenceTS}); err != nil {
		return j, rev, err
	}
	return m.transition(j, rev, job.Cleanup, nil, 0, func(x *job.SplitJob) { x.SourceCleaned = true })
}

// abandon undoes a job that has not reached CUTOVER: staged data first,
// then the fence, then ABANDONED.
func (m *migrator) abandon(j job.SplitJob, rev int64) (job.SplitJob, int64, error) {
	if _, err := m.call(j.TargetGroup, AbandonStagedReq{Job: j.ID}); err != nil {
		return j, rev, err
	}
	cat, catRev, err := LoadCatalog(m.kv)
	if err != nil {
		return j, rev, err
	}
	if r, ok := cat.Route(j.MovingRouteID); ok && j.MovingRouteID != 0 && r.State == catalog.WriteFenced &&
		!m.bugs.Has(bugs.MigrateAbandonKeepsFence) {
		n, err := cat.Unfence(j.MovingRouteID)
		if err != nil {
			return j, rev, err
		}
		j, rev, err = m.transition(j, rev, job.Abandoning, &n, catRev, nil)
		if err != nil {
			return j, rev, err
		}
		cat = n
	}
	if _, err := m.push(j.SourceGroup, cat); err != nil {
		return j, rev, err
	}
	return m.finish(j, rev, job.Abandoned)
}

// finish moves j to its terminal phase: out of the live set into the
// bounded history, clearing the live-job pointer, in one transaction.
func (m *migrator) finish(j job.SplitJob, rev int64, to job.Phase) (job.SplitJob, int64, error) {
	hist, err := m.kv.Range(simkv.RangeRequest{Key: []byte(job.HistPrefix()), RangeEnd: []byte(job.HistPrefix() + "\xff"), KeysOnly: true})
	if err != nil {
		return j, rev, err
	}
	var entries []job.HistEntry
	for _, kv := range hist.Kvs {
		if ms, ok := job.ParseHistKey(string(kv.Key)); ok {
			entries = append(entries, job.HistEntry{Key: string(kv.Key), TerminalMs: ms})
		}
	}
	now := m.nowMs()
	from := j.Phase
	j.Phase, j.TerminalAtMs = to, now
	j.Writes++
	hk := job.HistKey(now, j.ID)
	var ps putSet
	ps.put(hk, j.Encode())
	ps.put(job.LiveJobKey, job.EncodeID(0))
	dels := append([]string{job.Key(j.ID)}, m.cfg.History.Evict(entries, now)...)
	nrev, err := commit(m.kv, []guard{{job.Key(j.ID), rev}}, ps.m, ps.order, dels, hk, ps.m[hk])
	if err != nil {
		return j, rev, err
	}
	m.log("mig.phase", fmt.Sprintf("j%d %s->%s", j.ID, from, to))
	return j, nrev, nil
}
