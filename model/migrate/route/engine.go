// Package route is one node's routing state, the part of the data plane
// that is neither replicated through a group's log nor read from the
// metadata store on each request: the catalog snapshot the node's watcher
// applied (forward only, with the node's own lag), the
// max_cutover_version_seen watermark that group-0 heartbeats carry, and a
// short-lived cache of ownership answers from group 0.
//
// Every group leader on the node judges requests by this state: which
// routes it owns and which are write-fenced. Because it is per node, a
// voter whose node lags can become leader and judge by an old view; that is
// why the migration's write fence must reach every voter (an all-voter
// barrier), and why a voter that joins a group must first catch up with the
// view of the leader that added it.
//
// The view and the watermark survive a crash (the node persists them); the
// ownership cache does not.
package route

import (
	"slices"

	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/keys"
	"shardsim/simclock"
)

// Engine is one node's routing state.
type Engine struct {
	Node      int
	View      catalog.Catalog // the catalog snapshot the watcher applied
	WatchRev  int64           // metadata revision of View (where the watcher resumes)
	Watermark uint64          // max_cutover_version_seen
	cache     []owned         // volatile ownership answers
}

// owned is a cached ownership answer.
type owned struct {
	span    keys.Span
	routes  []catalog.Route
	version uint64        // the catalog version the answer was read at
	until   simclock.Time // cached until then
}

// New returns the engine of node n starting from view.
func New(n int, view catalog.Catalog) *Engine {
	return &Engine{Node: n, View: view.Clone()}
}

// Restarted drops the volatile state (a crash).
func (e *Engine) Restarted() { e.cache = nil }

// Adopt moves the view forward to c; older or equal snapshots are ignored.
// It reports whether the view moved.
func (e *Engine) Adopt(c catalog.Catalog, rev int64) bool {
	if c.Version <= e.View.Version {
		return false
	}
	e.View, e.WatchRev = c, rev
	if c.LastCutover > e.Watermark {
		e.Watermark = c.LastCutover
	}
	return true
}

// SeeWatermark raises the watermark (a heartbeat arrived).
func (e *Engine) SeeWatermark(v uint64) {
	if v > e.Watermark {
		e.Watermark = v
	}
}

// Cached returns the routes of a cached ownership answer whose span covers
// s, read at a catalog version of at least min and still valid at now.
func (e *Engine) Cached(s keys.Span, min uint64, now simclock.Time) ([]catalog.Route, bool) {
	for _, o := range e.cache {
		if o.version < min || now >= o.until || !covers(o.span, s) {
			continue
		}
		var out []catalog.Route
		for _, r := range o.routes {
			if r.Span().Overlaps(s) {
				out = append(out, r)
			}
		}
		return out, true
	}
	return nil, false
}

func covers(outer, inner keys.Span) bool {
	return outer.Start <= inner.Start && (outer.End == "" || inner.End != "" && inner.End <= outer.End)
}

// Cache remembers an ownership answer for s until until.
func (e *Engine) Cache(s keys.Span, routes []catalog.Route, version uint64, until, now simclock.Time) {
	e.cache = slices.DeleteFunc(e.cache, func(o owned) bool { return now >= o.until })
	e.cache = append(e.cache, owned{span: s, routes: slices.Clone(routes), version: version, until: until})
}
