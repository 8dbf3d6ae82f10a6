package migrate

import (
	"sort"

	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/rpc"
)

// serve handles one request addressed to a group this node may lead.
func (n *Node) serve(in *rpc.Inbound) {
	ls := n.lead(in.Group)
	if ls == nil {
		in.Reply(nil, errs.ErrNotLeader)
		return
	}
	if !ls.ready {
		in.Reply(nil, errs.ErrNotReady)
		return
	}
	switch req := in.Req.(type) {
	case WriteReq:
		n.serveWrite(ls, in, req)
	case ReadReq:
		rk := keys.RouteKey(req.Key)
		n.serveRead(ls, in, keys.Span{Start: rk, End: keys.KeyAfter(rk)}, req.TS, rk, func(v *fsm.FSM, ts hlc.TS) (any, error) {
			r, err := v.Read(req.Key, ts)
			return ReadResp{Read: r, TS: ts}, err
		})
	case ScanReq:
		n.serveRead(ls, in, req.Span, req.TS, req.Span.Start, func(v *fsm.FSM, ts hlc.TS) (any, error) {
			rows, err := v.Scan(req.Family, req.Span, ts, req.Limit)
			return ScanResp{Rows: rows, TS: ts}, err
		})
	case ExportReq:
		n.afterRead(ls, in, func(v *fsm.FSM) (any, error) {
			res, err := v.Export(req.Export)
			return ExportResp{Result: res}, err
		})
	case StatusReq:
		n.afterRead(ls, in, func(v *fsm.FSM) (any, error) {
			return StatusResp{Promoted: v.Promoted(req.Job), Staged: v.StagedRows(req.Job)}, nil
		})
	case DrainReq:
		open := 0
		for _, r := range ls.reads {
			if r.span.Overlaps(req.Span) {
				open++
			}
		}
		in.Reply(DrainResp{Open: open}, nil)
	case AccessReq:
		in.Reply(n.accessReport(ls), nil)
	case BarrierReq:
		n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindBarrier}, func(r fsm.Result) any {
			return PushResp{Version: r.Version, LastCommit: r.LastCommit, Horizon: r.Horizon}
		})
	case PushReq:
		c := req.Catalog.Clone()
		n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindCatalog, Catalog: &c}, func(r fsm.Result) any {
			return PushResp{Version: r.Version, LastCommit: r.LastCommit, Horizon: r.Horizon}
		})
	case ImportReq:
		im := &fsm.Import{Job: req.Job, Bracket: req.Bracket, Seq: req.Seq, Rows: req.Rows, Cursor: req.Cursor, Moving: req.Moving}
		n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindImport, Import: im}, func(r fsm.Result) any {
			return ImportResp{Seq: r.Seq, Cursor: r.Cursor, Duplicate: r.Duplicate}
		})
	case FloorReq:
		n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindFloor, Floor: req.Floor}, func(r fsm.Result) any {
			return PushResp{Version: r.Version, LastCommit: r.LastCommit, Horizon: r.Horizon}
		})
	case CleanupReq:
		c := &fsm.Cleanup{Job: req.Job, Moving: req.Moving, FenceTS: req.FenceTS}
		n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindCleanup, Cleanup: c}, func(r fsm.Result) any { return r.Applied })
	case AbandonStagedReq:
		n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindAbandonStaged, Job: req.Job}, func(r fsm.Result) any { return r.Applied })
	default:
		in.Reply(nil, errs.ErrBusy)
	}
}

// proposeReply proposes e and answers with conv(result) once applied.
func (n *Node) proposeReply(ls *leader, in *rpc.Inbound, e fsm.Entry, conv func(fsm.Result) any) {
	n.propose(ls, e, func(r fsm.Result, err error) {
		switch {
		case err != nil:
			in.Reply(nil, err)
		case r.Err != nil:
			in.Reply(nil, r.Err)
		default:
			in.Reply(conv(r), nil)
		}
	})
}

// serveWrite issues a commit timestamp and proposes the write; the answer
// comes when this node's voter applied it. The apply-time checks of the
// state machine decide; the leader does not pre-check.
func (n *Node) serveWrite(ls *leader, in *rpc.Inbound, req WriteReq) {
	n.issue(ls, func(ts hlc.TS, ok bool) {
		if !ok {
			in.Reply(nil, errs.ErrNotLeader)
			return
		}
		w := &fsm.Write{Key: req.Key, Value: req.Value, Tombstone: req.Tombstone, TTLms: req.TTLms,
			TS: ts, HasVersion: req.HasVersion, Observed: req.Observed, Op: req.Op}
		n.count(ls, req.Key, true)
		n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindWrite, Write: w}, func(r fsm.Result) any { return WriteResp{TS: r.TS} })
	})
}

// serveRead admits a read of span on this group's applied view, fixes its
// timestamp (the clock's last value for a latest read, so it covers every
// acknowledged write; an explicit one is observed so no later write can
// slip under it), waits until this node's voter applied everything
// proposed so far, re-checks ownership and serves.
func (n *Node) serveRead(ls *leader, in *rpc.Inbound, span keys.Span, ts hlc.TS, key string, serve func(*fsm.FSM, hlc.TS) (any, error)) {
	if _, err := n.voter(ls.g).ReadRoute(span); err != nil {
		in.Reply(nil, err)
		return
	}
	n.count(ls, key, false)
	start := func(ts hlc.TS) {
		n.seq++
		id := n.seq
		ls.reads = append(ls.reads, openRead{id: id, span: span})
		if h := n.env.Hooks.ReadOpen; h != nil {
			h(ls.g, n.id, ls.term, id, span)
		}
		n.afterApplied(ls, n.env.Cluster.LastIndex(ls.g), func(err error) {
			n.closeRead(ls, id)
			if err != nil {
				in.Reply(nil, err)
				return
			}
			in.Reply(serve(n.voter(ls.g), ts))
		})
	}
	if ts == 0 {
		start(ls.clock.Last())
		return
	}
	n.observe(ls, ts, func(ok bool) {
		if !ok {
			in.Reply(nil, errs.ErrNotLeader)
			return
		}
		start(ts)
	})
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

// afterRead serves a read-only request from this node's voter once it
// applied everything proposed so far.
func (n *Node) afterRead(ls *leader, in *rpc.Inbound, serve func(*fsm.FSM) (any, error)) {
	n.afterApplied(ls, n.env.Cluster.LastIndex(ls.g), func(err error) {
		if err != nil {
			in.Reply(nil, err)
			return
		}
		in.Reply(serve(n.voter(ls.g)))
	})
}

// count records one access for the hotspot detector.
func (n *Node) count(ls *leader, raw string, write bool) {
	rk := keys.RouteKey(raw)
	r, ok := n.voter(ls.g).View.Lookup(rk)
	if !ok {
		return
	}
	a := ls.access[r.ID]
	if a == nil {
		a = &routeAccess{keys: map[string]int{}}
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
	ls.access = map[uint64]*routeAccess{}
	return out
}
