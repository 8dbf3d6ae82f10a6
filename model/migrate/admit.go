package migrate

import (
	"encoding/binary"

	"shardsim/model/bugs"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/rpc"
)

// Write admission is proposer-evaluated: the leader judges a write's
// footprint by its node's catalog view (the route must be this group's and
// not write-fenced, also for requests that carry no catalog version), gives
// it a commit timestamp (issued, or the caller's if it lies above every
// read already served and the route's floor), and proposes the effect; the
// state machine's apply-time checks (durable floors, locks, existing
// versions) use replicated state only, so every voter decides alike.

// footprint is what a write request touches: route keys and route-key
// spans.
type footprint struct {
	points     []string // route keys (a point needs no span: building its end would allocate)
	spans      []keys.Span
	hasVersion bool
	proof      func() bool // may the write pass a write fence (an already-prepared transaction's commit)?
}

// admitRoutes judges fp by the node's view and returns the staged job reads
// of the footprint must merge (0: none) and the highest route floor.
func (n *Node) admitRoutes(ls *leader, fp footprint) (uint64, hlc.TS, error) {
	view := n.eng.View
	b := n.env.Bugs
	var a admission
	for _, rk := range fp.points {
		r, ok := view.Lookup(rk)
		if !ok {
			return 0, 0, errs.ErrWrongGroup
		}
		if err := n.admitRoute(ls, fp, r, &a); err != nil {
			return 0, 0, err
		}
	}
	for _, s := range fp.spans {
		var routes []catalog.Route
		if b.Has(bugs.MigrateRangeDeleteAsPoint) || keys.IsKeyAfter(s.End, s.Start) { // a point span, compared without building its end
			if r, ok := view.Lookup(s.Start); ok {
				routes = []catalog.Route{r}
			}
		} else {
			routes = view.Intersecting(s)
		}
		if len(routes) == 0 {
			return 0, 0, errs.ErrWrongGroup
		}
		for _, r := range routes {
			if err := n.admitRoute(ls, fp, r, &a); err != nil {
				return 0, 0, err
			}
		}
	}
	return a.staging, a.floor, nil
}

// admission is what admitRoutes gathers from the routes it admitted.
type admission struct {
	staging uint64 // the staged job reads must merge (0: none)
	floor   hlc.TS // the highest route floor
}

// admitRoute judges one route of fp's and adds it to a.
func (n *Node) admitRoute(ls *leader, fp footprint, r catalog.Route, a *admission) error {
	if r.Group != ls.g {
		return errs.ErrWrongGroup
	}
	fenceChecked := fp.hasVersion || !n.env.Bugs.Has(bugs.MigrateFenceNeedsVersion)
	if r.State == catalog.WriteFenced && fenceChecked {
		if fp.proof == nil || !fp.proof() {
			return errs.ErrWriteFenced
		}
		n.env.Counters.FencePasses++
	}
	if r.StagedVisible {
		a.staging = r.MigrationJob
	}
	a.floor = max(a.floor, r.MinWriteTSExclusive)
	return nil
}

// commitTS gives a write its commit timestamp: the caller's (above the
// timestamp cache for every key and the floor) or a fresh one (above the
// floor: a leader whose clock has not yet caught up refuses, retryably,
// and moves its clock).
func (n *Node) commitTS(ls *leader, caller hlc.TS, rks []string, floor hlc.TS, fn func(hlc.TS, error)) {
	ts, done, err := n.commitTSNow(ls, caller, rks, floor)
	if !done {
		n.commitTSAfterRaise(ls, caller, floor, fn)
		return
	}
	fn(ts, err)
}

// commitTSNow is commitTS up to the point where the clock would have to
// wait for a ceiling raise: done false means it must (the clock is
// unchanged), and commitTSAfterRaise goes on. A caller that goes on at
// once makes no closure.
func (n *Node) commitTSNow(ls *leader, caller hlc.TS, rks []string, floor hlc.TS) (ts hlc.TS, done bool, err error) {
	if caller != 0 {
		n.env.Counters.CallerTSWrites++
		for _, rk := range rks {
			if caller <= ls.ts.max(rk) {
				n.env.Counters.CallerTSRejected++
				return 0, true, errs.ErrWriteTooOld
			}
		}
		if caller <= floor {
			n.env.Counters.CallerTSRejected++
			return 0, true, errs.ErrWriteTooOld
		}
		if ls.clock.Observe(caller) != nil {
			return 0, false, nil
		}
		return caller, true, nil
	}
	ts, ok := n.issueNow(ls)
	if !ok {
		return 0, false, nil
	}
	ts, err = n.aboveFloor(ls, ts, floor)
	return ts, true, err
}

// commitTSAfterRaise is the rest of commitTS when the clock has to wait
// for a ceiling raise: observe or issue meets the ceiling again (the clock
// is unchanged) and waits for the raise as it does for any caller.
func (n *Node) commitTSAfterRaise(ls *leader, caller, floor hlc.TS, fn func(hlc.TS, error)) {
	if caller != 0 {
		n.observe(ls, caller, func(ok bool) {
			if !ok {
				fn(0, errs.ErrNotLeader)
				return
			}
			fn(caller, nil)
		})
		return
	}
	n.issue(ls, func(ts hlc.TS, ok bool) {
		if !ok {
			fn(0, errs.ErrNotLeader)
			return
		}
		fn(n.aboveFloor(ls, ts, floor))
	})
}

// aboveFloor accepts a fresh timestamp above the floor; one at or below
// it is refused (retryably) and the clock moved past the floor.
func (n *Node) aboveFloor(ls *leader, ts, floor hlc.TS) (hlc.TS, error) {
	if ts <= floor {
		ls.clock.ObserveDurable(floor)
		return 0, errs.ErrBelowFloor
	}
	return ts, nil
}

func (n *Node) serveWrite(ls *leader, in rpc.Inbound, req WriteReq) {
	rks := [1]string{keys.RouteKey(req.Key)}
	staging, floor, err := n.admitRoutes(ls, footprint{points: rks[:], hasVersion: req.HasVersion})
	if err != nil {
		in.Reply(nil, err)
		return
	}
	n.count(ls, req.Key, true)
	ts, done, err := n.commitTSNow(ls, req.TS, rks[:], floor)
	if !done {
		waiting := req // only a write that waits moves a copy of its request to the heap
		n.commitTSAfterRaise(ls, req.TS, floor, func(ts hlc.TS, err error) { n.proposeWrite(ls, in, &waiting, staging, ts, err) })
		return
	}
	n.proposeWrite(ls, in, &req, staging, ts, err)
}

// proposeWrite proposes a write once it has its commit timestamp.
func (n *Node) proposeWrite(ls *leader, in rpc.Inbound, req *WriteReq, staging uint64, ts hlc.TS, err error) {
	if err != nil {
		in.Reply(nil, err)
		return
	}
	w := &fsm.Write{Key: req.Key, Value: req.Value, Tombstone: req.Tombstone, TTLms: req.TTLms,
		TS: ts, CallerTS: req.TS != 0, Staging: staging, Op: req.Op}
	n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindWrite, Write: w}, func(_ uint64, r fsm.Result) any { return WriteResp{TS: r.TS} })
}

func (n *Node) serveDeleteRange(ls *leader, in rpc.Inbound, req DeleteRangeReq) {
	staging, floor, err := n.admitRoutes(ls, footprint{spans: []keys.Span{req.Span}, hasVersion: req.HasVersion})
	if err != nil {
		in.Reply(nil, err)
		return
	}
	n.count(ls, req.Span.Start, true)
	n.commitTS(ls, 0, nil, floor, func(ts hlc.TS, err error) {
		if err != nil {
			in.Reply(nil, err)
			return
		}
		d := &fsm.DeleteRange{Span: req.Span, TS: ts, Staging: staging, Op: req.Op}
		n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindDeleteRange, DelRange: d}, func(_ uint64, r fsm.Result) any { return WriteResp{TS: r.TS} })
	})
}

// txnFootprint is what a transaction touches: the route keys of its keys,
// and the reads of its read set whose route keys the layout bounds
// (keys.RouteSpan; a read of a route that moved away must not validate
// against what stayed here).
func txnFootprint(t fsm.Txn, hasVersion bool) footprint {
	fp := footprint{points: make([]string, 0, len(t.Keys)), hasVersion: hasVersion}
	for _, k := range t.Keys {
		fp.points = append(fp.points, keys.RouteKey(k))
	}
	for _, r := range t.Reads {
		if s, ok := keys.RouteSpan(r.Start, r.End); ok {
			if fp.spans == nil {
				fp.spans = make([]keys.Span, 0, len(t.Reads))
			}
			fp.spans = append(fp.spans, s)
		}
	}
	return fp
}

// recordReads notes t's read set in the leader's timestamp cache at its
// commit timestamp: no caller-supplied timestamp at or below it may now
// change what the transaction read. A read whose route keys the layout
// cannot bound covers the whole keyspace.
func recordReads(ls *leader, t *fsm.Txn) {
	for _, r := range t.Reads {
		s, ok := keys.RouteSpan(r.Start, r.End)
		if !ok {
			s = keys.Span{}
		}
		ls.ts.record(s, t.CommitTS)
	}
}

// stamp fills the slots of t's keys that carry the commit timestamp (a
// one-phase commit: the leader issues the timestamp, so only it can write
// a key that embeds it). A slot outside its key is left alone.
func stamp(t *fsm.Txn) {
	if len(t.Stamps) == 0 {
		return
	}
	ks := append([]string(nil), t.Keys...)
	for _, s := range t.Stamps {
		if s.Key < 0 || s.Key >= len(ks) || s.Offset < 0 || s.Offset+8 > len(ks[s.Key]) {
			continue
		}
		b := []byte(ks[s.Key])
		binary.BigEndian.PutUint64(b[s.Offset:], uint64(t.CommitTS))
		ks[s.Key] = string(b)
	}
	t.Keys = ks
}

// servePrepare admits a transaction's prepare: a write like any other (a
// write-fenced route refuses new prepares), with a start timestamp and a
// commit timestamp fixed now.
func (n *Node) servePrepare(ls *leader, in rpc.Inbound, req PrepareReq) {
	fp := txnFootprint(req.Txn, req.HasVersion)
	staging, floor, err := n.admitRoutes(ls, fp)
	if err != nil {
		in.Reply(nil, err)
		return
	}
	n.count(ls, req.Txn.Primary, true)
	n.issue(ls, func(start hlc.TS, ok bool) {
		if !ok {
			in.Reply(nil, errs.ErrNotLeader)
			return
		}
		n.commitTS(ls, req.Txn.CommitTS, fp.points, max(floor, start), func(commit hlc.TS, err error) {
			if err != nil {
				in.Reply(nil, err)
				return
			}
			t := req.Txn
			t.StartTS, t.CommitTS, t.CallerTS, t.Staging = start, commit, req.Txn.CommitTS != 0, staging
			recordReads(ls, &t)
			n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindPrepare, Txn: &t}, func(_ uint64, r fsm.Result) any {
				return PrepareResp{StartTS: t.StartTS, CommitTS: r.TS}
			})
		})
	})
}

// serveCommit admits a commit. Committing an already-prepared transaction
// may pass a write fence, but only with proof in the leader's applied
// state: the transaction's own locks (drained before fence_ts), or its
// commit record (an idempotent retry). A one-phase commit is a new write
// and is fenced like one.
func (n *Node) serveCommit(ls *leader, in rpc.Inbound, req CommitReq) {
	fp := txnFootprint(req.Txn, req.HasVersion)
	t := req.Txn
	t.OnePhase = req.OnePhase
	v := n.voter(ls.g)
	bypass := n.env.Bugs.Has(bugs.MigrateCommitBypassesFence)
	if !req.OnePhase || bypass {
		fp.proof = func() bool { return bypass || v.CommitProof(&t) }
	}
	staging, floor, err := n.admitRoutes(ls, fp)
	if err != nil {
		in.Reply(nil, err)
		return
	}
	t.Staging = staging
	n.count(ls, t.Primary, true)
	propose := func() {
		n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindCommit, Txn: &t}, func(_ uint64, r fsm.Result) any {
			return CommitResp{TS: r.TS, Duplicate: r.Duplicate}
		})
	}
	if !req.OnePhase {
		propose()
		return
	}
	n.issue(ls, func(start hlc.TS, ok bool) {
		if !ok {
			in.Reply(nil, errs.ErrNotLeader)
			return
		}
		n.commitTS(ls, req.Txn.CommitTS, fp.points, max(floor, start), func(commit hlc.TS, err error) {
			if err != nil {
				in.Reply(nil, err)
				return
			}
			t.StartTS, t.CommitTS, t.CallerTS = start, commit, req.Txn.CommitTS != 0
			stamp(&t)
			recordReads(ls, &t)
			propose()
		})
	})
}

// serveRollback admits a rollback: through a write fence only while the
// transaction still holds a lock there (resolving a prepared transaction,
// the abort lane; a rollback record written afterwards would be lost with
// the move), and it writes its rollback record at a fresh timestamp.
func (n *Node) serveRollback(ls *leader, in rpc.Inbound, req RollbackReq) {
	fp := txnFootprint(req.Txn, false)
	v := n.voter(ls.g)
	t := req.Txn
	fp.proof = func() bool { return v.HoldsLock(&t) }
	staging, _, err := n.admitRoutes(ls, fp)
	if err != nil {
		in.Reply(nil, err)
		return
	}
	t.Staging = staging
	n.issue(ls, func(ts hlc.TS, ok bool) {
		if !ok {
			in.Reply(nil, errs.ErrNotLeader)
			return
		}
		t.AbortTS = ts
		n.proposeReply(ls, in, fsm.Entry{Kind: fsm.KindRollback, Txn: &t}, func(uint64, fsm.Result) any { return struct{}{} })
	})
}
