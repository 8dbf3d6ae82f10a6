package migratecheck

import (
	"cmp"
	"shardsim/property"
	"slices"
	"strings"

	mcat "shardsim/model/migrate/catalog"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// JobChecker follows the split jobs through their records (and the catalog
// written with them) and judges the data plane's events against them:
// M.FencedWritesRejected, M.HLCMonotone, M.ExactlyOnceCopy and
// M.CleanupSafe. It sees the job records and catalogs the metadata store
// accepted and the entries groups applied; it does not see what a node's
// view was when a leader admitted a write (it judges the outcome).
type JobChecker struct {
	jobs  map[uint64]*jobFacts
	order []uint64
}

type jobFacts struct {
	rec            job.SplitJob
	fenceVersion   uint64 // catalog version that fenced the moving route
	unfenceVersion uint64 // catalog version that lifted it (abandon)
	cutoverVersion uint64
	fenceInForce   bool // fence_ts recorded: from now on the source takes no write to the moving span
	imported       map[passRow]int
	importOrder    []passRow
	maxImported    hlc.TS
	checkedCopy    bool
}

type rowID struct {
	key string
	ts  hlc.TS
}

type passRow struct {
	rowID
	pass uint8
}

// NewJobChecker returns a checker.
func NewJobChecker() *JobChecker { return &JobChecker{jobs: map[uint64]*jobFacts{}} }

func (c *JobChecker) facts(id uint64) *jobFacts {
	f := c.jobs[id]
	if f == nil {
		f = &jobFacts{imported: map[passRow]int{}}
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
	if j.FenceTS != 0 && (j.Phase >= job.DeltaCopy && j.Phase <= job.Done || j.Phase == job.Failed) {
		f.fenceInForce = true
	}
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

// EachJob calls fn with the last record of every job seen, in order of
// first sight, without copying them (fn must not change them). An
// observer that looks at every job on every write uses it.
func (c *JobChecker) EachJob(fn func(j *job.SplitJob)) {
	for _, id := range c.order {
		fn(&c.jobs[id].rec)
	}
}

// CutOver reports whether job id's CUTOVER catalog was published.
func (c *JobChecker) CutOver(id uint64) bool {
	f, ok := c.jobs[id]
	return ok && f.cutoverVersion != 0
}

// Imported notes the rows of an import batch of copy pass pass the target
// applied (first apply of a new batch only; a repeated batch is a no-op
// there and is not passed in).
func (c *JobChecker) Imported(jobID uint64, pass uint8, rows []mvcc.Row) {
	f := c.facts(jobID)
	for _, r := range rows {
		id := passRow{rowID{r.Key, r.TS}, pass}
		if f.imported[id] == 0 {
			f.importOrder = append(f.importOrder, id)
		}
		f.imported[id]++
		if r.TS > f.maxImported {
			f.maxImported = r.TS
		}
	}
}

// Fenced reports whether a write group applies could violate
// M.FencedWritesRejected: some job with group as its source recorded
// fence_ts and no abandon lifted that fence. When it is false, SourceWrite
// returns nil for every key, timestamp and ownsNow, so an observer may skip
// working out ownsNow (a catalog lookup per write) and the call.
func (c *JobChecker) Fenced(group int) bool {
	for _, id := range c.order {
		if c.jobs[id].fences(group) {
			return true
		}
	}
	return false
}

// SourceWrite checks M.FencedWritesRejected for a write-like step group
// applied (first apply) creating key's version at ts: once a job recorded
// fence_ts, and unless an abandon lifted the fence, the source takes no
// write to the moving span (DELTA_COPY copies only up to fence_ts; anything
// later is lost) — unless a later job's CUTOVER moved the key back to that
// group, or the latest published catalog gives the key's route back to
// that group, Active; ownsNow says the latter.
func (c *JobChecker) SourceWrite(group int, key string, ts hlc.TS, ownsNow bool) *property.Violation {
	if ownsNow {
		return nil
	}
	for i, id := range c.order {
		f := c.jobs[id]
		j := &f.rec
		if !f.fences(group) || !routedIn(key, j.Moving().Start, j.Moving().End) {
			continue
		}
		if c.movedBack(c.order[i+1:], group, key) {
			continue
		}
		return property.Violated(property.MFencedWritesRejected, "group %d accepted a write to %s at %s after job %d fixed fence_ts %s, in the moving span %s",
			group, keys.Quote(key), ts, j.ID, j.FenceTS, j.Moving())
	}
	return nil
}

// fences reports whether the job's fence binds group: group is its source,
// it recorded fence_ts and no abandon lifted the fence.
func (f *jobFacts) fences(group int) bool {
	return f.rec.SourceGroup == group && f.fenceInForce && f.unfenceVersion == 0
}

// movedBack reports whether one of the jobs later cut key's route over to
// group, which owns it again from then on.
func (c *JobChecker) movedBack(later []uint64, group int, key string) bool {
	for _, id := range later {
		f := c.jobs[id]
		if f.cutoverVersion != 0 && f.rec.TargetGroup == group && routedIn(key, f.rec.Moving().Start, f.rec.Moving().End) {
			return true
		}
	}
	return false
}

// TargetWrite checks M.HLCMonotone for a write-like step the target applied
// at ts: after CUTOVER it lies above max(max_imported_ts, fence_ts).
func (c *JobChecker) TargetWrite(group int, key string, ts hlc.TS) *property.Violation {
	for _, id := range c.order {
		f := c.jobs[id]
		j := &f.rec
		if j.TargetGroup != group || f.cutoverVersion == 0 || !routedIn(key, j.Moving().Start, j.Moving().End) {
			continue
		}
		floor := j.FenceTS
		if f.maxImported > floor {
			floor = f.maxImported
		}
		if ts <= floor {
			return property.Violated(property.MHLCMonotone, "target group %d wrote %s at %s after job %d's CUTOVER, not above max(max_imported_ts, fence_ts) = %s",
				group, keys.Quote(key), ts, j.ID, floor)
		}
	}
	return nil
}

// CheckCopy checks M.ExactlyOnceCopy when job id cuts over: source holds
// the source's versions of the moving span (every family) now; each one
// with commit_ts <= fence_ts was imported, exactly once per copy pass, and
// by both passes only if it lies in (delta_floor, snapshot_ts], where they
// overlap. Every imported row must be a version some write created (known)
// at or below fence_ts: never a lock row, nothing made up.
func (c *JobChecker) CheckCopy(id uint64, source []mvcc.Row, known func(key string, ts hlc.TS) bool) *property.Violation {
	f := c.facts(id)
	if f.checkedCopy {
		return nil
	}
	f.checkedCopy = true
	j := f.rec
	sorted := make([]mvcc.Row, 0, len(source))
	for _, r := range source {
		if r.TS <= j.FenceTS && routedIn(r.Key, j.Moving().Start, j.Moving().End) {
			sorted = append(sorted, r)
		}
	}
	sortCopyRows(sorted)
	for _, r := range sorted {
		n1, n2 := f.imported[passRow{rowID{r.Key, r.TS}, 1}], f.imported[passRow{rowID{r.Key, r.TS}, 2}]
		switch {
		case n1+n2 == 0:
			return property.Violated(property.MExactlyOnceCopy, "job %d cut over without copying %s %s (fence_ts %s)", j.ID, keys.Quote(r.Key), r.Version, j.FenceTS)
		case n1 > 1 || n2 > 1:
			return property.Violated(property.MExactlyOnceCopy, "job %d copied %s %s %d and %d times in its two passes", j.ID, keys.Quote(r.Key), r.Version, n1, n2)
		case n1 == 1 && n2 == 1 && !(r.TS > j.DeltaFloor && r.TS <= j.SnapshotTS):
			return property.Violated(property.MExactlyOnceCopy, "job %d copied %s %s in both passes, outside their overlap (%s, %s]", j.ID, keys.Quote(r.Key), r.Version, j.DeltaFloor, j.SnapshotTS)
		}
	}
	for _, id := range f.importOrder {
		if id.ts > j.FenceTS || !routedIn(id.key, j.Moving().Start, j.Moving().End) || !known(id.key, id.ts) {
			return property.Violated(property.MExactlyOnceCopy, "job %d copied %s @%s, which is not a version of the moving span at or below fence_ts %s that a write created",
				j.ID, keys.Quote(id.key), id.ts, j.FenceTS)
		}
	}
	return nil
}

// sortCopyRows sorts rows by key, newest first within a key, the order in
// which CheckCopy reports the first row copied wrongly. It is
// slices.SortFunc rather than sort.Slice (reflection, and a closure call
// per comparison, were 40% of CheckCopy's cost): both run the same
// pattern-defeating quicksort, so rows that compare equal (one key and
// timestamp) end up in the same order too (TestSortCopyRowsAgreesWithSortSlice).
func sortCopyRows(rows []mvcc.Row) {
	slices.SortFunc(rows, func(a, b mvcc.Row) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return cmp.Compare(b.TS, a.TS)
	})
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
