// Package catalog is the versioned route catalog: which group serves which
// route-key span, whether a route is write-fenced by a migration, and the
// migration fields the target needs (staged visibility, the job, the
// cutover timestamp floor).
//
// A catalog is a value. Every change produces a new catalog with Version+1;
// the metadata store applies it only by compare-and-swap on the previous
// version, and every published snapshot must pass Validate (no two routes
// overlap).
package catalog

import (
	"fmt"
	"sort"
	"strconv"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
)

// State is a route's write state.
type State uint8

// Route states.
const (
	// Active routes accept reads and writes.
	Active State = iota
	// WriteFenced routes serve reads but reject every write (retryably):
	// their data is being moved.
	WriteFenced
)

// String names the state.
func (s State) String() string {
	if s == WriteFenced {
		return "WriteFenced"
	}
	return "Active"
}

// Route maps a route-key span to a group.
type Route struct {
	ID     uint64
	Start  string
	End    string // "" = +inf
	Group  int
	State  State
	Parent uint64 // the route this one was split from, 0 if none

	// Migration fields.
	StagedVisible       bool   // reads on Group merge the job's staged rows
	MigrationJob        uint64 // the job whose staged rows to merge
	MinWriteTSExclusive hlc.TS // Group rejects writes at or below this
	// MinReadTS is the oldest timestamp the route's data answers for: a
	// moved route inherits its source's compaction watermark (the target
	// never saw the versions compacted before the move).
	MinReadTS hlc.TS
}

// Span returns the route's key span.
func (r Route) Span() keys.Span { return keys.Span{Start: r.Start, End: r.End} }

// String renders the route.
func (r Route) String() string { return string(r.AppendTo(nil)) }

// AppendTo appends the route as String renders it:
// r<id>[start,end)@g<group>, then its state unless Active, staged(j<job>)
// when staged rows are visible, and its write floor and read minimum when
// set. (Phase changes are traced with their catalog; building the text in
// one buffer costs one allocation where fmt cost several per route.)
func (r Route) AppendTo(b []byte) []byte {
	b = strconv.AppendUint(append(b, 'r'), r.ID, 10)
	b = r.Span().AppendTo(b)
	b = strconv.AppendInt(append(b, "@g"...), int64(r.Group), 10)
	if r.State != Active {
		b = append(append(b, ' '), r.State.String()...)
	}
	if r.StagedVisible {
		b = strconv.AppendUint(append(b, " staged(j"...), r.MigrationJob, 10)
		b = append(b, ')')
	}
	if r.MinWriteTSExclusive != 0 {
		b = r.MinWriteTSExclusive.AppendTo(append(b, " floor="...))
	}
	if r.MinReadTS != 0 {
		b = r.MinReadTS.AppendTo(append(b, " minread="...))
	}
	return b
}

// Catalog is one snapshot of the route table.
type Catalog struct {
	Version     uint64
	NextRouteID uint64
	// Routes is sorted by Start. A decoded catalog's array is shared by
	// every holder (the world's decode cache hands one copy to all nodes,
	// coordinators and the migrator): never modify it in place; use Clone.
	Routes []Route
	// LastCutover is the version of the latest CUTOVER (a route moved to
	// another group): the max_cutover_version_seen of whoever holds this
	// snapshot.
	LastCutover uint64
}

// Clone returns a deep copy.
func (c Catalog) Clone() Catalog {
	c.Routes = append([]Route(nil), c.Routes...)
	return c
}

// String renders the catalog on one line.
func (c Catalog) String() string { return string(c.AppendTo(nil)) }

// AppendTo appends the catalog as String renders it: v<version>{routes},
// the routes separated by a space.
func (c Catalog) AppendTo(b []byte) []byte {
	b = strconv.AppendUint(append(b, 'v'), c.Version, 10)
	b = append(b, '{')
	for i, r := range c.Routes {
		if i > 0 {
			b = append(b, ' ')
		}
		b = r.AppendTo(b)
	}
	return append(b, '}')
}

// Lookup returns the route whose span holds route key rk.
func (c Catalog) Lookup(rk string) (Route, bool) {
	if i, ok := c.LookupIndex(rk); ok {
		return c.Routes[i], true
	}
	return Route{}, false
}

// LookupIndex returns the position in Routes of the route whose span holds
// route key rk, for callers that keep something per route.
func (c Catalog) LookupIndex(rk string) (int, bool) {
	// The last route starting at or before rk (sort.Search's answer, less
	// one, written out: routes are looked up for every request and every
	// applied write a checker judges, and the search's callback cost more
	// than its few comparisons). It holds rk unless rk lies past its end.
	lo, hi := 0, len(c.Routes)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.Routes[m].Start > rk {
			hi = m
		} else {
			lo = m + 1
		}
	}
	i := lo - 1
	if i >= 0 && (c.Routes[i].End == "" || rk < c.Routes[i].End) {
		return i, true
	}
	return 0, false
}

// Route returns the route with id.
func (c Catalog) Route(id uint64) (Route, bool) {
	for _, r := range c.Routes {
		if r.ID == id {
			return r, true
		}
	}
	return Route{}, false
}

// Overlap returns a pair of routes that share a key, if any. It does not
// assume the routes are sorted.
func (c Catalog) Overlap() (Route, Route, bool) {
	for i := range c.Routes {
		for j := i + 1; j < len(c.Routes); j++ {
			if c.Routes[i].Span().Overlaps(c.Routes[j].Span()) {
				return c.Routes[i], c.Routes[j], true
			}
		}
	}
	return Route{}, Route{}, false
}

// Validate checks a snapshot: routes sorted, non-empty, non-overlapping,
// covering the whole keyspace, with unique ids below NextRouteID.
func (c Catalog) Validate() error {
	if a, b, ok := c.Overlap(); ok {
		return fmt.Errorf("catalog v%d: routes %s and %s overlap", c.Version, a, b)
	}
	seen := map[uint64]bool{}
	want := ""
	for i, r := range c.Routes {
		if r.End != "" && r.Start >= r.End {
			return fmt.Errorf("catalog v%d: empty route %s", c.Version, r)
		}
		if r.Start != want {
			return fmt.Errorf("catalog v%d: gap or disorder before %s", c.Version, r)
		}
		if r.End == "" && i != len(c.Routes)-1 {
			return fmt.Errorf("catalog v%d: unbounded route %s is not last", c.Version, r)
		}
		if seen[r.ID] || r.ID == 0 || r.ID >= c.NextRouteID {
			return fmt.Errorf("catalog v%d: bad route id in %s", c.Version, r)
		}
		seen[r.ID] = true
		want = r.End
	}
	if len(c.Routes) == 0 || want != "" {
		return fmt.Errorf("catalog v%d: the keyspace is not covered to +inf", c.Version)
	}
	return nil
}

// replace returns the next version of c with routes replaced by f.
func (c Catalog) next(f func(rs []Route) []Route) Catalog {
	n := c.Clone()
	n.Version++
	n.Routes = f(n.Routes)
	sort.Slice(n.Routes, func(i, j int) bool { return n.Routes[i].Start < n.Routes[j].Start })
	return n
}

// Fence splits route id at splitKey: the left part stays Active under id,
// the right part becomes a new WriteFenced route on the same group. It
// returns the new catalog and the moving route's id.
func (c Catalog) Fence(id uint64, splitKey string) (Catalog, uint64, error) {
	r, ok := c.Route(id)
	if !ok {
		return c, 0, fmt.Errorf("catalog: no route %d", id)
	}
	if !r.Span().Contains(splitKey) || splitKey == r.Start || r.State != Active {
		return c, 0, fmt.Errorf("catalog: cannot fence %s at %q", r, splitKey)
	}
	moving := c.NextRouteID
	n := c.next(func(rs []Route) []Route {
		for i := range rs {
			if rs[i].ID == id {
				rs[i].End = splitKey
			}
		}
		return append(rs, Route{ID: moving, Start: splitKey, End: r.End, Group: r.Group, State: WriteFenced, Parent: id})
	})
	n.NextRouteID++
	return n, moving, nil
}

// Cutover replaces the WriteFenced route id with an Active route on target
// whose reads merge job's staged rows, whose writes must lie above floor and
// whose reads must lie at or above minRead; the snapshot records itself as
// the latest cutover.
func (c Catalog) Cutover(id uint64, target int, job uint64, floor, minRead hlc.TS) (Catalog, error) {
	r, ok := c.Route(id)
	if !ok || r.State != WriteFenced {
		return c, fmt.Errorf("catalog: route %d is not write-fenced", id)
	}
	n := c.next(func(rs []Route) []Route {
		for i := range rs {
			if rs[i].ID == id {
				rs[i].Group, rs[i].State = target, Active
				rs[i].StagedVisible, rs[i].MigrationJob, rs[i].MinWriteTSExclusive = true, job, floor
				if minRead > rs[i].MinReadTS {
					rs[i].MinReadTS = minRead
				}
			}
		}
		return rs
	})
	n.LastCutover = n.Version
	return n, nil
}

// Intersecting returns the routes whose spans overlap s, in key order.
func (c Catalog) Intersecting(s keys.Span) []Route { return c.AppendIntersecting(nil, s) }

// AppendIntersecting appends the routes Intersecting returns to dst (a
// caller with room for them allocates nothing).
func (c Catalog) AppendIntersecting(dst []Route, s keys.Span) []Route {
	for _, r := range c.Routes {
		if r.Span().Overlaps(s) {
			dst = append(dst, r)
		}
	}
	return dst
}

// ClearStaged turns off staged visibility on route id. The route keeps its
// write floor (callers may supply timestamps, and one below the floor would
// hide under versions the move brought), unless clearFloor (a wrong
// variant) says otherwise.
func (c Catalog) ClearStaged(id uint64, clearFloor bool) (Catalog, error) {
	r, ok := c.Route(id)
	if !ok || !r.StagedVisible {
		return c, fmt.Errorf("catalog: route %d has no staged visibility", id)
	}
	return c.next(func(rs []Route) []Route {
		for i := range rs {
			if rs[i].ID == id {
				rs[i].StagedVisible, rs[i].MigrationJob = false, 0
				if clearFloor {
					rs[i].MinWriteTSExclusive = 0
				}
			}
		}
		return rs
	}), nil
}

// Unfence returns the WriteFenced route id to Active on its group (abandon).
func (c Catalog) Unfence(id uint64) (Catalog, error) {
	r, ok := c.Route(id)
	if !ok || r.State != WriteFenced {
		return c, fmt.Errorf("catalog: route %d is not write-fenced", id)
	}
	return c.next(func(rs []Route) []Route {
		for i := range rs {
			if rs[i].ID == id {
				rs[i].State = Active
			}
		}
		return rs
	}), nil
}

// AddRoute returns the next version with r appended under a new id, without
// any check. Only the overlapping-routes bug uses it.
func (c Catalog) AddRoute(r Route) Catalog {
	n := c.next(func(rs []Route) []Route {
		r.ID = c.NextRouteID
		return append(rs, r)
	})
	n.NextRouteID++
	return n
}
