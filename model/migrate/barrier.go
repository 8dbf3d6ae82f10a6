package migrate

import (
	"slices"

	"shardsim/model/bugs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
)

// All-voter barriers. A guard that lives in a node's own state (its catalog
// view) protects nothing until every voter that could lead the group holds
// it: a quorum is not enough, since a lagging voter can win an election.
// The migrator asks every current voter's node, samples the voter set again
// after each round (a voter that joined meanwhile is asked too) and counts
// the barrier done only when no voter is left unasked.

// voters returns group g's current voter set, from its leader.
func (m *migrator) voters(g int) ([]int, error) {
	r, err := m.call(g, MembersReq{})
	if err != nil {
		return nil, err
	}
	vs := r.(MembersResp).Voters
	if m.bugs.Has(bugs.MigrateFrozenVoterSet) {
		// The wrong variant keeps the first sample of each group.
		if f, ok := m.frozen[g]; ok {
			return f, nil
		}
		m.frozen[g] = vs
	}
	return vs, nil
}

// allVoters runs the barrier on group g: every current voter's node must
// answer ok to ask. With quorum (the quorum-fence-ack variant) a majority
// of the voters is taken as enough.
func (m *migrator) allVoters(g int, quorum bool, ask func(node int) bool) error {
	var acked []int
	for round := 0; ; round++ {
		vs, err := m.voters(g)
		if err != nil {
			return err
		}
		var pending []int
		for _, v := range vs {
			if !slices.Contains(acked, v) {
				pending = append(pending, v)
			}
		}
		if len(pending) == 0 {
			return nil
		}
		if round > 0 {
			m.counters().BarrierNewVoters += len(pending)
		}
		missing := 0
		for _, v := range pending {
			if ask(v) {
				acked = append(acked, v)
			} else {
				missing++
			}
		}
		if quorum && 2*(len(vs)-missing) > len(vs) {
			return nil
		}
		if missing > 0 {
			m.counters().BarrierWaits++
			return errNotYet
		}
	}
}

// viewAtLeast asks node whether its catalog view has reached version.
func (m *migrator) viewAtLeast(version uint64) func(int) bool {
	return func(node int) bool {
		r, err := m.callNode(node, ViewReq{})
		return err == nil && r.(ViewResp).Version >= version
	}
}

// holds asks node whether its voter of g holds a guard of j.
func (m *migrator) holds(g int, kind fsm.Kind, j job.SplitJob, ts hlc.TS) func(int) bool {
	return func(node int) bool {
		r, err := m.callNode(node, GuardReq{Group: g, Kind: kind, Job: j.ID, TS: ts})
		return err == nil && r.(GuardAck).Present
	}
}

// guardOp installs (or removes) one of j's guards on group g through its
// log.
func (m *migrator) guardOp(g int, kind fsm.Kind, gd fsm.Guard) (GuardResp, error) {
	r, err := m.call(g, GuardOp{Kind: kind, Guard: gd})
	if err != nil {
		return GuardResp{}, err
	}
	return r.(GuardResp), nil
}

// writeFenceBarrier waits until every current source voter's node view
// shows the write fence (a node admits writes by its view). The wrong
// variants: no barrier at all, a quorum, or the migrator's own watcher
// taken as everyone's.
func (m *migrator) writeFenceBarrier(j job.SplitJob) error {
	switch {
	case m.bugs.Has(bugs.MigrateFenceTSNoBarrier):
		return nil
	case m.bugs.Has(bugs.MigrateFenceAckFromWatcher):
		if m.n.eng.View.Version >= j.FenceVersion {
			return nil
		}
		return errNotYet
	}
	return m.allVoters(j.SourceGroup, m.bugs.Has(bugs.MigrateQuorumFenceAck), m.viewAtLeast(j.FenceVersion))
}
