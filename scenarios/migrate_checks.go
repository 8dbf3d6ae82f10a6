package scenarios

import (
	"fmt"

	"shardsim/checker/migratecheck"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/hotspot"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/property"
	"shardsim/simclock"
	"shardsim/simkv"
)

// migrateChecks connects a migration world to its checkers. It observes the
// groups (every apply, every leadership change), the metadata store (every
// catalog and job record written) and the coordinators' views, and judges
// each event as it happens; the history checks run at the end.
type migrateChecks struct {
	m       *migrateWorld
	catalog *migratecheck.CatalogChecker
	phases  *migratecheck.PhaseChecker
	jobs    *migratecheck.JobChecker
	oracle  *migratecheck.VersionOracle

	latest           catalog.Catalog // the last catalog the store accepted
	liveJob          uint64
	lastJobEnd       simclock.Time
	jobsSeen         int
	writerKeys       []string
	lostWriteRecheck bool        // re-check M.NoLostWrite after this step
	lostWriteAll     bool        // every write (else those in lostWriteSpans)
	lostWriteSpans   []keys.Span // spans an event of this step touched
	lostWriteCause   string      // what triggered it
	openReads        []openRead

	imported, promoted, cleaned int64
	splits, declines, isolated  int64
	movedKeys                   map[string]bool // raw keys any job copied
	failedPhases                int64           // jobs moved to FAILED (and later retried)
}

type openRead struct {
	group, node int
	term        uint64
	id          uint64
	span        keys.Span
}

func newMigrateChecks(m *migrateWorld) *migrateChecks {
	return &migrateChecks{m: m, catalog: migratecheck.NewCatalogChecker(), phases: migratecheck.NewPhaseChecker(),
		jobs: migratecheck.NewJobChecker(), oracle: migratecheck.NewVersionOracle(),
		latest: initialCatalog(), writerKeys: migrateUserKeys(), movedKeys: map[string]bool{}}
}

func (c *migrateChecks) fail(v *property.Violation) { c.m.w.Fail(v) }

// OnApply implements group.Observer.
func (c *migrateChecks) OnApply(g, node int, e fsm.Entry, r fsm.Result, first bool, f *fsm.FSM) {
	if e.Kind == fsm.KindCatalog {
		c.fail(c.catalog.Viewed(fmt.Sprintf("g%d/n%d", g, node), f.View.Version))
		if ln, _ := c.m.cluster.Leader(g); ln == node {
			c.checkWriters()
		}
	}
	if !first {
		return
	}
	switch e.Kind {
	case fsm.KindWrite:
		if r.Err != nil {
			return
		}
		v, _ := f.Store.At(e.Write.Key, e.Write.TS)
		c.oracle.Add(migratecheck.AppliedWrite{Op: e.Write.Op, Group: g, Key: e.Write.Key, Version: v, At: c.m.w.Loop.Now()})
		c.fail(c.jobs.SourceWrite(g, e.Write.Key, e.Write.TS, f.View.Version))
		c.fail(c.jobs.TargetWrite(g, e.Write.Key, e.Write.TS, f.View.Version))
	case fsm.KindImport:
		if r.Err != nil || r.Duplicate {
			return
		}
		c.imported += int64(len(e.Import.Rows))
		c.jobs.Imported(e.Import.Job, e.Import.Rows)
		for _, row := range e.Import.Rows {
			c.movedKeys[row.Key] = true
			c.fail(c.oracle.CheckImported(e.Import.Job, row))
		}
	case fsm.KindPromote:
		c.promoted += int64(r.Applied)
		// A version promotion drops stays lost, so checking once the
		// promotion is complete (and at every later phase) suffices.
		if j, ok := c.jobs.Job(e.Promote.Job); ok && r.Done {
			c.recheckLostWritesIn("promotion", j.Moving())
		}
	case fsm.KindCleanup:
		c.cleaned += int64(r.Applied)
		j, _ := c.jobs.Job(e.Cleanup.Job)
		promoted, staged := false, 0
		for n := 0; n < migrateNodes; n++ {
			v := c.m.cluster.Voter(j.TargetGroup, n)
			promoted = promoted || v.Promoted(j.ID)
		}
		staged = c.m.cluster.MostApplied(j.TargetGroup).StagedRows(j.ID)
		open := 0
		for _, o := range c.openReads {
			// A read whose leader crashed or lost the term can no longer
			// be served; it is not in flight.
			if o.group == g && o.span.Overlaps(e.Cleanup.Moving) && c.m.cluster.IsLeader(g, o.node, o.term) {
				open++
			}
		}
		c.fail(c.jobs.Cleanup(j.ID, promoted, staged, open))
		c.recheckLostWritesIn("cleanup", e.Cleanup.Moving)
	case fsm.KindAbandonStaged:
		c.recheckLostWrites("abandon")
	}
}

// OnLeader implements group.Observer.
func (c *migrateChecks) OnLeader(g, node int, term uint64, ready bool) { c.checkWriters() }

// checkWriters checks M.SingleWriter over the workload's route keys.
func (c *migrateChecks) checkWriters() {
	var views []migratecheck.GroupView
	for g := 0; g < migrateGroups; g++ {
		n, _ := c.m.cluster.Leader(g)
		if n < 0 {
			continue
		}
		views = append(views, migratecheck.GroupView{Group: g, Ready: c.m.cluster.Ready(g), View: c.m.cluster.Voter(g, n).View})
	}
	c.fail(migratecheck.CheckSingleWriter(c.writerKeys, views))
}

// detected counts the hotspot detector's decisions.
func (c *migrateChecks) detected(d hotspot.Decision, job uint64) {
	if job != 0 {
		c.splits++
		if d.Isolate {
			c.isolated++
		}
	} else {
		c.declines++
	}
}

// viewed is the coordinators' view hook.
func (c *migrateChecks) viewed(name string, version uint64) { c.fail(c.catalog.Viewed(name, version)) }

func (c *migrateChecks) readOpen(group, node int, term, id uint64, span keys.Span) {
	// Forget reads whose leader crashed or lost its term: never served.
	kept := c.openReads[:0]
	for _, o := range c.openReads {
		if c.m.cluster.IsLeader(o.group, o.node, o.term) {
			kept = append(kept, o)
		}
	}
	c.openReads = append(kept, openRead{group: group, node: node, term: term, id: id, span: span})
}

func (c *migrateChecks) readClose(group, node int, term, id uint64) {
	for i, o := range c.openReads {
		if o.group == group && o.node == node && o.term == term && o.id == id {
			c.openReads = append(c.openReads[:i], c.openReads[i+1:]...)
			return
		}
	}
}

// recheckLostWrites asks for a full M.NoLostWrite check after this step.
func (c *migrateChecks) recheckLostWrites(when string) {
	c.lostWriteRecheck, c.lostWriteAll = true, true
	c.lostWriteCause = when
}

// recheckLostWritesIn asks for an M.NoLostWrite check of the writes in span.
func (c *migrateChecks) recheckLostWritesIn(when string, span keys.Span) {
	c.lostWriteRecheck = true
	c.lostWriteSpans = append(c.lostWriteSpans, span)
	c.lostWriteCause = when
}

// metaObserver adapts migrateChecks to simkv.Observer.
type metaObserver struct{ c *migrateChecks }

// OnInvoke implements simkv.Observer.
func (metaObserver) OnInvoke(uint64, string, simclock.Time, simkv.Request) {}

// OnReturn implements simkv.Observer.
func (metaObserver) OnReturn(uint64, simclock.Time, simkv.Response, error) {}

// OnApply implements simkv.Observer.
func (o metaObserver) OnApply(call uint64, at simclock.Time, req simkv.Request, resp simkv.Response, err error, before, after int64) {
	o.c.metaApplied(at, req, resp, err)
}

// metaApplied judges the catalog and job records a metadata request wrote.
func (c *migrateChecks) metaApplied(at simclock.Time, req simkv.Request, resp simkv.Response, err error) {
	puts := migratecheck.Writes(req, resp, err)
	var cat *catalog.Catalog
	for _, p := range puts {
		if string(p.Key) == job.CatalogKey {
			nc, derr := catalog.Decode(p.Value)
			if derr != nil {
				c.m.w.Fail(property.Violated(property.MCatalogNonOverlap, "undecodable catalog: %v", derr))
				return
			}
			c.fail(c.catalog.Published(nc))
			c.latest, cat = nc, &nc
		}
	}
	for _, p := range puts {
		k := string(p.Key)
		switch {
		case k == job.LiveJobKey:
			c.liveJob = job.DecodeID(p.Value)
			if c.liveJob == 0 {
				c.lastJobEnd = at
			}
		case len(k) > len(job.JobPrefix()) && k[:len(job.JobPrefix())] == job.JobPrefix(),
			len(k) > len(job.HistPrefix()) && k[:len(job.HistPrefix())] == job.HistPrefix():
			j, derr := job.Decode(p.Value)
			if derr != nil {
				c.m.w.Fail(property.Violated(property.MPhaseOrder, "undecodable job record: %v", derr))
				return
			}
			c.observeJob(j, cat)
		}
	}
}

func (c *migrateChecks) observeJob(j job.SplitJob, cat *catalog.Catalog) {
	prev, seen := c.jobs.Job(j.ID)
	if !seen {
		c.jobsSeen++
	}
	c.fail(c.phases.Recorded(j))
	if c.jobs.Recorded(j, cat) {
		// CUTOVER: everything at or below fence_ts must be on the target.
		// The checker gets the source's every row and picks the moving
		// span's itself (not through the protocol's brackets).
		var rows []mvcc.Row
		c.m.cluster.MostApplied(j.SourceGroup).Store.Ascend("", "", func(raw string, vs []mvcc.Version) bool {
			for _, v := range vs {
				rows = append(rows, mvcc.Row{Key: raw, Version: v})
			}
			return true
		})
		c.fail(c.jobs.CheckCopy(j.ID, rows))
	}
	if j.Phase == job.Failed && prev.Phase != job.Failed {
		c.failedPhases++
	}
	if !seen || prev.Phase != j.Phase || cat != nil {
		c.recheckLostWrites("job " + j.Phase.String())
	}
}

// readOwner reads key at ts as its owner in the latest published catalog
// serves it (from the owner's most advanced voter, merging staged rows when
// the route says so) — independent of any group's own view.
func (c *migrateChecks) readOwner(key string, ts hlc.TS) (mvcc.Read, bool) {
	r, ok := c.latest.Lookup(keys.RouteKey(key))
	if !ok {
		return mvcc.Read{}, false
	}
	v := c.m.cluster.MostApplied(r.Group)
	return v.Store.Get(key, ts, mvcc.StagingOf(r.StagedVisible, r.MigrationJob), mvcc.MergeNewest), true
}

// step runs after every event: deferred checks, and the end of the run.
func (c *migrateChecks) step() {
	w := c.m.w
	if w.Failed() {
		return
	}
	if c.lostWriteRecheck {
		var spans []keys.Span
		if !c.lostWriteAll {
			spans = c.lostWriteSpans
		}
		c.fail(c.oracle.CheckNoLostWrite(c.m.rec.acked, c.readOwner, "after "+c.lostWriteCause, spans...))
		c.lostWriteRecheck, c.lostWriteAll, c.lostWriteSpans = false, false, c.lostWriteSpans[:0]
	}
	if !w.Failed() && c.m.done() {
		w.Loop.Stop()
	}
}

// final runs the end-of-run checks: histories, then liveness.
func (c *migrateChecks) final(cfg Config) {
	w := c.m.w
	if cfg.Histories != nil {
		cfg.showHistory("migrate", migratecheck.KeyModel, migratecheck.Operations(c.m.rec.history(c.oracle), c.oracle))
	}
	if w.Failed() {
		return
	}
	for _, r := range c.m.rec.reads {
		if v := c.oracle.CheckRead(r); v != nil {
			c.fail(v)
			return
		}
	}
	for _, s := range c.m.rec.scans {
		if v := c.oracle.CheckScan(s); v != nil {
			c.fail(v)
			return
		}
	}
	c.fail(c.oracle.CheckNoLostWrite(c.m.rec.acked, c.readOwner, "at the end"))
	if w.Failed() {
		return
	}
	if !c.m.done() {
		c.m.w.Fail(property.Violated(property.MJobTerminates, "%s", c.stuck()))
		return
	}
	for _, r := range c.latest.Routes {
		if r.State == catalog.WriteFenced || r.StagedVisible {
			c.m.w.Fail(property.Violated(property.MJobTerminates, "every job ended but route %s is left behind", r))
			return
		}
	}
	ops := c.m.rec.history(c.oracle)
	w.Judge(migratecheck.CheckLinearizable(ops, c.oracle, cfg.checkTimeout()))
}

// stuck explains a run that did not converge after the heal.
func (c *migrateChecks) stuck() string {
	if c.liveJob != 0 {
		j, _ := c.jobs.Job(c.liveJob)
		return fmt.Sprintf("job %d still %s %v after the heal", j.ID, j.Phase, j.LastError)
	}
	for i, cl := range c.m.clients {
		if !cl.done {
			return fmt.Sprintf("client %d never finished", i)
		}
	}
	if !c.m.opDone {
		return "the operator never finished"
	}
	return "the run did not converge"
}
