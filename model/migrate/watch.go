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
				cat, err := catalog.Decode(e.Kv.Value)
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
	(&heartbeats{n: n, ls: ls}).beat()
}

// heartbeats is the group-0 leader's heartbeat round, as the callback of
// its own next round: a loop that only sends and sleeps needs no task (a
// task's every wake-up switches coroutines), and the timer of its Sleep
// is the same event as this one's.
type heartbeats struct {
	n  *Node
	ls *leader
}

// Fire runs the next round (simclock.Callback).
func (h *heartbeats) Fire(*simclock.Context) { h.beat() }

// beat sends one round, while ls leads group 0, and schedules the next.
func (h *heartbeats) beat() {
	n := h.n
	if n.leads(0) != h.ls {
		return
	}
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
	n.ctx.Go(groupTaskName(compactTask, ls.g), func(t *simclock.Task) {
		for {
			t.Sleep(n.env.Cfg.CompactEvery)
			if n.leads(ls.g) != ls {
				return
			}
			keep := uint64(n.env.Cfg.Retention.Milliseconds())
			phys := ls.clock.Last().Phys()
			if phys <= keep {
				continue
			}
			ts := hlc.Make(phys-keep, 0)
			if ts <= n.voter(ls.g).CompactedTS {
				continue
			}
			if _, err := n.proposeWait(t, ls, fsm.Entry{Kind: fsm.KindCompact, TS: ts}); err != nil {
				return
			}
		}
	})
}

// startLockResolver makes a leader roll back, every LockTTL, the
// transactions whose locks in its group are older than LockTTL (a client
// that stalled or gave up between prepare and commit): reads and writes
// waiting on them go on, and a late COMMIT finds the rollback record.
func (n *Node) startLockResolver(ls *leader) {
	if n.env.Cfg.LockTTL <= 0 {
		return
	}
	n.ctx.Go(groupTaskName(resolveTask, ls.g), func(t *simclock.Task) {
		for {
			t.Sleep(n.env.Cfg.LockTTL)
			if n.leads(ls.g) != ls {
				return
			}
			old := hlc.Make(n.nowMs()-uint64(n.env.Cfg.LockTTL.Milliseconds()), 0)
			for _, tx := range staleTxns(n.voter(ls.g).Locks(keys.Span{}), old) {
				tx := tx
				if _, err := n.proposeWait(t, ls, fsm.Entry{Kind: fsm.KindRollback, Txn: &tx}); err != nil {
					return
				}
				n.env.Counters.LocksResolved++
			}
		}
	})
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
