package scenarios

import (
	"shardsim/checker/listcheck"
	"shardsim/model/listdelta"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/property"
)

// OnApply implements group.Observer: at the first commit of a collection
// transaction on the group that owns it, the truth replays it and the
// owner's rows are judged (L.MetaConsistent, L.CountConsistent).
func (p *listsPart) OnApply(g, node int, e fsm.Entry, r fsm.Result, first bool, f *fsm.FSM) {
	if !first || r.Err != nil || r.Duplicate || e.Kind != fsm.KindCommit || e.Txn == nil {
		return
	}
	t, ok := p.txns[e.Txn.ID]
	if !ok {
		return
	}
	w := p.m.w
	snap := rowsOf{f: f, st: mvcc.StagingOf(e.Txn.Staging != 0, e.Txn.Staging)}
	if t.kind != listdelta.List {
		w.Fail(listcheck.CheckCount(snap, t.kind.String(), t.key))
		return
	}
	w.Fail(p.truth.Committed(e.Txn.ID, w.Loop.Now()))
	w.Fail(p.truth.CheckList(snap, t.key))
	switch {
	case t.compact && p.lastPush[t.key] > e.Txn.ReadTS:
		p.counts["compactions_racing_pushes"]++
	case t.push:
		p.lastPush[t.key] = e.Txn.CommitTS
	}
}

// OnLeader implements group.Observer.
func (p *listsPart) OnLeader(int, int, uint64, bool) {}

// rowsOf is listcheck's Snapshot of one voter's state: the newest version
// of each raw key, live and (under a staging job) staged merged, when it
// is visible.
type rowsOf struct {
	f  *fsm.FSM
	st mvcc.Staging
}

const latestTS = hlc.TS(1 << 62)

// Visible implements listcheck.Snapshot.
func (s rowsOf) Visible(start, end string) []listcheck.Row {
	var ks []string
	s.f.Store.Ascend(start, end, func(k string, _ []mvcc.Version) bool {
		ks = append(ks, k)
		return true
	})
	if s.st.Active {
		p := keys.StagePrefix(s.st.Job)
		hi := keys.PrefixEnd(p)
		if end != "" {
			hi = p + end
		}
		var staged []string
		s.f.Store.Ascend(p+start, hi, func(k string, _ []mvcc.Version) bool {
			staged = append(staged, k[len(p):])
			return true
		})
		ks = mergeKeys(ks, staged)
	}
	var out []listcheck.Row
	for _, k := range ks {
		if r := s.f.Store.Get(k, latestTS, s.st, mvcc.MergeNewest); r.Found {
			out = append(out, listcheck.Row{Key: k, Value: r.Version.Value})
		}
	}
	return out
}

// mergeKeys merges two sorted key lists without duplicates.
func mergeKeys(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || i < len(a) && a[i] < b[j]:
			out = append(out, a[i])
			i++
		case i >= len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// ownerRows is the rows of key's current owner by the latest published
// catalog (its most advanced voter, staged rows merged as the route says).
func (p *listsPart) ownerRows(key string) (rowsOf, bool) {
	r, ok := p.m.chk.latest.Lookup(key)
	if !ok {
		return rowsOf{}, false
	}
	return rowsOf{f: p.m.cluster.MostApplied(r.Group), st: mvcc.StagingOf(r.StagedVisible, r.MigrationJob)}, true
}

// final runs the end-of-run checks: every collection's rows on its owner,
// then L.NoDoublePop, L.NoLostItem and L.Linearizable.
func (p *listsPart) final(cfg Config) {
	w := p.m.w
	if cfg.Histories != nil {
		cfg.showHistory("lists", listcheck.DequeModel, listcheck.Operations(p.ops, p.truth))
	}
	if w.Failed() {
		return
	}
	contents := map[string][]string{}
	for _, k := range p.collections() {
		snap, ok := p.ownerRows(k.key)
		if !ok {
			continue
		}
		if k.kind != listdelta.List {
			w.Fail(listcheck.CheckCount(snap, k.kind.String(), k.key))
			continue
		}
		w.Fail(p.truth.CheckList(snap, k.key))
		contents[k.key] = listcheck.ReadList(snap, k.key).Contents()
	}
	for _, check := range []func() *property.Violation{
		func() *property.Violation { return listcheck.CheckNoDoublePop(p.ops) },
		func() *property.Violation { return listcheck.CheckNoLostItem(p.ops, p.truth, contents) },
	} {
		if w.Failed() {
			return
		}
		w.Fail(check())
	}
	if w.Failed() {
		return
	}
	verdict, v, longest := listcheck.CheckLinearizable(p.ops, p.truth, cfg.checkTimeout())
	p.counts["longest_list_history"] = int64(longest)
	w.Judge(verdict, v)
}

// count publishes what the collections did.
func (p *listsPart) count() {
	w := p.m.w
	var st listdelta.Stats
	add := func(s listdelta.Stats) {
		st.Committed += s.Committed
		st.Conflicts += s.Conflicts
		st.ClaimConflicts += s.ClaimConflicts
		st.ClaimSkips += s.ClaimSkips
		st.Truncated += s.Truncated
		st.Compactions += s.Compactions
		st.CompactConflict += s.CompactConflict
		st.DeltasFolded += s.DeltasFolded
		st.RowsCollected += s.RowsCollected
		st.Execs += s.Execs
	}
	for _, c := range p.clients {
		add(c.store.Stats())
	}
	for _, c := range p.compactors {
		add(c.store.Stats())
	}
	p.reachCounts(st)
	for _, c := range []struct {
		name string
		v    int
	}{
		{"txns_committed_lists", st.Committed}, {"txn_conflicts_lists", st.Conflicts}, {"pops_contending_on_claims", st.ClaimConflicts},
		{"claims_skipped", st.ClaimSkips}, {"delta_scans_truncated", st.Truncated}, {"compactions", st.Compactions},
		{"compactions_conflicting", st.CompactConflict}, {"deltas_folded", st.DeltasFolded}, {"rows_collected", st.RowsCollected},
		{"multi_exec", st.Execs},
	} {
		w.Count(c.name, int64(c.v))
	}
	for _, k := range []string{"list_ops_done", "list_ops_unknown", "list_ops_failed", "list_ops_truncated",
		"counted_ops_done", "counted_ops_failed", "counted_ops_truncated", "compactions_racing_pushes", "longest_list_history", "tombstones_written"} {
		w.Count(k, p.counts[k])
	}
	if p.m.kind == listsSplit {
		w.Count("migrations_mid_workload", p.migrationsMidWorkload())
	}
}
