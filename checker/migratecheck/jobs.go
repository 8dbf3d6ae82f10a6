package migratecheck

import (
	"sort"

	mcat "shardsim/model/migrate/catalog"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/property"
)

// JobChecker follows the split jobs through their records (and the catalog
// written with them) and judges the data plane's events against them:
// M.FencedWritesRejected, M.HLCMonotone, M.ExactlyOnceCopy and
// M.CleanupSafe.
type JobChecker struct {
	jobs  map[uint64]*jobFacts
	order []uint64
}

type jobFacts struct {
	rec            job.SplitJob
	fenceVersion   uint64 // catalog version that fenced the moving route
	unfenceVersion uint64 // catalog version that lifted it (abandon)
	cutoverVersion uint64
	imported       map[rowID]int
	importOrder    []rowID
	maxImported    hlc.TS
	checkedCopy    bool
}

type rowID struct {
	key string
	ts  hlc.TS
}

// NewJobChecker returns a checker.
func NewJobChecker() *JobChecker { return &JobChecker{jobs: map[uint64]*jobFacts{}} }

func (c *JobChecker) facts(id uint64) *jobFacts {
	f := c.jobs[id]
	if f == nil {
		f = &jobFacts{imported: map[rowID]int{}}
		c.jobs[id] = f
		c.order = append(c.order, id)
	}
	return f
}

// Recorded notes a job record written (cat: the catalog written in the same
// transaction, if any). It returns true when the job just reached CUTOVER.
func (c *JobChecker) Recorded(j job.SplitJob, cat *mcat.Catalog) bool {
	f := c.facts(j.ID)
	prev := f.rec.Phase
	f.rec = j
	if cat != nil && j.MovingRouteID != 0 {
		if r, ok := cat.Route(j.MovingRouteID); ok {
			switch {
			case r.State == mcat.WriteFenced && f.fenceVersion == 0:
				f.fenceVersion = cat.Version
			case r.State == mcat.Active && r.Group == j.SourceGroup && f.fenceVersion != 0 && f.unfenceVersion == 0:
				f.unfenceVersion = cat.Version
			case r.Group == j.TargetGroup && f.cutoverVersion == 0:
				f.cutoverVersion = cat.Version
			}
		}
	}
	return j.Phase == job.Cutover && prev != job.Cutover
}

// Job returns the last record of job id.
func (c *JobChecker) Job(id uint64) (job.SplitJob, bool) {
	f, ok := c.jobs[id]
	if !ok {
		return job.SplitJob{}, false
	}
	return f.rec, true
}

// Jobs returns every job id seen, in order of first sight.
func (c *JobChecker) Jobs() []uint64 { return append([]uint64(nil), c.order...) }

// Imported notes the rows of an import batch the target applied (first
// apply of the entry only; duplicates of a batch are no-ops there).
func (c *JobChecker) Imported(jobID uint64, rows []mvcc.Row) {
	f := c.facts(jobID)
	for _, r := range rows {
		id := rowID{r.Key, r.TS}
		if f.imported[id] == 0 {
			f.importOrder = append(f.importOrder, id)
		}
		f.imported[id]++
		if r.TS > f.maxImported {
			f.maxImported = r.TS
		}
	}
}

// SourceWrite checks M.FencedWritesRejected for a write group applied
// while its catalog view was at version view: between the version that
// fenced a job's moving span and the one that ended the fence (CUTOVER,
// or the abandon's unfence), the source takes no write to it.
func (c *JobChecker) SourceWrite(group int, key string, ts hlc.TS, view uint64) *property.Violation {
	for _, id := range c.order {
		f := c.jobs[id]
		j := f.rec
		if j.SourceGroup != group || f.fenceVersion == 0 || view < f.fenceVersion {
			continue
		}
		if f.unfenceVersion != 0 && view >= f.unfenceVersion || f.cutoverVersion != 0 && view >= f.cutoverVersion {
			continue // the fence ended: lifted by abandon, or the span moved away
		}
		if m := j.Moving(); routedIn(key, m.Start, m.End) {
			return property.Violated(property.MFencedWritesRejected, "group %d (view v%d, fenced at v%d) accepted a write to %s at %s, in job %d's moving span %s",
				group, view, f.fenceVersion, keys.Quote(key), ts, j.ID, j.Moving())
		}
	}
	return nil
}

// TargetWrite checks M.HLCMonotone for a write group applied at ts while
// its view was at version view.
func (c *JobChecker) TargetWrite(group int, key string, ts hlc.TS, view uint64) *property.Violation {
	for _, id := range c.order {
		f := c.jobs[id]
		j := f.rec
		if j.TargetGroup != group || f.cutoverVersion == 0 || view < f.cutoverVersion {
			continue
		}
		floor := j.FenceTS
		if f.maxImported > floor {
			floor = f.maxImported
		}
		if ts <= floor {
			return property.Violated(property.MHLCMonotone, "target group %d issued %s for %s after job %d's CUTOVER, not above max(max_imported_ts, fence_ts) = %s",
				group, ts, keys.Quote(key), j.ID, floor)
		}
	}
	return nil
}

// CheckCopy checks M.ExactlyOnceCopy when job id cuts over: source holds
// every version the source group stores, of every key; the checker picks
// the moving span's rows itself, by its own route-key mapping (keys.go),
// never by the protocol's brackets. Each one with commit_ts <= fence_ts
// was imported exactly once, and nothing else was.
func (c *JobChecker) CheckCopy(id uint64, source []mvcc.Row) *property.Violation {
	f := c.facts(id)
	if f.checkedCopy {
		return nil
	}
	f.checkedCopy = true
	j := f.rec
	want := map[rowID]bool{}
	for _, r := range source {
		if m := j.Moving(); r.TS <= j.FenceTS && routedIn(r.Key, m.Start, m.End) {
			want[rowID{r.Key, r.TS}] = true
		}
	}
	sorted := make([]mvcc.Row, 0, len(source))
	sorted = append(sorted, source...)
	sort.Slice(sorted, func(a, b int) bool {
		if sorted[a].Key != sorted[b].Key {
			return sorted[a].Key < sorted[b].Key
		}
		return sorted[a].TS > sorted[b].TS
	})
	for _, r := range sorted {
		id := rowID{r.Key, r.TS}
		if !want[id] {
			continue
		}
		switch n := f.imported[id]; {
		case n == 0:
			return property.Violated(property.MExactlyOnceCopy, "job %d cut over without copying %s %s (fence_ts %s)", j.ID, keys.Quote(r.Key), r.Version, j.FenceTS)
		case n > 1:
			return property.Violated(property.MExactlyOnceCopy, "job %d copied %s %s %d times", j.ID, keys.Quote(r.Key), r.Version, n)
		}
	}
	for _, id := range f.importOrder {
		if !want[id] {
			return property.Violated(property.MExactlyOnceCopy, "job %d copied %s @%s, which is not a source version of the moving span at or below fence_ts %s",
				j.ID, keys.Quote(id.key), id.ts, j.FenceTS)
		}
	}
	return nil
}

// Cleanup checks M.CleanupSafe when the source applies job id's cleanup:
// promotion must be durable on the target and no read admitted on the
// source for the moving span may still be in flight.
func (c *JobChecker) Cleanup(id uint64, promoted bool, staged int, openReads int) *property.Violation {
	j := c.facts(id).rec
	if !promoted || staged > 0 {
		return property.Violated(property.MCleanupSafe, "job %d deleted source data while the target still had %d staged versions (promoted=%v)", j.ID, staged, promoted)
	}
	if openReads > 0 {
		return property.Violated(property.MCleanupSafe, "job %d deleted source data with %d reads of %s in flight on the source", j.ID, openReads, j.Moving())
	}
	return nil
}
