package tlatrace

import (
	"strings"
	"testing"

	"shardsim/model/bugs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/simkv"
)

// A hand-built run: a write outside the moving span (no event), two writes
// in it, the job created and its snapshot taken, one import. The module
// must name each step's action with its parameters, rank keys and
// timestamps, and carry the state changes.
func TestMigrationModule(t *testing.T) {
	moving := keys.Span{Start: "k05", End: ""}
	m := NewMigration(1, 2, moving)
	src, tgt := fsm.New(1, bugs.Set{}), fsm.New(2, bugs.Set{})
	apply := func(g int, f *fsm.FSM, e fsm.Entry) {
		e.Index = f.Applied + 1
		m.OnApply(g, 0, e, f.Apply(e), true, f)
	}
	write := func(k string, ts hlc.TS) fsm.Entry {
		return fsm.Entry{Kind: fsm.KindWrite, Write: &fsm.Write{Key: k, Value: "v", TS: ts, Op: "o"}}
	}
	apply(1, src, write("k01", 100)) // outside the span
	apply(1, src, write("k07", 200))
	apply(1, src, write("k06", 300))
	apply(1, src, fsm.Entry{Kind: fsm.KindBarrier}) // changes nothing mapped
	putJob := func(j job.SplitJob) {
		req := simkv.Request{Put: &simkv.PutRequest{Key: []byte(job.Key(j.ID)), Value: j.Encode()}}
		m.metaApplied(req, simkv.Response{}, nil)
	}
	j := job.SplitJob{ID: 9, SourceRouteID: 2, SourceGroup: 1, TargetGroup: 2, SplitKey: "k05", Phase: job.Planned}
	putJob(j)
	j.Phase, j.SnapshotTS = job.Backfill, 300
	j.ResetBrackets(1)
	putJob(j)
	rows := []mvcc.Row{{Key: "k07", Version: mvcc.Version{TS: 200, Value: "v"}}}
	apply(2, tgt, fsm.Entry{Kind: fsm.KindImport, Import: &fsm.Import{Job: 9, Bracket: job.BracketID(1, keys.FamilyUser), Seq: 1, Rows: rows, Moving: moving}})

	if m.Steps() != 5 {
		t.Fatalf("%d events, want 5 (two writes, create, backfill, import)", m.Steps())
	}
	var b strings.Builder
	if err := m.WriteModule(&b, "MigTrace"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"---- MODULE MigTrace ----", "TraceKeys == 1..2\n", "TraceMaxTS == 2\n",
		`[act |-> "write", g |-> "S", rows |-> {<<2, 1>>}`,
		`[act |-> "write", g |-> "S", rows |-> {<<1, 2>>}`,
		`ph |-> "PLANNED"`,
		`ph |-> "BACKFILL", job |-> [snap |-> 2, fence |-> 0`,
		`[act |-> "import", g |-> "T", rows |-> {<<2, 1>>}, pass |-> 1`,
		`stgAdd |-> {<<2, 1>>}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("module lacks %q:\n%s", want, out)
		}
	}
}
