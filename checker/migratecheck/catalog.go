package migratecheck

import (
	mcat "shardsim/model/migrate/catalog"
	"shardsim/model/migrate/job"
	"shardsim/property"
	"shardsim/simkv"
)

// CatalogChecker checks M.CatalogNonOverlap and M.CatalogVersionMonotone:
// every catalog snapshot the metadata store accepts has non-overlapping
// routes and a version exactly one above the previous, and no viewer (a
// coordinator's watcher, a group voter's state machine) ever moves its
// applied version backwards.
type CatalogChecker struct {
	last    uint64
	have    bool
	viewers map[string]uint64
}

// NewCatalogChecker returns a checker.
func NewCatalogChecker() *CatalogChecker { return &CatalogChecker{viewers: map[string]uint64{}} }

// Published checks one catalog snapshot the store accepted.
func (c *CatalogChecker) Published(cat mcat.Catalog) *property.Violation {
	if a, b, ok := overlapping(cat.Routes); ok {
		return property.Violated(property.MCatalogNonOverlap, "catalog v%d has overlapping routes %s and %s", cat.Version, a, b)
	}
	if c.have && cat.Version != c.last+1 {
		return property.Violated(property.MCatalogVersionMonotone, "catalog version went from %d to %d", c.last, cat.Version)
	}
	c.last, c.have = cat.Version, true
	return nil
}

// Viewed checks that viewer's applied catalog version did not go back.
func (c *CatalogChecker) Viewed(viewer string, version uint64) *property.Violation {
	if prev, ok := c.viewers[viewer]; ok && version < prev {
		return property.Violated(property.MCatalogVersionMonotone, "%s moved its catalog view back from v%d to v%d", viewer, prev, version)
	}
	c.viewers[viewer] = version
	return nil
}

// overlapping returns the first two routes (in catalog order) whose
// spans share a route key, judged without the catalog's own code.
func overlapping(routes []mcat.Route) (mcat.Route, mcat.Route, bool) {
	for i, a := range routes {
		for _, b := range routes[i+1:] {
			if (a.End == "" || b.Start < a.End) && (b.End == "" || a.Start < b.End) {
				return a, b, true
			}
		}
	}
	return mcat.Route{}, mcat.Route{}, false
}

// GroupView is what one group would do with a write right now: whether it
// has a leader that serves, the catalog view that leader enforces, and the
// oldest view its group lets a leader judge by (a leader on a node that has
// not caught up with the catalog its group last changed membership under
// refuses every request).
type GroupView struct {
	Group   int
	Ready   bool
	View    mcat.Catalog
	MinView uint64
}

// CheckSingleWriter checks M.SingleWriter over the given route keys: at
// most one group would accept a write for each (a serving leader whose
// view has an Active route of its own holding the key, and is not older
// than its group's minimum). It reads the views
// route by route rather than through the catalog's lookup, so a view that
// (wrongly) holds two routes for a key counts both.
func CheckSingleWriter(routeKeys []string, views []GroupView) *property.Violation {
	var buf [16]acceptingRoute
	acc := acceptingRoutes(views, buf[:0])
	if !twoViewsShare(acc) {
		return nil // no route key lies in routes of two views: no key has two writers
	}
	for _, k := range routeKeys {
		owner, counted := -1, -1 // groups; counted: the view that last accepted k
		for i := range acc {
			a := &acc[i]
			if a.view == counted || !inSpan(k, a.start, a.end) {
				continue // a view with two routes holding k accepts it once
			}
			counted = a.view
			gv := &views[a.view]
			if owner >= 0 {
				return property.Violated(property.MSingleWriter, "groups %d and %d would both accept a write to %q (views v%d, v%d)",
					owner, gv.Group, k, viewOf(views, owner).Version, gv.View.Version)
			}
			owner = gv.Group
		}
	}
	return nil
}

// twoViewsShare reports whether routes of two different views in acc
// share a route key: only then can two groups accept a write to one key,
// so CheckSingleWriter asks key by key only then (a few comparisons per
// pair of routes rather than a few per key and route; in a correct run no
// two views' accepting routes overlap).
func twoViewsShare(acc []acceptingRoute) bool {
	for i := range acc {
		a := &acc[i]
		for j := i + 1; j < len(acc); j++ {
			if b := &acc[j]; a.view != b.view && spansShare(a.start, a.end, b.start, b.end) {
				return true
			}
		}
	}
	return false
}

// spansShare reports whether [s1, e1) and [s2, e2) ("" end: unbounded)
// hold a common key: they do exactly when the larger start, the least key
// both could hold, lies in both.
func spansShare(s1, e1, s2, e2 string) bool {
	s := max(s1, s2)
	return inSpan(s, s1, e1) && inSpan(s, s2, e2)
}

// acceptingRoute is one route through which a view would accept writes:
// views[view] is ready and not older than its group's minimum, and the
// route is its group's own, Active, over [start, end).
type acceptingRoute struct {
	view       int
	start, end string
}

// acceptingRoutes appends to out the routes through which views would
// accept writes, view by view in order and each view's routes in order
// (the order in which CheckSingleWriter asks whether a view accepts a key),
// so that each key is
// tested against those routes only rather than every route of every view.
func acceptingRoutes(views []GroupView, out []acceptingRoute) []acceptingRoute {
	for i := range views {
		gv := &views[i]
		if !gv.Ready || gv.View.Version < gv.MinView {
			continue
		}
		for j := range gv.View.Routes {
			r := &gv.View.Routes[j]
			if r.Group == gv.Group && r.State == mcat.Active {
				out = append(out, acceptingRoute{view: i, start: r.Start, end: r.End})
			}
		}
	}
	return out
}

func viewOf(views []GroupView, g int) mcat.Catalog {
	for _, v := range views {
		if v.Group == g {
			return v.View
		}
	}
	return mcat.Catalog{}
}

// PhaseChecker checks M.PhaseOrder on the sequence of records each job is
// written with. It has its own copy of the state machine, so a wrong edge
// in the protocol's table is caught too.
//
// What it cannot see: a job's state that never reached the metadata store
// (it judges the records the store applied, in their order), and, of
// those, any field but the phase, retry phase and abandon phase (copy
// progress and the rest are JobChecker's, or no checker's).
type PhaseChecker struct {
	last     map[uint64]lastPhase
	cutovers map[uint64]int
}

// lastPhase is what PhaseChecker keeps of a job's last record: all that
// the next record is judged against (not the whole record, several
// hundred bytes copied into the map per record).
type lastPhase struct {
	phase, retry job.Phase
}

// NewPhaseChecker returns a checker.
func NewPhaseChecker() *PhaseChecker {
	return &PhaseChecker{last: map[uint64]lastPhase{}, cutovers: map[uint64]int{}}
}

// phaseEdges is the SplitJob state machine, written out edge by edge.
var phaseEdges = map[job.Phase][]job.Phase{
	job.Planned:    {job.Backfill, job.Failed, job.Abandoning},
	job.Backfill:   {job.Fence, job.Failed, job.Abandoning},
	job.Fence:      {job.DeltaCopy, job.Failed, job.Abandoning},
	job.DeltaCopy:  {job.Cutover, job.Failed, job.Abandoning},
	job.Cutover:    {job.Cleanup, job.Failed},
	job.Cleanup:    {job.Done, job.Failed},
	job.Abandoning: {job.Abandoned},
}

// Recorded checks one written record of a job.
func (c *PhaseChecker) Recorded(j job.SplitJob) *property.Violation {
	if (j.Phase == job.Failed) != (j.RetryPhase != 0) {
		return property.Violated(property.MPhaseOrder, "job %d in %s with retry_phase %s", j.ID, j.Phase, j.RetryPhase)
	}
	if (j.Phase == job.Abandoning || j.Phase == job.Abandoned) != (j.AbandonFromPhase != 0) {
		return property.Violated(property.MPhaseOrder, "job %d in %s with abandon_from_phase %s", j.ID, j.Phase, j.AbandonFromPhase)
	}
	last, seen := c.last[j.ID]
	c.last[j.ID] = lastPhase{phase: j.Phase, retry: j.RetryPhase}
	if !seen {
		if j.Phase != job.Planned {
			return property.Violated(property.MPhaseOrder, "job %d first written in %s", j.ID, j.Phase)
		}
		return nil
	}
	if last.phase.Terminal() {
		return property.Violated(property.MPhaseOrder, "job %d rewritten after %s (now %s)", j.ID, last.phase, j.Phase)
	}
	if last.phase == j.Phase {
		return nil // progress within a phase
	}
	ok := false
	if last.phase == job.Failed {
		ok = j.Phase == last.retry || (j.Phase == job.Abandoning && last.retry <= job.DeltaCopy)
	} else {
		for _, to := range phaseEdges[last.phase] {
			ok = ok || to == j.Phase
		}
	}
	if !ok {
		return property.Violated(property.MPhaseOrder, "job %d moved %s -> %s", j.ID, last.phase, j.Phase)
	}
	if j.Phase == job.Failed && j.RetryPhase != last.phase {
		return property.Violated(property.MPhaseOrder, "job %d failed in %s but keeps retry_phase %s", j.ID, last.phase, j.RetryPhase)
	}
	if j.Phase == job.Cutover && last.phase == job.DeltaCopy {
		c.cutovers[j.ID]++
		if c.cutovers[j.ID] > 1 {
			return property.Violated(property.MPhaseOrder, "job %d cut over twice", j.ID)
		}
	}
	if j.Phase == job.Abandoning && c.cutovers[j.ID] > 0 {
		return property.Violated(property.MPhaseOrder, "job %d abandoned after CUTOVER", j.ID)
	}
	return nil
}

// Writes returns the puts a successful simkv request applied (for
// observers of the metadata store): a put, or the taken branch of a txn.
func Writes(req simkv.Request, resp simkv.Response, err error) []simkv.PutRequest {
	return AppendWrites(nil, req, resp, err)
}

// AppendWrites appends Writes(req, resp, err) to dst (an observer that
// sees every request keeps one buffer for them all).
func AppendWrites(dst []simkv.PutRequest, req simkv.Request, resp simkv.Response, err error) []simkv.PutRequest {
	if err != nil {
		return dst
	}
	switch {
	case req.Put != nil:
		return append(dst, *req.Put)
	case req.Txn != nil && resp.Txn != nil:
		ops := req.Txn.Failure
		if resp.Txn.Succeeded {
			ops = req.Txn.Success
		}
		for _, op := range ops {
			if op.Put != nil {
				dst = append(dst, *op.Put)
			}
		}
	}
	return dst
}
