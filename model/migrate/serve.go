package migrate

import (
	"errors"
	"sort"

	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/rpc"
	"shardsim/simclock"
)

// serve handles one request addressed to a group this node may lead, or
// to the node itself.
func (n *Node) serve(in rpc.Inbound) {
	if _, ok := in.NodeOf(); ok {
		n.serveNode(in)
		return
	}
	ls := n.leads(in.Group)
	switch {
	case ls == nil:
		in.Reply(nil, errs.ErrNotLeader)
		return
	case !ls.ready:
		in.Reply(nil, errs.ErrNotReady)
		return
	case n.eng.View.Version < n.voter(ls.g).MinView:
		// A voter that joined after a catalog change its node has not
		// caught up with may not judge requests by the older view.
		n.env.Counters.ViewStale++
		in.Reply(nil, errs.ErrViewStale)
		return
	}
	switch req := in.Req.(type) {
	case ReadReq, ScanReq:
		n.serveRead(ls, in)
	case WriteReq:
		n.serveWrite(ls, in, req)
	case DeleteRangeReq:
		n.serveDeleteRange(ls, in, req)
	case PrepareReq:
		n.servePrepare(ls, in, req)
	case CommitReq:
		n.serveCommit(ls, in, req)
	case RollbackReq:
		n.serveRollback(ls, in, req)
	default:
		n.serveMigration(ls, in)
	}
}

// serveMigration handles the migrator's requests to a group leader.
func (n *Node) serveMigration(ls *leader, in rpc.Inbound) {
	switch req := in.Req.(type) {
	case ExportReq:
		n.afterRead(ls, in, serveExport)
	case StatusReq:
		n.afterRead(ls, in, serveStatus)
	case LocksReq:
		n.afterRead(ls, in, serveLocks)
	case MembersReq:
		in.Reply(MembersResp{Voters: n.env.Cluster.ConfigOf(ls.g, n.id)}, nil)
	case OwnerReq:
		n.serveOwner(in, req)
	case AccessReq:
		in.Reply(n.accessReport(ls), nil)
	case BarrierReq:
		n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindBarrier, Job: req.Job}, func(index uint64, r fsm.Result) any {
			return BarrierResp{LastCommit: r.LastCommit, Horizon: r.Horizon, Tracked: r.Tracked, Index: index}
		})
	case GuardOp:
		g := req.Guard
		e := fsm.Entry{Kind: req.Kind, Guard: &g, Job: g.Job}
		n.proposeReply(ls, in, e, func(index uint64, r fsm.Result) any {
			return GuardResp{Index: index, Compacted: r.Compacted, Tracked: r.Tracked}
		})
	case ImportReq:
		n.serveImport(ls, in, req)
	case CleanupReq:
		c := &fsm.Cleanup{Job: req.Job, Moving: req.Moving, FenceTS: req.FenceTS}
		n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindCleanup, Cleanup: c}, func(_ uint64, r fsm.Result) any { return r.Applied })
	case AbandonStagedReq:
		n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindAbandonStaged, Job: req.Job}, func(_ uint64, r fsm.Result) any { return r.Applied })
	default:
		in.Reply(nil, errs.ErrBusy)
	}
}

// serveExport, serveStatus and serveLocks answer the migrator's read-only
// requests from a voter (afterRead's serve). They take the request from
// the inbound: a closure capturing it would move a copy to the heap.
func serveExport(v *fsm.FSM, req any) (any, error) {
	res, err := v.Export(req.(ExportReq).Export)
	return ExportResp{Result: res}, err
}

func serveStatus(v *fsm.FSM, req any) (any, error) {
	job := req.(StatusReq).Job
	return StatusResp{Promoted: v.Promoted(job), Staged: v.StagedRows(job)}, nil
}

func serveLocks(v *fsm.FSM, req any) (any, error) {
	return LocksResp{Locks: v.Locks(req.(LocksReq).Span)}, nil
}

// serveNode answers the requests addressed to the node itself: the
// all-voter barriers ask each voter's node what it holds.
func (n *Node) serveNode(in rpc.Inbound) {
	switch req := in.Req.(type) {
	case ViewReq:
		in.Reply(ViewResp{Version: n.eng.View.Version, Watermark: n.eng.Watermark}, nil)
	case GuardReq:
		v := n.voter(req.Group)
		if v == nil {
			in.Reply(GuardAck{}, nil)
			return
		}
		in.Reply(GuardAck{Present: guardPresent(v, req), Applied: v.Applied}, nil)
	case DrainReq:
		open := 0
		for _, ls := range n.lead {
			if ls == nil {
				continue
			}
			for _, r := range ls.reads {
				if r.span.Overlaps(req.Span) && (req.AtOrBelow == 0 || r.ts != 0 && r.ts <= req.AtOrBelow) {
					open++
				}
			}
		}
		in.Reply(DrainResp{Open: open}, nil)
	default:
		in.Reply(nil, errs.ErrBusy)
	}
}

// guardPresent reports whether voter v holds the guard req names.
func guardPresent(v *fsm.FSM, req GuardReq) bool {
	switch req.Kind {
	case fsm.KindArmTracker:
		return v.Tracking(req.Job)
	case fsm.KindFloor:
		return v.HasFloor(req.Job, req.TS)
	case fsm.KindArmFence:
		_, ok := v.Fence(req.Job)
		return ok
	case fsm.KindDisarmFence:
		_, ok := v.Fence(req.Job)
		return !ok
	case fsm.KindRelease:
		_, pinned := v.Pin(req.Job)
		return !v.Tracking(req.Job) && !pinned
	}
	return false
}

// proposeReply proposes e and answers with conv(e's index, result) once
// applied. (The waiter holds in and conv: a proposal that answers a request
// makes no closure.)
func (n *Node) proposeReply(ls *leader, in rpc.Inbound, e fsm.Entry, conv func(index uint64, r fsm.Result) any) {
	n.proposeThen(ls, e, waiter{in: in, conv: conv})
}

// afterRead serves a read-only request from this node's voter once a read
// index round confirmed the leadership and the voter applied everything
// proposed so far: it answers with serve(voter, request). Its waiter holds
// the request and serve itself (no allocation per read).
func (n *Node) afterRead(ls *leader, in rpc.Inbound, serve func(v *fsm.FSM, req any) (any, error)) {
	if !n.env.Cluster.ConfirmLeader(ls.g, n.id, ls.term) {
		in.Reply(nil, errs.ErrNotLeader)
		return
	}
	index := n.env.Cluster.LastIndex(ls.g, n.id)
	if n.voter(ls.g).Applied >= index {
		answerReadOnly(n, ls.g, in, serve, nil)
		return
	}
	ls.waiters.insert(waiter{index: index, in: in, read: serve})
}

// answerReadOnly answers an afterRead's request once its wait ended: with err
// if the leadership ended first, else with serve on node n's voter of
// group g.
func answerReadOnly(n *Node, g int, in rpc.Inbound, serve func(v *fsm.FSM, req any) (any, error), err error) {
	if err != nil {
		in.Reply(nil, err)
		return
	}
	in.Reply(serve(n.voter(g), in.Req))
}

// serveOwner answers an ownership query from the metadata store (group 0's
// leader reads the catalog there, authoritatively).
func (n *Node) serveOwner(in rpc.Inbound, req OwnerReq) {
	n.ctx.Go("owner", func(t *simclock.Task) {
		cat, _, err := n.env.loadCatalog(n.meta.In(t))
		if err != nil {
			in.Reply(nil, errs.ErrBusy)
			return
		}
		in.Reply(OwnerResp{Version: cat.Version, Routes: cat.Intersecting(req.Span)}, nil)
	})
}

// count records one access for the hotspot detector. Without a detector
// nothing asks for the counters (AccessReq is the detector's), so none are
// kept.
func (n *Node) count(ls *leader, raw string, write bool) {
	if !n.env.Cfg.Detect {
		return
	}
	rk := keys.RouteKey(raw)
	r, ok := n.eng.View.Lookup(rk)
	if !ok {
		return
	}
	a := ls.access[r.ID]
	if a == nil {
		a = &routeAccess{keys: map[string]int{}}
		if ls.access == nil {
			ls.access = map[uint64]*routeAccess{}
		}
		ls.access[r.ID] = a
	}
	if write {
		a.writes++
	} else {
		a.reads++
	}
	a.keys[rk]++
}

// accessReport returns and resets the window's counters, sorted.
func (n *Node) accessReport(ls *leader) AccessResp {
	ids := make([]uint64, 0, len(ls.access))
	for id := range ls.access {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var out AccessResp
	for _, id := range ids {
		a := ls.access[id]
		ra := RouteAccess{RouteID: id, Reads: a.reads, Writes: a.writes}
		for k, c := range a.keys {
			ra.Keys = append(ra.Keys, KeyCount{Key: k, Count: c})
		}
		sort.Slice(ra.Keys, func(i, j int) bool { return ra.Keys[i].Key < ra.Keys[j].Key })
		out.Routes = append(out.Routes, ra)
	}
	ls.access = nil // made again by the window's first count
	return out
}

// serveImport appends an import batch; the target's guards against
// repeated, stale and out-of-order batches (the batch sequence, the
// abandoned-job refusal) are counted as they act.
func (n *Node) serveImport(ls *leader, in rpc.Inbound, req ImportReq) {
	im := &fsm.Import{Job: req.Job, Bracket: req.Bracket, Seq: req.Seq, Rows: req.Rows, Cursor: req.Cursor, Moving: req.Moving}
	n.propose(ls, fsm.Entry{Kind: fsm.KindImport, Import: im}, func(r fsm.Result, err error) {
		switch {
		case err != nil:
			in.Reply(nil, err)
		case errors.Is(r.Err, errs.ErrJobAborted):
			n.env.Counters.AbortedImports++
			in.Reply(nil, r.Err)
		case r.Err != nil:
			in.Reply(nil, r.Err)
		default:
			if r.Duplicate {
				n.env.Counters.StaleImports++
			}
			in.Reply(ImportResp{Seq: r.Seq, Cursor: r.Cursor, Duplicate: r.Duplicate}, nil)
		}
	})
}
