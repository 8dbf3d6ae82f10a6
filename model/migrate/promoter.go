package migrate

import (
	"strconv"

	"shardsim/model/migrate/fsm"
	"shardsim/simclock"
)

// stagedJob returns a job whose staged rows this group must promote: a
// route of the group, in the node's view, with staged visibility on and
// promotion not complete.
func (n *Node) stagedJob(g int) (uint64, bool) {
	v := n.voter(g)
	for _, r := range n.eng.View.Routes {
		if r.Group == g && r.StagedVisible && !v.Promoted(r.MigrationJob) {
			return r.MigrationJob, true
		}
	}
	return 0, false
}

// kickPromoter starts the leader-local promoter of ls's group if there is
// staged data to promote and none runs. It copies staged versions to their
// live positions in bounded entries; the progress cursor is the staged
// keyspace itself (promoted rows are deleted in the same entry), so a new
// leader resumes where the old one stopped.
func (n *Node) kickPromoter(ls *leader) {
	if ls.promoting || !ls.ready {
		return
	}
	if _, ok := n.stagedJob(ls.g); !ok {
		return
	}
	ls.promoting = true
	n.ctx.Go(groupTaskName(promoteTask, ls.g), func(t *simclock.Task) {
		defer func() { ls.promoting = false }()
		for n.leads(ls.g) == ls {
			job, ok := n.stagedJob(ls.g)
			if !ok {
				return
			}
			r, err := n.proposeWait(t, ls, fsm.Entry{Kind: fsm.KindPromote, Promote: &fsm.Promote{Job: job, Max: n.env.Cfg.PromoteBatch}})
			if err != nil {
				return
			}
			if r.Done {
				var line [48]byte // "g<g> j<job>"
				b := strconv.AppendInt(append(line[:0], 'g'), int64(ls.g), 10)
				t.Context().Rec("promote.done").TextBytes(strconv.AppendUint(append(b, " j"...), job, 10)).End()
			}
			t.Sleep(n.env.Cfg.PromotePace)
		}
	})
}
