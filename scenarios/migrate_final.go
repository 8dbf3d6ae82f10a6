package scenarios

import (
	"fmt"
	"shardsim/property"

	"shardsim/checker/migratecheck"
	"shardsim/model/migrate/catalog"
)

// final runs the end-of-run checks: histories, then liveness.
func (c *migrateChecks) final(cfg Config) {
	w := c.m.w
	if cfg.Histories != nil {
		cfg.showHistory("migrate", migratecheck.KeyModel, migratecheck.Operations(c.m.rec.history(c.oracle), c.oracle))
	}
	if w.Failed() {
		return
	}
	for _, check := range []func() *property.Violation{c.noStaleRead, c.snapshotReads, c.noLostWrite, c.txns} {
		if c.fail(check()); w.Failed() {
			return
		}
	}
	if !c.m.done() {
		c.m.w.Fail(property.Violated(property.MJobTerminates, "%s", c.stuck()))
		return
	}
	if msg := c.leftBehind(); msg != "" {
		c.m.w.Fail(property.Violated(property.MJobTerminates, "%s", msg))
		return
	}
	w.Judge(migratecheck.CheckLinearizableSplit(c.m.rec.ops, c.m.rec.derivedHistory(c.oracle), c.oracle, cfg.checkTimeout()))
}

func (c *migrateChecks) snapshotReads() *property.Violation {
	for _, r := range c.m.rec.reads {
		if err := c.oracle.CheckRead(r); err != nil {
			return err
		}
	}
	for _, s := range c.m.rec.scans {
		if err := c.oracle.CheckScan(s); err != nil {
			return err
		}
	}
	return nil
}

func (c *migrateChecks) noLostWrite() *property.Violation {
	return c.checkNoLostWrite("at the end")
}

func (c *migrateChecks) noStaleRead() *property.Violation {
	var moves []migratecheck.Move
	for _, id := range c.jobs.Jobs() {
		if j, _ := c.jobs.Job(id); c.jobs.CutOver(id) {
			moves = append(moves, migratecheck.Move{Job: id, Source: j.SourceGroup, Target: j.TargetGroup, Span: j.Moving(), At: c.cutoverAt[id]})
		}
	}
	return migratecheck.CheckNoStaleRead(c.m.rec.served, c.m.rec.acked, c.oracle, moves)
}

func (c *migrateChecks) txns() *property.Violation {
	return migratecheck.CheckTxns(c.m.rec.txns, c.oracle)
}

// leftBehind reports what an ended job left in the world (M.JobTerminates:
// a job ends only when its route is plain again and no guard or staged row
// of it remains on any voter): a fenced or staged route, a read fence, a
// tracker or pin, staged rows.
func (c *migrateChecks) leftBehind() string {
	for _, r := range c.latest.Routes {
		if r.State == catalog.WriteFenced || r.StagedVisible {
			return fmt.Sprintf("every job ended but route %s is left behind", r)
		}
	}
	for _, id := range c.jobs.Jobs() {
		j, _ := c.jobs.Job(id)
		if !j.Phase.Terminal() {
			continue
		}
		src, tgt := c.m.cluster.MostApplied(j.SourceGroup), c.m.cluster.MostApplied(j.TargetGroup)
		if _, ok := src.Fence(id); ok {
			return fmt.Sprintf("job %d ended %s but group %d still holds its read fence", id, j.Phase, j.SourceGroup)
		}
		if _, ok := src.Pin(id); ok || src.Tracking(id) {
			return fmt.Sprintf("job %d ended %s but group %d still tracks or pins it", id, j.Phase, j.SourceGroup)
		}
		if n := tgt.StagedRows(id); n > 0 {
			return fmt.Sprintf("job %d ended %s but group %d keeps %d staged rows", id, j.Phase, j.TargetGroup, n)
		}
	}
	return ""
}

// stuck explains a run that did not converge after the heal.
func (c *migrateChecks) stuck() string {
	if c.liveJob != 0 {
		j, _ := c.jobs.Job(c.liveJob)
		return fmt.Sprintf("job %d still %s %v after the heal", j.ID, j.Phase, j.LastError)
	}
	for i, cl := range c.m.clients {
		if !cl.done {
			return fmt.Sprintf("client %d never finished", i)
		}
	}
	if !c.m.opDone {
		return "the operator never finished"
	}
	return "the run did not converge"
}
