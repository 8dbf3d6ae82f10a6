package scenarios

import (
	"shardsim/property"

	"shardsim/checker/migratecheck"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/hotspot"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/simclock"
	"shardsim/simkv"
)

// migrateChecks connects a migration world to its checkers. It observes the
// groups (every apply, every leadership change), the metadata store (every
// catalog and job record written), the nodes' and coordinators' views, and
// judges each event as it happens; the history checks run at the end.
type migrateChecks struct {
	m       *migrateWorld
	catalog *migratecheck.CatalogChecker
	phases  *migratecheck.PhaseChecker
	jobs    *migratecheck.JobChecker
	oracle  *migratecheck.VersionOracle
	// nlwChecker judges M.NoLostWrite incrementally; nlwAudit, set by
	// tests only, is shown its verdict next to the full re-check's.
	nlwChecker *migratecheck.NoLostWriteChecker
	nlwAudit   func(incremental, full *property.Violation)

	latest     catalog.Catalog // the last catalog the store accepted
	catalogGen uint64          // how many times latest changed
	liveJob    uint64
	lastJobEnd simclock.Time
	jobsSeen   int
	writerKeys []string
	views      []migratecheck.GroupView // checkWriters' buffer
	recheckNLW bool                     // re-check M.NoLostWrite after this step
	nlwAll     bool                     // every write (else those in nlwSpans)
	nlwSpans   []keys.Span              // spans an event of this step touched
	nlwWhen    string                   // what triggered it ("after ...")
	afterPhase [16]string               // "after job <phase>", made once per phase
	puts       []simkv.PutRequest       // metaApplied's buffer
	ownersBuf  []routeOwner             // owners' buffer
	openReads  []openRead

	imported, promoted, cleaned int64
	splits, declines, isolated  int64
	movedKeys                   map[string]bool // raw keys any job copied
	failedPhases                int64           // jobs moved to FAILED (and later retried)
	belowSnapshot               int64           // writes admitted in a moving span below its snapshot_ts
	cutoverAt                   map[uint64]simclock.Time
}

type openRead struct {
	group, node int
	term        uint64
	id          uint64
	span        keys.Span
}

func newMigrateChecks(m *migrateWorld) *migrateChecks {
	oracle := migratecheck.NewVersionOracle()
	return &migrateChecks{m: m, catalog: migratecheck.NewCatalogChecker(), phases: migratecheck.NewPhaseChecker(),
		jobs: migratecheck.NewJobChecker(), oracle: oracle, nlwChecker: migratecheck.NewNoLostWriteChecker(oracle),
		latest: initialCatalog(), writerKeys: migrateUserKeys(), movedKeys: map[string]bool{}, cutoverAt: map[uint64]simclock.Time{}}
}

func (c *migrateChecks) fail(v *property.Violation) { c.m.w.Fail(v) }

// OnApply implements group.Observer.
func (c *migrateChecks) OnApply(g, node int, e fsm.Entry, r fsm.Result, first bool, f *fsm.FSM) {
	if !first || r.Err != nil {
		return
	}
	fenced := len(r.Puts) > 0 && c.jobs.Fenced(g) // else SourceWrite passes whatever the route: skip its lookup
	for _, p := range r.Puts {
		c.oracle.Add(migratecheck.AppliedWrite{Op: putOp(e), Group: g, Key: p.Key, Version: p.Version, At: c.m.w.Loop.Now()})
		if fenced {
			r, ok := c.latest.Lookup(keys.RouteKey(p.Key))
			c.fail(c.jobs.SourceWrite(g, p.Key, p.TS, ok && r.Group == g && r.State == catalog.Active))
		}
		c.fail(c.jobs.TargetWrite(g, p.Key, p.TS))
		c.countBelowSnapshot(g, p)
	}
	switch e.Kind {
	case fsm.KindImport:
		if r.Duplicate {
			return
		}
		c.imported += int64(len(e.Import.Rows))
		c.jobs.Imported(e.Import.Job, uint8(e.Import.Bracket>>8), e.Import.Rows)
		for _, row := range e.Import.Rows {
			c.movedKeys[row.Key] = true
			c.fail(c.oracle.CheckImported(e.Import.Job, row))
		}
	case fsm.KindPromote:
		c.promoted += int64(r.Applied)
		// A version promotion drops stays lost, so checking once the
		// promotion is complete (and at every later phase) suffices.
		if j, ok := c.jobs.Job(e.Promote.Job); ok && r.Done {
			c.nlwIn("after promotion", j.Moving())
		}
	case fsm.KindCleanup:
		c.cleaned += int64(r.Applied)
		c.checkCleanup(g, e.Cleanup)
	case fsm.KindAbandonStaged:
		c.nlw("after abandon")
	case fsm.KindCompact:
		c.nlw("after compaction")
	}
}

// putOp names the operation whose versions an entry created.
func putOp(e fsm.Entry) string {
	switch e.Kind {
	case fsm.KindWrite:
		return e.Write.Op
	case fsm.KindDeleteRange:
		return e.DelRange.Op
	case fsm.KindCommit, fsm.KindRollback:
		return e.Txn.ID
	}
	return "?"
}

// countBelowSnapshot counts versions admitted into a live job's moving
// span, after its snapshot was taken, with a timestamp at or below it.
func (c *migrateChecks) countBelowSnapshot(g int, p mvcc.Row) {
	c.jobs.EachJob(func(j *job.SplitJob) {
		if j.SourceGroup == g && j.SnapshotTS != 0 && j.Phase >= job.Backfill && j.Phase <= job.DeltaCopy &&
			p.TS <= j.SnapshotTS && keys.Span(j.Moving()).Contains(keys.RouteKey(p.Key)) {
			c.belowSnapshot++
		}
	})
}

// checkCleanup judges M.CleanupSafe when a source applies a cleanup.
func (c *migrateChecks) checkCleanup(g int, cl *fsm.Cleanup) {
	j, _ := c.jobs.Job(cl.Job)
	promoted := false
	for n := 0; n < migrateNodes; n++ {
		if v := c.m.cluster.Voter(j.TargetGroup, n); v != nil {
			promoted = promoted || v.Promoted(j.ID)
		}
	}
	staged := c.m.cluster.MostApplied(j.TargetGroup).StagedRows(j.ID)
	open := 0
	for _, o := range c.openReads {
		// A read whose leader crashed or lost the term can no longer be
		// served; it is not in flight.
		if o.group == g && o.span.Overlaps(cl.Moving) && c.m.cluster.IsLeader(g, o.node, o.term) {
			open++
		}
	}
	c.fail(c.jobs.Cleanup(j.ID, promoted, staged, open))
	c.nlwIn("after cleanup", cl.Moving)
}

// OnLeader implements group.Observer.
func (c *migrateChecks) OnLeader(g, node int, term uint64, ready bool) { c.checkWriters() }

// checkWriters checks M.SingleWriter over the workload's route keys: a
// group would accept a write when its leader serves, its node's view is
// not older than the group's minimum, and that view gives it the key's
// route, Active.
func (c *migrateChecks) checkWriters() {
	views := c.views[:0]
	for g := 0; g < migrateGroups; g++ {
		n, _ := c.m.cluster.Leader(g)
		if n < 0 {
			continue
		}
		gv := migratecheck.GroupView{Group: g, Ready: c.m.cluster.Ready(g), View: c.m.env.Engines[n].View}
		if v := c.m.cluster.Voter(g, n); v != nil {
			gv.MinView = v.MinView
		}
		views = append(views, gv)
	}
	c.views = views // kept for the next check: CheckSingleWriter keeps none
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

// nodeViewed is the nodes' view hook.
func (c *migrateChecks) nodeViewed(node int, version uint64) {
	c.fail(c.catalog.Viewed(nodeViewerNames[node], version))
	c.checkWriters()
}

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

// afterJob is what an M.NoLostWrite check after a job record of phase p
// names as its trigger, made once per phase (passes follow most job
// records).
func (c *migrateChecks) afterJob(p job.Phase) string {
	if int(p) >= len(c.afterPhase) {
		return "after job " + p.String()
	}
	if c.afterPhase[p] == "" {
		c.afterPhase[p] = "after job " + p.String()
	}
	return c.afterPhase[p]
}

// nlw asks for a full M.NoLostWrite check after this step (when: what
// triggered it, "after ...").
func (c *migrateChecks) nlw(when string) {
	c.recheckNLW, c.nlwAll = true, true
	c.nlwWhen = when
}

// nlwIn asks for an M.NoLostWrite check of the writes in span (when as
// for nlw).
func (c *migrateChecks) nlwIn(when string, span keys.Span) {
	c.recheckNLW = true
	c.nlwSpans = append(c.nlwSpans, span)
	c.nlwWhen = when
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
// The job records the checks see (c.phases) and keep (c.jobs) have no
// brackets (job.DecodeWithoutBrackets): nothing that judges or reports a
// job reads its copy progress.
func (c *migrateChecks) metaApplied(at simclock.Time, req simkv.Request, resp simkv.Response, err error) {
	puts := migratecheck.AppendWrites(c.puts[:0], req, resp, err)
	c.puts = puts[:0] // kept for the next request: nothing below reaches the store
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
			c.catalogGen++
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
			// The checkers never look at a job's copy progress (its
			// brackets), most of what decoding a record allocates:
			// decoded without them, failing exactly when Decode would.
			j, derr := job.DecodeWithoutBrackets(p.Value)
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
		c.cutoverAt[j.ID] = c.m.w.Loop.Now()
		// CUTOVER: everything at or below fence_ts must be on the target.
		var rows []mvcc.Row
		c.m.cluster.MostApplied(j.SourceGroup).MovedRows(j.Moving(), func(raw string, vs []mvcc.Version) {
			for _, v := range vs {
				rows = append(rows, mvcc.Row{Key: raw, Version: v})
			}
		})
		c.fail(c.jobs.CheckCopy(j.ID, rows, func(k string, ts hlc.TS) bool { _, ok := c.oracle.At(k, ts); return ok }))
	}
	if j.Phase == job.Failed && prev.Phase != job.Failed {
		c.failedPhases++
	}
	if !seen || prev.Phase != j.Phase || cat != nil {
		c.nlw(c.afterJob(j.Phase))
	}
}

// owners returns how keys read back for one M.NoLostWrite pass: key as
// its owner in the latest published catalog serves it (from the owner's
// most advanced voter, merging staged rows when the route says so) —
// independent of any node's own view — and the oldest timestamp that owner
// answers for. A pass reads back every acknowledged write while nothing
// changes, so what each route's owner is (voter, floor, staging) is found
// once per route rather than once per write; which route serves a key
// changes only with the catalog (catalogGen).
//
// The per-route answers live in a buffer the checks keep (one allocation
// per run rather than per pass), cleared here: what was found in an
// earlier pass is stale, and no pass uses an Owners after the next is made.
func (c *migrateChecks) owners() migratecheck.Owners {
	n := len(c.latest.Routes)
	if cap(c.ownersBuf) < n {
		c.ownersBuf = make([]routeOwner, n)
	}
	owners := c.ownersBuf[:n]
	clear(owners)
	return migratecheck.Owners{
		RoutingGen: c.catalogGen,
		Route:      func(key string) (int, bool) { return c.latest.LookupIndex(keys.RouteKey(key)) },
		Owner: func(i int) migratecheck.Owner {
			o := &owners[i]
			if !o.known {
				r := c.latest.Routes[i]
				v := c.m.cluster.MostApplied(r.Group)
				*o = routeOwner{known: true, Owner: migratecheck.Owner{Store: v.Store, Floor: max(v.CompactedTS, r.MinReadTS), Staging: mvcc.StagingOf(r.StagedVisible, r.MigrationJob)}}
			}
			return o.Owner
		},
	}
}

// routeOwner is what owners found out about one route in this pass.
type routeOwner struct {
	known bool
	migratecheck.Owner
}

// checkNoLostWrite runs one M.NoLostWrite pass (spans: only the writes
// routed there) with the incremental checker. With an audit hook (tests),
// the full re-check runs too and the hook sees both verdicts.
func (c *migrateChecks) checkNoLostWrite(when string, spans ...keys.Span) *property.Violation {
	v := c.nlwChecker.Check(c.m.rec.acked, c.owners(), when, spans...)
	if c.nlwAudit != nil {
		c.nlwAudit(v, c.oracle.CheckNoLostWrite(c.m.rec.acked, migratecheck.ReadFrom(c.owners()), when, spans...))
	}
	return v
}

// step runs after every event: deferred checks, and the end of the run.
func (c *migrateChecks) step() {
	w := c.m.w
	if w.Failed() {
		return
	}
	if c.recheckNLW {
		var spans []keys.Span
		if !c.nlwAll {
			spans = c.nlwSpans
		}
		c.fail(c.checkNoLostWrite(c.nlwWhen, spans...))
		c.recheckNLW, c.nlwAll, c.nlwSpans = false, false, c.nlwSpans[:0]
	}
	if !w.Failed() && c.m.done() {
		w.Loop.Stop()
	}
}
