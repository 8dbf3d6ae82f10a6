package migrate

import (
	"time"

	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/simclock"
	"shardsim/simkv"
)

// watch runs the node's catalog watcher: it follows the catalog key in the
// metadata store from where the node's view stands and applies each
// snapshot after the node's own lag, forward only. Nothing pushes a catalog
// to a node: a node's view is what its watcher pulled.
func (n *Node) watch(ctx *simclock.Context) {
	lag := n.env.WatchLag[n.id]
	n.meta.Watch(ctx, simkv.WatchRequest{Key: []byte(job.CatalogKey), StartRevision: n.eng.WatchRev + 1},
		func(ctx *simclock.Context, r simkv.WatchResponse) {
			for _, e := range r.Events {
				if e.Type != simkv.EventPut {
					continue
				}
				cat, err := n.env.catalogs.decode(e.Kv.Value)
				if err != nil {
					continue
				}
				rev := e.Kv.ModRevision
				ctx.Defer(ctx.Choices().Duration(0, lag), func(ctx *simclock.Context) { n.adopt(ctx, cat, rev) })
			}
		},
		func(ctx *simclock.Context, err error) {
			ctx.Defer(50*time.Millisecond, func(ctx *simclock.Context) { n.watch(ctx) })
		})
}

// adopt moves the node's view forward and lets the groups it leads react.
func (n *Node) adopt(ctx *simclock.Context, cat catalog.Catalog, rev int64) {
	n.ctx = ctx
	if !n.eng.Adopt(cat, rev) {
		return
	}
	if h := n.env.Hooks.ViewAdopted; h != nil {
		h(n.id, cat.Version)
	}
	for _, ls := range n.lead {
		if ls != nil && ls.ready {
			n.kickPromoter(ls)
		}
	}
}

// startHeartbeats makes the group-0 leader send every node the highest
// cutover version it has seen, every HeartbeatEvery (lost with the
// network's loss rate). A deposed leader that has not learned it keeps
// sending: harmless, the watermark only rises.
func (n *Node) startHeartbeats(ls *leader) {
	(&heartbeats{ls: ls}).beat()
}

// heartbeats is the group-0 leader's heartbeat round, as the callback of
// its own next round: a loop that only sends and sleeps needs no task (a
// task's every wake-up switches coroutines), and the timer of its Sleep
// is the same event as this one's.
type heartbeats struct{ ls *leader }

// Fire runs the next round (simclock.Callback).
func (h *heartbeats) Fire(*simclock.Context) { h.beat() }

// beat sends one round, while ls leads group 0, and schedules the next.
func (h *heartbeats) beat() {
	if !h.ls.leading() {
		return
	}
	n := h.ls.node
	for node := 0; node < n.env.Cluster.Nodes(); node++ {
		if node != n.id {
			n.env.Net.Notify(node, Heartbeat{Watermark: n.eng.Watermark})
		}
	}
	n.afterLocal(n.env.Cfg.HeartbeatEvery, h)
}

// startCompactor makes a leader compact its group every CompactEvery,
// keeping Retention of history below its clock.
func (n *Node) startCompactor(ls *leader) {
	if n.env.Cfg.CompactEvery <= 0 {
		return
	}
	(&compactor{ls: ls}).sleep()
}

// compactor is a leader's compaction loop, as the callback of its own
// timer and the outcome of its proposals: a loop that sleeps between
// rounds needs no task (each wake-up of a task switches coroutines), and
// its timers and proposals are the events and entries a task sleeping
// and proposing in turn would make, at the same points.
type compactor struct{ ls *leader }

// sleep waits CompactEvery on the node's clock for the next round.
func (c *compactor) sleep() { c.ls.node.afterLocal(c.ls.node.env.Cfg.CompactEvery, c) }

// Fire runs a round (simclock.Callback): while ls leads, it proposes a
// compaction below the retention, if that raises the watermark, and
// sleeps again once it applied (or at once, when there is none to make).
func (c *compactor) Fire(*simclock.Context) {
	ls := c.ls
	if !ls.leading() {
		return
	}
	n := ls.node
	keep := uint64(n.env.Cfg.Retention.Milliseconds())
	if phys := ls.clock.Last().Phys(); phys > keep {
		if ts := hlc.Make(phys-keep, 0); ts > n.voter(ls.g).CompactedTS {
			n.proposeThen(ls, fsm.Entry{Kind: fsm.KindCompact, TS: ts}, waiter{then: c})
			return
		}
	}
	c.sleep()
}

// applied takes the compaction's outcome: the loop ends with the
// leadership (outcome).
func (c *compactor) applied(_ fsm.Result, applied bool, err error) {
	if proposalErr(applied, err) != nil {
		return
	}
	c.sleep()
}

// startLockResolver makes a leader roll back, every LockTTL, the
// transactions whose locks in its group are older than LockTTL (a client
// that stalled or gave up between prepare and commit): reads and writes
// waiting on them go on, and a late COMMIT finds the rollback record.
func (n *Node) startLockResolver(ls *leader) {
	if n.env.Cfg.LockTTL <= 0 {
		return
	}
	(&lockResolver{ls: ls}).sleep()
}

// lockResolver is a leader's lock-resolving loop, as the callback of its
// own timer and the outcome of its proposals (see compactor): each round
// rolls back the round's stale transactions one after another.
type lockResolver struct {
	ls    *leader
	stale []fsm.Txn // the round's rollbacks, copied into each proposed entry
	next  int       // the next of them to propose
}

// sleep waits LockTTL on the node's clock for the next round.
func (r *lockResolver) sleep() { r.ls.node.afterLocal(r.ls.node.env.Cfg.LockTTL, r) }

// Fire runs a round (simclock.Callback) while ls leads.
func (r *lockResolver) Fire(*simclock.Context) {
	ls := r.ls
	if !ls.leading() {
		return
	}
	n := ls.node
	old := hlc.Make(n.nowMs()-uint64(n.env.Cfg.LockTTL.Milliseconds()), 0)
	r.stale, r.next = staleTxns(n.voter(ls.g).Locks(keys.Span{}), old), 0
	r.rollBack()
}

// rollBack proposes the round's next rollback, or sleeps when none is left.
func (r *lockResolver) rollBack() {
	if r.next == len(r.stale) {
		r.stale = nil
		r.sleep()
		return
	}
	// The entry gets its own copy: every voter's log keeps it and may apply
	// it again later, so it must not point into a list the loop owns.
	tx := new(fsm.Txn)
	*tx = r.stale[r.next]
	r.next++
	r.ls.node.proposeThen(r.ls, fsm.Entry{Kind: fsm.KindRollback, Txn: tx}, waiter{then: r})
}

// applied takes a rollback's outcome: the loop ends with the leadership
// (outcome).
func (r *lockResolver) applied(_ fsm.Result, applied bool, err error) {
	if proposalErr(applied, err) != nil {
		return
	}
	r.ls.node.env.Counters.LocksResolved++
	r.rollBack()
}

// staleTxns groups locks started before old by transaction, in order of
// first appearance, as rollback steps (their records at a fresh-enough
// timestamp: the lock's own commit timestamp is above every read it
// blocked).
func staleTxns(locks []fsm.LockRow, old hlc.TS) []fsm.Txn {
	var out []fsm.Txn
	idx := map[string]int{}
	for _, l := range locks {
		if l.StartTS >= old {
			continue
		}
		i, ok := idx[l.Txn]
		if !ok {
			i = len(out)
			idx[l.Txn] = i
			out = append(out, fsm.Txn{ID: l.Txn, Primary: l.Primary, StartTS: l.StartTS, CommitTS: l.CommitTS, AbortTS: l.CommitTS})
		}
		out[i].Keys = append(out[i].Keys, l.Key)
	}
	return out
}
