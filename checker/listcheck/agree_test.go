package listcheck_test

import (
	"fmt"
	"sort"
	"testing"

	"shardsim/checker/listcheck"
	"shardsim/model/bugs"
	"shardsim/model/listdelta"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/mvcc"
	"shardsim/simclock"
)

// snapshot reads a Local backend's rows as the checker's Snapshot.
type snapshot struct{ be *listdelta.Local }

func (s snapshot) Visible(start, end string) []listcheck.Row {
	var out []listcheck.Row
	s.be.F.Store.Ascend(start, end, func(k string, vs []mvcc.Version) bool {
		if vs[0].VisibleAt(hlc.TS(1 << 62)) {
			out = append(out, listcheck.Row{Key: k, Value: vs[0].Value})
		}
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// The checker's own reading of the rows agrees with what model/listdelta
// writes, through pushes, pops at both ends, LSET, compaction, a
// MULTI/EXEC and DEL, on two lists whose keys share a prefix up to a NUL;
// with the NUL-separated layout it does not.
func TestCheckerAgreesWithTheProtocol(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		set := bugs.None
		if buggy {
			set = bugs.MustParse(bugs.ListdeltaNulSeparator)
		}
		be := listdelta.NewLocal(set)
		s := listdelta.NewStore(be, listdelta.DefaultConfig(), set, "s")
		tr := listcheck.NewTruth()
		var last string
		s.OnAttempt = func(txn string) { last = txn }
		n := 0
		var first error
		do := func(list string, cmds []listcheck.Cmd, f func() error) {
			n++
			last = ""
			if err := f(); err != nil {
				if !buggy {
					t.Fatalf("command %d: %v", n, err)
				}
				return
			}
			if last == "" {
				return
			}
			tr.Register(last, fmt.Sprint(n), list, cmds)
			if v := tr.Committed(last, simclock.Time(n)); v != nil && first == nil {
				first = fmt.Errorf("%s", v.Detail)
			}
			for _, l := range []string{"q", "q\x00r"} {
				if v := tr.CheckList(snapshot{be}, l); v != nil && first == nil {
					first = fmt.Errorf("%s", v.Detail)
				}
			}
		}
		cmd := func(op string, vals ...string) []listcheck.Cmd { return []listcheck.Cmd{{Op: op, Vals: vals}} }
		do("q", cmd("RPUSH", "a", "b", "c"), func() error { _, err := s.RPush("q", "a", "b", "c"); return err })
		do("q\x00r", cmd("LPUSH", "x", "y"), func() error { _, err := s.LPush("q\x00r", "x", "y"); return err })
		do("q", cmd("LPOP"), func() error { _, _, err := s.LPop("q"); return err })
		do("q", cmd("RPOP"), func() error { _, _, err := s.RPop("q"); return err })
		do("q", []listcheck.Cmd{{Op: "LSET", Index: 0, Vals: []string{"B"}}}, func() error { return s.LSet("q", 0, "B") })
		do("q", nil, func() error { _, err := s.Compact(listdelta.List, "q"); return err })
		do("q\x00r", cmd("RPUSH", "z"), func() error { _, err := s.RPush("q\x00r", "z"); return err })
		do("q", []listcheck.Cmd{{Op: "RPUSH", Vals: []string{"d"}}, {Op: "LPOP"}}, func() error {
			_, err := s.Exec("q", []listdelta.Cmd{{Op: "RPUSH", Vals: []string{"d"}}, {Op: "LPOP"}})
			return err
		})
		do("q\x00r", nil, func() error { _, err := s.Compact(listdelta.List, "q\x00r"); return err })
		do("q\x00r", cmd("DEL"), func() error { _, err := s.Del("q\x00r"); return err })
		do("q\x00r", cmd("RPUSH", "w"), func() error { _, err := s.RPush("q\x00r", "w"); return err })
		if (first != nil) != buggy {
			t.Errorf("buggy=%v: %v", buggy, first)
		}
	}
}
