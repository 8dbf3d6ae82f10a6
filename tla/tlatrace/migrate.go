package tlatrace

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"shardsim/checker/migratecheck"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/simclock"
	"shardsim/simkv"
)

// Migration records a migration run (one split job) as
// RangeMigrationSteps.tla sees it: after every first apply of a log entry
// of the job's source or target group and after every metadata-store write
// of the job record or the catalog, the abstract state (the job's phase and
// the fields that matter, the routes overlapping the moving span, the
// source's and the target's versions in the span, the target's staged rows,
// floor and promotion, the source's read fence and cleanup) is recomputed
// from the applied state, and a step that changed it becomes an event
// naming the specification's action, its parameters and the change.
//
// It is a group.Observer, and Meta returns its simkv.Observer; it only
// reads, so a run with it attached has the digest of one without.
type Migration struct {
	source, target int
	moving         keys.Span
	jobID          uint64
	cur            migState
	events         []migEvent
}

// NewMigration returns a recorder for the job that moves span moving from
// group source to group target (the run's first job).
func NewMigration(source, target int, moving keys.Span) *Migration {
	m := &Migration{source: source, target: target, moving: moving}
	m.cur = migState{phase: "NONE", job: jobView{rf: "NONE", retry: "NONE"},
		routes: []routeView{{"S", "Active", false}}, src: verSet{}, tgt: verSet{}, stg: verSet{}}
	return m
}

// ver is one version: raw key and commit timestamp.
type ver struct {
	key string
	ts  hlc.TS
}

type verSet map[ver]bool

type jobView struct {
	snap, fence, low, maxImp hlc.TS
	rf, retry                string
	allDone, cut             bool
	cleared, cleaned         bool
}

type routeView struct {
	g, st  string
	staged bool
}

// migState is the abstract state.
type migState struct {
	phase   string
	job     jobView
	routes  []routeView
	src     verSet
	tgt     verSet
	stg     verSet
	tfloor  hlc.TS
	armed   bool
	prom    bool
	cleaned bool
}

// migEvent is one step: the action, its parameters, the state's scalar
// part after it and its set changes.
type migEvent struct {
	act, g   string
	rows     []ver
	pass     int
	ts       hlc.TS
	phase    string
	job      jobView
	routes   []routeView
	tfloor   hlc.TS
	armed    bool
	prom     bool
	cleaned  bool
	add, del [3][]ver // src, tgt, stg
}

// Steps returns how many events were recorded.
func (m *Migration) Steps() int { return len(m.events) }

// OnLeader implements group.Observer (leadership is not modelled).
func (m *Migration) OnLeader(int, int, uint64, bool) {}

// OnApply implements group.Observer: the first apply of an entry of the
// source or the target.
func (m *Migration) OnApply(g, node int, e fsm.Entry, r fsm.Result, first bool, f *fsm.FSM) {
	if !first || (g != m.source && g != m.target) {
		return
	}
	next := m.cur
	ev := migEvent{act: "other"}
	if g == m.source {
		next.src = m.spanVersions(f)
		next.cleaned = m.jobID != 0 && f.Cleaned(m.jobID)
		_, next.armed = f.Fence(m.jobID)
		next.armed = next.armed && m.jobID != 0
		ev.g = "S"
	} else {
		next.tgt = m.spanVersions(f)
		next.stg = m.staged(f)
		next.prom = m.jobID != 0 && f.Promoted(m.jobID)
		if e.Kind == fsm.KindFloor && r.Err == nil && e.Guard.Job == m.jobID && e.Guard.TS > next.tfloor {
			next.tfloor = e.Guard.TS
		}
		ev.g = "T"
	}
	m.name(&ev, e, r, next)
	m.emit(ev, next)
}

// name sets the action and its parameters from the entry (and, where the
// entry does not say, from the change).
func (m *Migration) name(ev *migEvent, e fsm.Entry, r fsm.Result, next migState) {
	if r.Err != nil {
		return // a refused entry changes nothing: any change is "other"
	}
	switch e.Kind {
	case fsm.KindWrite, fsm.KindCommit, fsm.KindRollback, fsm.KindDeleteRange:
		ev.act = "write"
		for _, p := range r.Puts {
			if m.inSpan(p.Key) {
				ev.rows = append(ev.rows, ver{p.Key, p.TS})
			}
		}
	case fsm.KindImport:
		ev.act, ev.pass = "import", int(e.Import.Bracket>>8)
		for _, p := range e.Import.Rows {
			if m.inSpan(p.Key) {
				ev.rows = append(ev.rows, ver{p.Key, p.TS})
			}
		}
	case fsm.KindPromote:
		ev.act, ev.rows = "promote", removed(m.cur.stg, next.stg)
	case fsm.KindCompact:
		ev.act = "compact"
		if ev.g == "S" {
			ev.rows = removed(m.cur.src, next.src)
		} else {
			ev.rows = removed(m.cur.tgt, next.tgt)
		}
	case fsm.KindCleanup:
		ev.act, ev.ts = "cleanup", e.Cleanup.FenceTS
	case fsm.KindAbandonStaged:
		ev.act = "abandon_staged"
	case fsm.KindFloor:
		ev.act, ev.ts = "floor", e.Guard.TS
	case fsm.KindArmFence:
		ev.act = "arm"
	case fsm.KindDisarmFence:
		ev.act = "disarm"
	}
}

// inSpan says whether raw key k is data of the moving span: transaction
// lock rows are not (they are drained before fence_ts, never exported).
func (m *Migration) inSpan(k string) bool {
	return !keys.IsStaged(k) && keys.Classify(k) != keys.FamilyTxnLock && m.moving.Contains(keys.RouteKey(k))
}

func (m *Migration) spanVersions(f *fsm.FSM) verSet {
	out := verSet{}
	f.MovedRows(m.moving, func(raw string, vs []mvcc.Version) {
		if keys.Classify(raw) == keys.FamilyTxnLock {
			return
		}
		for _, v := range vs {
			out[ver{raw, v.TS}] = true
		}
	})
	return out
}

func (m *Migration) staged(f *fsm.FSM) verSet {
	out := verSet{}
	if m.jobID == 0 {
		return out
	}
	sp := keys.StageSpan(m.jobID)
	f.Store.Ascend(sp.Start, sp.End, func(k string, vs []mvcc.Version) bool {
		raw, _ := keys.Unstage(m.jobID, k)
		for _, v := range vs {
			out[ver{raw, v.TS}] = true
		}
		return true
	})
	return out
}

// Meta returns the observer of the metadata store.
func (m *Migration) Meta() simkv.Observer { return migMeta{m} }

// migMeta is the metadata store's observer of a Migration.
type migMeta struct{ m *Migration }

// OnInvoke implements simkv.Observer.
func (migMeta) OnInvoke(uint64, string, simclock.Time, simkv.Request) {}

// OnReturn implements simkv.Observer.
func (migMeta) OnReturn(uint64, simclock.Time, simkv.Response, error) {}

// OnApply implements simkv.Observer.
func (o migMeta) OnApply(_ uint64, _ simclock.Time, req simkv.Request, resp simkv.Response, err error, _, _ int64) {
	o.m.metaApplied(req, resp, err)
}

// metaApplied records the catalog and the job record a metadata request
// wrote.
func (m *Migration) metaApplied(req simkv.Request, resp simkv.Response, err error) {
	next := m.cur
	for _, p := range migratecheck.Writes(req, resp, err) {
		k := string(p.Key)
		switch {
		case k == job.CatalogKey:
			if c, derr := catalog.Decode(p.Value); derr == nil {
				next.routes = m.routesOf(c)
			}
		case strings.HasPrefix(k, job.JobPrefix()) || strings.HasPrefix(k, job.HistPrefix()):
			j, derr := job.Decode(p.Value)
			if derr != nil || (m.jobID != 0 && j.ID != m.jobID) || (m.jobID == 0 && !strings.HasPrefix(k, job.JobPrefix())) {
				continue
			}
			m.jobID = j.ID
			next.phase, next.job = j.Phase.String(), viewOf(j)
		}
	}
	m.emit(migEvent{act: "job"}, next)
}

func viewOf(j job.SplitJob) jobView {
	v := jobView{snap: j.SnapshotTS, fence: j.FenceTS, low: j.DeltaFloor, maxImp: j.MaxImportedTS,
		rf: j.ReadFence.String(), retry: "NONE", allDone: j.AllBracketsDone(), cut: j.CutoverVersion != 0,
		cleared: j.StagedCleared, cleaned: j.SourceCleaned}
	if j.RetryPhase != 0 {
		v.retry = j.RetryPhase.String()
	}
	return v
}

func (m *Migration) routesOf(c catalog.Catalog) []routeView {
	var out []routeView
	for _, r := range c.Routes {
		if !(r.End == "" || m.moving.Start < r.End) || !(m.moving.End == "" || r.Start < m.moving.End) {
			continue
		}
		g := "O"
		switch r.Group {
		case m.source:
			g = "S"
		case m.target:
			g = "T"
		}
		out = append(out, routeView{g, r.State.String(), r.StagedVisible})
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return out
}

func removed(from, to verSet) []ver {
	var out []ver
	for v := range from {
		if !to[v] {
			out = append(out, v)
		}
	}
	return out
}

// emit records ev when next differs from the current state.
func (m *Migration) emit(ev migEvent, next migState) {
	var changed bool
	for i, pair := range [3][2]verSet{{m.cur.src, next.src}, {m.cur.tgt, next.tgt}, {m.cur.stg, next.stg}} {
		ev.add[i], ev.del[i] = removed(pair[1], pair[0]), removed(pair[0], pair[1])
		changed = changed || len(ev.add[i])+len(ev.del[i]) > 0
	}
	changed = changed || next.phase != m.cur.phase || next.job != m.cur.job || fmt.Sprint(next.routes) != fmt.Sprint(m.cur.routes) ||
		next.tfloor != m.cur.tfloor || next.armed != m.cur.armed || next.prom != m.cur.prom || next.cleaned != m.cur.cleaned
	if !changed {
		return
	}
	ev.phase, ev.job, ev.routes = next.phase, next.job, next.routes
	ev.tfloor, ev.armed, ev.prom, ev.cleaned = next.tfloor, next.armed, next.prom, next.cleaned
	m.events = append(m.events, ev)
	m.cur = next
}

// WriteModule writes the trace as TLA+ module name (the file name without
// .tla) for TraceRangeMigration.tla.
func (m *Migration) WriteModule(w io.Writer, name string) error {
	rk := m.ranks()
	var b strings.Builder
	fmt.Fprintf(&b, "---- MODULE %s ----\n", name)
	b.WriteString("\\* Generated by simrun run -tla-trace: a migration run mapped onto RangeMigrationSteps.tla.\n")
	b.WriteString("EXTENDS Integers, Sequences, TLC\n")
	fmt.Fprintf(&b, "TraceKeys == 1..%d\nTraceMaxTS == %d\n", len(rk.keys), len(rk.ts)-1) // rk.ts holds 0 too
	b.WriteString("Trace == <<\n")
	for i, e := range m.events {
		b.WriteString("  " + string(rk.event(e)))
		if i+1 < len(m.events) {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(">>\nTraces == <<Trace>>\n====\n")
	_, err := io.WriteString(w, b.String())
	return err
}
