package scenarios

import (
	"errors"
	"fmt"

	"shardsim/checker/listcheck"
	"shardsim/model/listdelta"
	"shardsim/model/migrate"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/simclock"
)

// listsPart is what a lists world adds to the migrating data plane: the
// collection clients (each with its coordinator and listdelta store), one
// compactor per node that works while its node leads the collections'
// group, and the L.* checkers fed by every first commit of a collection
// transaction on its owning group.
type listsPart struct {
	m          *migrateWorld
	opts       *listsOptions
	clients    []*listClient
	compactors []*listCompactor
	truth      *listcheck.Truth
	ops        []listcheck.Op
	txns       map[string]txnOf // every transaction a collection command or compaction sent
	due        map[string]bool  // keys whose resolution was truncated: compact them soon
	lastPush   map[string]hlc.TS
	counts     map[string]int64
	clientsEnd simclock.Time // when the last collection client finished
}

// txnOf is what one transaction is for.
type txnOf struct {
	key     string
	kind    listdelta.Kind
	push    bool // a list command that pushes
	compact bool
}

// attemptOf is the operation a store is sending transactions for.
type attemptOf struct {
	op   string
	key  string
	kind listdelta.Kind
	cmds []listcheck.Cmd // a list operation's commands (nil: a compaction or a counted command)
	comp bool
}

func newListsPart(m *migrateWorld, o *listsOptions) *listsPart {
	return &listsPart{m: m, opts: o, truth: listcheck.NewTruth(), txns: map[string]txnOf{}, due: map[string]bool{},
		lastPush: map[string]hlc.TS{}, counts: map[string]int64{}}
}

// store returns a listdelta store over coord for an actor, whose
// transactions are registered as cur says.
func (p *listsPart) store(name string, be *coordBackend, cur *attemptOf) *listdelta.Store {
	s := listdelta.NewStore(be, p.opts.cfg, p.m.w.Cfg.Bugs, name)
	s.OnAttempt = func(txn string) { p.attempt(txn, *cur) }
	s.OnTruncated = func(_ listdelta.Kind, uk string) { p.due[uk] = true }
	return s
}

// attempt registers transaction txn of the current operation.
func (p *listsPart) attempt(txn string, a attemptOf) {
	t := txnOf{key: a.key, kind: a.kind, compact: a.comp}
	for _, c := range a.cmds {
		t.push = t.push || c.Op == "RPUSH" || c.Op == "LPUSH"
	}
	p.txns[txn] = t
	if a.kind == listdelta.List {
		p.truth.Register(txn, a.op, a.key, a.cmds)
	}
}

// spawn starts the collection clients and the compactors and returns
// their actors (the metadata store's partitions may cut them off).
func (p *listsPart) spawn(m *migrateWorld, cat catalog.Catalog) []simclock.ActorID {
	m.cluster.Observe(p)
	w := m.w
	var out []simclock.ActorID
	for i := 0; i < p.opts.clients; i++ {
		name := fmt.Sprintf("lclient%d", i)
		ch := w.Choices.Fork("lists/" + name)
		coord := migrate.NewCoordinator(m.env, name, cat, ch.Fork("watch"), p.opts.watchLag)
		coord.OnView = m.chk.viewed
		be := &coordBackend{coord: coord, epoch: m.env.Cfg.EpochMs, offset: ch.Fork("clock").Duration(0, p.opts.clockSpread)}
		c := &listClient{idx: i, p: p, coord: coord, be: be}
		c.store = p.store(name, c.be, &c.cur)
		p.clients = append(p.clients, c)
		out = append(out, w.Loop.Spawn(name, c, nil, ch))
	}
	for n := 0; n < migrateNodes; n++ {
		name := fmt.Sprintf("compactor%d", n)
		ch := w.Choices.Fork("lists/" + name)
		coord := migrate.NewCoordinator(m.env, name, cat, ch.Fork("watch"), p.opts.watchLag)
		coord.OnView = m.chk.viewed
		c := &listCompactor{node: n, p: p, coord: coord, be: &coordBackend{coord: coord, epoch: m.env.Cfg.EpochMs}}
		c.store = p.store(name, c.be, &c.cur)
		p.compactors = append(p.compactors, c)
		out = append(out, w.Loop.Spawn(name, c, nil, ch))
	}
	return out
}

// done reports whether every collection client finished.
func (p *listsPart) done() bool {
	for _, c := range p.clients {
		if !c.done {
			return false
		}
	}
	return true
}

// lingering reports whether a collection client that ran i operations
// keeps working past its quota: in lists-migrate, while the split is not
// over (the operator has not asked yet, or its job is live), up to
// linger_ops more, so the migration's phases, promotion included, run
// under the collection workload rather than after it.
func (p *listsPart) lingering(i int) bool {
	if p.m.kind != listsSplit || i >= p.opts.ops+p.opts.lingerOps {
		return false
	}
	return !p.m.opDone || p.m.chk.liveJob != 0
}

// clientDone notes a collection client's end.
func (p *listsPart) clientDone(at simclock.Time) {
	if at > p.clientsEnd {
		p.clientsEnd = at
	}
}

// record keeps a list operation's outcome.
func (p *listsPart) record(op listcheck.Op, err error) {
	p.ops = append(p.ops, op)
	switch op.Outcome {
	case listcheck.Done:
		p.counts["list_ops_done"]++
	case listcheck.Unknown:
		p.counts["list_ops_unknown"]++
	default:
		p.counts["list_ops_failed"]++
	}
	if isTruncated(err) {
		p.counts["list_ops_truncated"]++
	}
}

// recordCounted counts a counted command's outcome.
func (p *listsPart) recordCounted(err error) {
	switch {
	case err == nil:
		p.counts["counted_ops_done"]++
	case isTruncated(err):
		p.counts["counted_ops_truncated"]++
	default:
		p.counts["counted_ops_failed"]++
	}
}

// collections returns every collection key of the workload with its kind.
func (p *listsPart) collections() []countedKey {
	var out []countedKey
	for _, l := range p.opts.lists {
		out = append(out, countedKey{kind: listdelta.List, key: l})
	}
	return append(out, p.opts.counted...)
}

// leads reports whether node leads the group that holds uk, as the
// cluster knows it (the compactors' "leader-only").
func (p *listsPart) leads(node int, coord *migrate.Coordinator, uk string) bool {
	g, ok := coord.Group(uk)
	if !ok {
		return false
	}
	n, _ := p.m.cluster.Leader(g)
	return n == node
}

// migrationsMidWorkload counts jobs that ended DONE while collection
// clients were still working.
func (p *listsPart) migrationsMidWorkload() int64 {
	var n int64
	for _, id := range p.m.chk.jobs.Jobs() {
		if j, _ := p.m.chk.jobs.Job(id); j.Phase == job.Done && p.m.chk.lastJobEnd < p.clientsEnd {
			n++
		}
	}
	return n
}

// listCompactor compacts the collections while its node leads their
// group: every compact_every it folds the keys with MaxDeltaCount or more
// deltas, and the keys a resolution found truncated.
type listCompactor struct {
	node  int
	p     *listsPart
	coord *migrate.Coordinator
	be    *coordBackend
	store *listdelta.Store
	cur   attemptOf
}

// Receive implements simclock.Actor.
func (c *listCompactor) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); !ok {
		return
	}
	c.coord.Start(ctx)
	ctx.Go("compactor", func(t *simclock.Task) {
		c.be.t = t
		for {
			t.Sleep(c.p.opts.compactEvery)
			for _, k := range c.p.collections() {
				if c.p.leads(c.node, c.coord, k.key) {
					c.compact(t, k)
				}
			}
		}
	})
}

// compact compacts one key if it is due.
func (c *listCompactor) compact(t *simclock.Task, k countedKey) {
	lim := c.p.opts.cfg.MaxDeltaCount
	n, err := c.store.Deltas(k.kind, k.key, lim)
	if err != nil || n < lim && !c.p.due[k.key] {
		return
	}
	c.cur = attemptOf{op: "compact", key: k.key, kind: k.kind, comp: true}
	res, err := c.store.Compact(k.kind, k.key)
	if err == nil && res.Complete {
		delete(c.p.due, k.key)
		if k.kind == listdelta.List && res.Folded > 0 && res.Meta.Len == 0 {
			c.p.counts["tombstones_written"]++ // the Len = 0 base row stays (seed 001 round 4)
		}
	}
	t.Context().Rec("compaction").Str("kind", k.kind.String()).Bytes("key", []byte(k.key)).Int("folded", int64(res.Folded)).
		Int("collected", int64(res.Collected)).Err("err", err).End()
}

// isTruncated reports whether err is a truncated resolution.
func isTruncated(err error) bool { return errors.Is(err, listdelta.ErrDeltaScanTruncated) }
