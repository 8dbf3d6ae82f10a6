package migrate

import (
	"slices"

	"shardsim/model/bugs"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/rpc"
	"shardsim/simclock"
)

// readPart is one route's share of a read: the part of the span it holds
// and how its data must be read.
type readPart struct {
	span keys.Span
	opts fsm.ReadOpts
}

// readQuery is a read (point or scan) as the leader judges it.
type readQuery struct {
	span       keys.Span
	hasVersion bool
	observed   uint64
}

// serveRead serves a point read or a scan. A read index round confirms the
// leadership, the voter applies everything proposed so far, the read fence
// decides (readRoutes), the timestamp is fixed (the clock's last value for a
// latest read, so it covers every acknowledged write; an explicit one is
// observed so no later write can slip under it) and recorded in the
// timestamp cache, and the voter's applied state answers.
//
// The steps are methods of one readOp (see there), in this order:
// serveRead, routed, timed, answer.
func (n *Node) serveRead(ls *leader, in rpc.Inbound) {
	q, key, ts := readQueryOf(in.Req)
	if n.env.Bugs.Has(bugs.MigrateNoReadFence) {
		q.hasVersion, q.observed = false, 0
	}
	if !n.env.Cluster.ConfirmLeader(ls.g, n.id, ls.term) {
		in.Reply(nil, errs.ErrNotLeader)
		return
	}
	n.count(ls, key, false)
	op := &readOp{n: n, ls: ls, in: in, q: q, ts: ts}
	op.whenApplied((*readOp).fence)
}

// whenApplied runs next once the voter applied everything proposed so far
// (the log's last index, read now).
func (op *readOp) whenApplied(next func(*readOp, error)) {
	op.next = next
	op.n.afterApplied(op.ls, op.n.env.Cluster.LastIndex(op.ls.g, op.n.id), op)
}

// applied runs the step whenApplied waits with (the read's outcome).
func (op *readOp) applied(_ fsm.Result, _ bool, err error) { op.next(op, err) }

// readOp is one read in service. Its steps share it instead of each
// capturing the read in a closure of its own (a read used to make five);
// a step that does not have to wait runs the next one at once, without
// making any closure.
type readOp struct {
	n     *Node
	ls    *leader
	in    rpc.Inbound
	q     readQuery
	ts    hlc.TS // the requested timestamp (0: latest)
	id    uint64 // the read's number among the leader's open reads
	parts []readPart
	next  func(*readOp, error) // the step whenApplied waits to run
	// Room for the parts of a read that one route serves (every point
	// read, most scans).
	partBuf [1]readPart
	// The answer, which the read hands the network by pointer (answerRead):
	// a response value boxed for the network was an allocation of its own.
	readResp ReadResp
	scanResp ScanResp
}

// fence runs the read fence once the voter caught up.
func (op *readOp) fence(err error) {
	if err != nil {
		op.in.Reply(nil, err)
		return
	}
	op.n.readRoutes(op)
}

// routed takes the fence's decision: the read is refused, or admitted with
// how each route must be read.
func (op *readOp) routed(parts []readPart, err error) {
	if err != nil {
		op.in.Reply(nil, err)
		return
	}
	// Admitted: from here the read is in flight (a drain waits for it).
	op.parts = parts
	op.id = op.n.openRead(op.ls, op.q.span)
	if op.ts == 0 {
		op.timed(op.ls.clock.Last(), true)
		return
	}
	op.n.observe(op.ls, op.ts, func(ok bool) { op.timed(op.ts, ok) })
}

// timed takes the read's timestamp (ok false: the leadership was lost
// while it was being fixed).
func (op *readOp) timed(at hlc.TS, ok bool) {
	if !ok {
		op.reply(nil, errs.ErrNotLeader)
		return
	}
	op.ls.ts.record(op.q.span, at)
	op.n.markRead(op.ls, op.id, at)
	// Every write issued a timestamp at or below at has been proposed by
	// now: wait until the voter applied them.
	op.ts = at
	op.whenApplied((*readOp).answer)
}

// answer serves the read at its timestamp from the voter's applied state.
func (op *readOp) answer(err error) {
	if err != nil {
		op.reply(nil, err)
		return
	}
	op.reply(op.n.answerRead(op))
}

// reply closes the admitted read and answers it.
func (op *readOp) reply(resp any, err error) {
	op.n.closeRead(op.ls, op.id)
	op.in.Reply(resp, err)
}

func readQueryOf(req any) (readQuery, string, hlc.TS) {
	switch r := req.(type) {
	case ReadReq:
		rk := keys.RouteKey(r.Key)
		return readQuery{span: keys.Span{Start: rk, End: keys.KeyAfter(rk)}, hasVersion: r.HasVersion, observed: r.Observed}, r.Key, r.TS
	case ScanReq:
		return readQuery{span: r.Span, hasVersion: r.HasVersion, observed: r.Observed}, r.Span.Start, r.TS
	}
	panic("migrate: not a read")
}

// answerRead serves op from the voter's applied state: the answer is a
// *ReadResp or *ScanResp in op.
func (n *Node) answerRead(op *readOp) (any, error) {
	ls, parts, ts := op.ls, op.parts, op.ts
	v := n.voter(ls.g)
	switch r := op.in.Req.(type) {
	case ReadReq:
		rd, err := v.Read(r.Key, ts, parts[0].opts)
		op.readResp = ReadResp{Read: rd, TS: ts, Group: ls.g}
		return &op.readResp, err
	case ScanReq:
		out := &op.scanResp
		*out = ScanResp{TS: ts, Group: ls.g}
		for _, p := range parts {
			left := 0
			if r.Limit > 0 {
				left = r.Limit - len(out.Rows)
				if left <= 0 {
					break
				}
			}
			o := p.opts
			o.Raw = r.Raw
			rows, err := v.Scan(r.Family, p.span, ts, o, left)
			if err != nil {
				return nil, err
			}
			out.Rows = append(out.Rows, rows...)
		}
		return out, nil
	}
	return nil, errs.ErrBusy
}

// readRoutes is the read fence. It decides whether this group may serve a
// read of q.span and, if so, how each route it intersects must be read:
//
//  1. By the node's view: every route the span intersects (a scan checks
//     each, not only its start key) must be this group's, else the route
//     moved.
//  2. A cutover read fence armed on the source (every source voter holds
//     it before the CUTOVER CAS) covering the span refuses a read whose
//     catalog version is older than the cutover's, while the node cannot
//     know whether the CUTOVER landed (its watermark is older).
//  3. When the node knows of a newer catalog than its view (the watermark
//     from group-0 heartbeats, or the request's own version), or a fence
//     applies and the watermark says the cutover landed, it asks group 0
//     who owns the span (cached briefly, by version) and fails closed when
//     the answer does not come.
func (n *Node) readRoutes(op *readOp) {
	ls, q := op.ls, op.q
	view := n.eng.View
	b := n.env.Bugs
	var routeBuf [1]catalog.Route // room for the routes of most reads, on the stack
	var routes []catalog.Route
	if b.Has(bugs.MigrateScanStartKeyOnly) {
		if r, ok := view.Lookup(q.span.Start); ok {
			routes = append(routeBuf[:0], r)
		}
	} else {
		routes = view.AppendIntersecting(routeBuf[:0], q.span)
	}
	if b.Has(bugs.MigrateTargetTrustsCoordinator) && q.hasVersion && q.observed > view.Version {
		op.routed([]readPart{{span: q.span}}, nil) // the wrong variant serves live data, trusting the coordinator's newer route
		return
	}
	if len(routes) == 0 {
		op.routed(nil, errs.ErrWrongGroup)
		return
	}
	for _, r := range routes {
		if r.Group != ls.g {
			n.env.Counters.ReadsMovedByView++
			op.routed(nil, errs.ErrRouteMoved)
			return
		}
	}
	if b.Has(bugs.MigrateNoReadFence) {
		op.routed(partsOf(op.partBuf[:0], q.span, routes), nil)
		return
	}
	armed, expect := n.armedFor(ls, q, view)
	if b.Has(bugs.MigrateReadFenceLessThan) {
		if armed {
			n.env.Counters.ReadsCutoverPending++
			op.routed(nil, errs.ErrRouteCutoverPending)
			return
		}
		op.routed(partsOf(op.partBuf[:0], q.span, routes), nil)
		return
	}
	w := n.eng.Watermark
	if armed && w < expect {
		n.env.Counters.ReadsCutoverPending++
		op.routed(nil, errs.ErrRouteCutoverPending)
		return
	}
	need := max(w, expect)
	if q.hasVersion {
		need = max(need, q.observed)
	}
	if !armed && need <= view.Version {
		op.routed(partsOf(op.partBuf[:0], q.span, routes), nil)
		return
	}
	n.askOwner(op, need, routes)
}

// armedFor reports whether a cutover read fence on the voter covers the
// read and its catalog version is older than the cutover it waits for (the
// less-than variant compares with the node's own version instead), and the
// highest expected version among those fences.
func (n *Node) armedFor(ls *leader, q readQuery, view catalog.Catalog) (bool, uint64) {
	armed, expect := false, uint64(0)
	for _, f := range n.voter(ls.g).Fences() {
		if !f.Span.Overlaps(q.span) {
			continue
		}
		bar := f.Expected
		if n.env.Bugs.Has(bugs.MigrateReadFenceLessThan) {
			bar = view.Version
		}
		if !q.hasVersion || q.observed < bar {
			armed = true
			expect = max(expect, f.Expected)
		}
	}
	return armed, expect
}

// askOwner establishes from group 0 (or a cached answer at a version at
// least need) whether this group owns every route of span, and serves by
// the answer's routes. A query that fails leaves ownership unknown: the
// read fails closed. viewRoutes (the view's routes of span) is
// readRoutes' scratch: it is not kept.
func (n *Node) askOwner(op *readOp, need uint64, viewRoutes []catalog.Route) {
	ls, span, fn := op.ls, op.q.span, op.routed
	min := need
	if n.env.Bugs.Has(bugs.MigrateOwnershipCacheAnyVersion) {
		min = 0
	}
	var stillMine []catalog.Route // the ownership-timeout-serves variant's answer when the query fails
	if n.env.Bugs.Has(bugs.MigrateOwnershipTimeoutServes) {
		stillMine = slices.Clone(viewRoutes)
	}
	decide := func(routes []catalog.Route) {
		for _, r := range routes {
			if r.Group != ls.g {
				n.env.Counters.ReadsMovedByOwner++
				fn(nil, errs.ErrRouteMoved)
				return
			}
		}
		fn(partsOf(op.partBuf[:0], span, routes), nil)
	}
	if routes, ok := n.eng.Cached(span, min, n.ctx.Now()); ok {
		n.env.Counters.OwnerCacheHits++
		decide(routes)
		return
	}
	n.env.Counters.OwnerQueries++
	n.ctx.Go("owner-query", func(t *simclock.Task) {
		resp, err := n.env.Net.CallWithin(t, 0, OwnerReq{Span: span}, n.env.Cfg.OwnerTimeout)
		if err != nil {
			n.env.Counters.OwnerQueryFailures++
			if n.env.Bugs.Has(bugs.MigrateOwnershipTimeoutServes) {
				fn(partsOf(op.partBuf[:0], span, stillMine), nil) // the wrong variant: "still mine"
				return
			}
			fn(nil, errs.ErrRouteOwnershipUnknown)
			return
		}
		o := resp.(OwnerResp)
		n.eng.Cache(span, o.Routes, o.Version, t.Now().Add(n.env.Cfg.OwnershipTTL), t.Now())
		decide(o.Routes)
	})
}

// partsOf splits span by routes, with each route's read options,
// appended to out.
func partsOf(out []readPart, span keys.Span, routes []catalog.Route) []readPart {
	for _, r := range routes {
		p := span
		if r.Start > p.Start {
			p.Start = r.Start
		}
		if r.End != "" && (p.End == "" || r.End < p.End) {
			p.End = r.End
		}
		o := fsm.ReadOpts{MinRead: r.MinReadTS}
		if r.StagedVisible {
			o.Staging = r.MigrationJob
		}
		out = append(out, readPart{span: p, opts: o})
	}
	return out
}

// openRead notes a read admitted on this leader (for drains and checkers).
func (n *Node) openRead(ls *leader, span keys.Span) uint64 {
	n.seq++
	id := n.seq
	ls.reads = append(ls.reads, openRead{id: id, span: span})
	if h := n.env.Hooks.ReadOpen; h != nil {
		h(ls.g, n.id, ls.term, id, span)
	}
	return id
}

func (n *Node) markRead(ls *leader, id uint64, ts hlc.TS) {
	for i := range ls.reads {
		if ls.reads[i].id == id {
			ls.reads[i].ts = ts
		}
	}
}

func (n *Node) closeRead(ls *leader, id uint64) {
	for i, r := range ls.reads {
		if r.id == id {
			ls.reads = append(ls.reads[:i], ls.reads[i+1:]...)
			break
		}
	}
	if h := n.env.Hooks.ReadClose; h != nil {
		h(ls.g, n.id, ls.term, id)
	}
}
