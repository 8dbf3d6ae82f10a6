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
	(&promoter{ls: ls}).promote()
}

// promoter is a running promoter, as the outcome of its proposals and the
// callback of its pacing timer: a loop of proposals and sleeps needs no
// task (each wake-up of a task switches coroutines), and its entries and
// timers are the ones a task proposing and sleeping in turn would make,
// at the same points.
type promoter struct {
	ls  *leader
	job uint64 // the job of the batch being promoted
}

// promote proposes the next batch while ls leads and staged data is left;
// otherwise the promoter stops.
func (p *promoter) promote() {
	ls := p.ls
	if !ls.leading() {
		p.stop()
		return
	}
	n := ls.node
	job, ok := n.stagedJob(ls.g)
	if !ok {
		p.stop()
		return
	}
	p.job = job
	n.proposeThen(ls, fsm.Entry{Kind: fsm.KindPromote, Promote: &fsm.Promote{Job: job, Max: n.env.Cfg.PromoteBatch}}, waiter{then: p})
}

// applied takes a batch's outcome (outcome): the promoter records a job
// whose promotion completed and paces itself before the next batch, or
// stops with the leadership.
func (p *promoter) applied(r fsm.Result, applied bool, err error) {
	if proposalErr(applied, err) != nil {
		p.stop()
		return
	}
	if r.Done {
		var line [48]byte // "g<g> j<job>"
		b := strconv.AppendInt(append(line[:0], 'g'), int64(p.ls.g), 10)
		p.ls.node.ctx.Rec("promote.done").TextBytes(strconv.AppendUint(append(b, " j"...), p.job, 10)).End()
	}
	p.ls.node.afterLocal(p.ls.node.env.Cfg.PromotePace, p)
}

// Fire promotes the next batch once the pace has passed (simclock.Callback).
func (p *promoter) Fire(*simclock.Context) { p.promote() }

// stop lets a later kick start a promoter again.
func (p *promoter) stop() { p.ls.promoting = false }
