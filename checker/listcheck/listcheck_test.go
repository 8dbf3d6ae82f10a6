package listcheck

import (
	"encoding/binary"
	"sort"
	"strings"
	"testing"
	"time"

	"shardsim/property"
	"shardsim/simclock"
)

// rows is a hand-built Snapshot: raw key -> value.
type rows map[string]string

func (r rows) Visible(start, end string) []Row {
	var out []Row
	for k, v := range r {
		if k >= start && (end == "" || k < end) {
			out = append(out, Row{Key: k, Value: v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func metaValue(head, n int64) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(head))
	binary.BigEndian.PutUint64(b[8:], uint64(n))
	return string(b[:])
}

func pos(p int64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(p)^1<<63)
	return string(b[:])
}

func deltaSuffix(ts uint64, seq uint32) string {
	var b [12]byte
	binary.BigEndian.PutUint64(b[:8], ts)
	binary.BigEndian.PutUint32(b[8:], seq)
	return string(b[:])
}

// aList lays out list k holding vals from position head, with a base row
// and one delta, as seed 001's final layout says.
func aList(k string, head int64, vals ...string) rows {
	r := rows{
		lenPrefixed("!lst|meta|", k):                       metaValue(head, 1),
		lenPrefixed("!lst|meta|d|", k) + deltaSuffix(9, 0): metaValue(0, int64(len(vals))-1),
	}
	for i, v := range vals {
		r[lenPrefixed("!lst|itm|", k)+pos(head+int64(i))] = v
	}
	return r
}

func at(ms int) simclock.Time { return simclock.Time(time.Duration(ms) * time.Millisecond) }

func wantProp(t *testing.T, v *property.Violation, p property.Name) {
	t.Helper()
	if v == nil {
		t.Fatalf("no violation, want %s", p)
	}
	if v.Property != p {
		t.Fatalf("violation of %s (%s), want %s", v.Property, v.Detail, p)
	}
}

func TestMetaConsistent(t *testing.T) {
	tr := NewTruth()
	tr.Register("t1", "op1", "q", []Cmd{{Op: "RPUSH", Vals: []string{"a", "b", "c"}}})
	if v := tr.Committed("t1", at(1)); v != nil {
		t.Fatal(v)
	}
	good := aList("q", -2, "a", "b", "c")
	// Another list whose key extends q's (binary keys) must not count.
	for k, v := range aList("q\x00r", 0, "x") {
		good[k] = v
	}
	if v := tr.CheckList(good, "q"); v != nil {
		t.Fatalf("consistent rows: %v", v)
	}
	cases := map[string]func(rows){
		"a delta lost":           func(r rows) { delete(r, lenPrefixed("!lst|meta|d|", "q")+deltaSuffix(9, 0)) },
		"an item missing":        func(r rows) { delete(r, lenPrefixed("!lst|itm|", "q")+pos(-1)) },
		"an item replaced":       func(r rows) { r[lenPrefixed("!lst|itm|", "q")+pos(0)] = "z" },
		"a position claimed":     func(r rows) { r[lenPrefixed("!lst|claim|", "q")+pos(-2)] = "x" },
		"a delta counted twice":  func(r rows) { r[lenPrefixed("!lst|meta|d|", "q")+deltaSuffix(10, 0)] = metaValue(0, 1) },
		"the base row gone":      func(r rows) { delete(r, lenPrefixed("!lst|meta|", "q")) },
		"an undecodable delta":   func(r rows) { r[lenPrefixed("!lst|meta|d|", "q")+deltaSuffix(11, 0)] = "junk" },
		"a NUL-separated delta":  func(r rows) { r["!lst|meta|d|q\x00"+deltaSuffix(12, 0)] = metaValue(0, 1) },
		"the head off by one":    func(r rows) { r[lenPrefixed("!lst|meta|", "q")] = metaValue(-1, 1) },
		"the other list's delta": func(r rows) { r[lenPrefixed("!lst|meta|d|", "q")+deltaSuffix(13, 1)] = metaValue(0, 0) },
	}
	for name, spoil := range cases {
		r := rows{}
		for k, v := range good {
			r[k] = v
		}
		spoil(r)
		v := tr.CheckList(r, "q")
		if name == "the other list's delta" {
			if v != nil {
				t.Errorf("%s: %v", name, v)
			}
			continue
		}
		if v == nil || v.Property != property.LMetaConsistent {
			t.Errorf("%s: %v", name, v)
		}
	}
	// A pop the truth cannot run means the store judged the list otherwise.
	tr.Register("t2", "op2", "e", []Cmd{{Op: "LPOP"}})
	wantProp(t, tr.Committed("t2", at(2)), property.LMetaConsistent)
	// Inside a MULTI/EXEC it answers nil and changes nothing (Redis).
	tr.Register("t3", "op3", "e", []Cmd{{Op: "LPOP"}, {Op: "RPUSH", Vals: []string{"v"}}})
	if v := tr.Committed("t3", at(3)); v != nil || len(tr.List("e")) != 1 {
		t.Fatalf("MULTI/EXEC popping an empty list: %v, list %v", v, tr.List("e"))
	}
}

func TestCountConsistent(t *testing.T) {
	r := rows{
		lenPrefixed("!hs|meta|", "h"):                       metaValue(0, 1),
		lenPrefixed("!hs|meta|d|", "h") + deltaSuffix(3, 0): metaValue(0, 1),
		lenPrefixed("!hs|fld|", "h") + "f1":                 "1",
		lenPrefixed("!hs|fld|", "h") + "f2":                 "2",
		lenPrefixed("!hs|fld|", "h\x00x") + "f3":            "3",
	}
	if v := CheckCount(r, "hash", "h"); v != nil {
		t.Fatal(v)
	}
	delete(r, lenPrefixed("!hs|fld|", "h")+"f2")
	wantProp(t, CheckCount(r, "hash", "h"), property.LCountConsistent)
	if v := CheckCount(rows{}, "set", "s"); v != nil {
		t.Fatal(v)
	}
	wantProp(t, CheckCount(rows{lenPrefixed("!zs|meta|d|", "z") + deltaSuffix(1, 0): metaValue(0, -1)}, "zset", "z"), property.LCountConsistent)
}

func push(id string, client int, call, ret int, vals ...string) Op {
	return Op{ID: id, Client: client, List: "q", Cmds: []Cmd{{Op: "RPUSH", Vals: vals}}, Call: at(call), Return: at(ret),
		Answers: []Answer{{N: int64(len(vals))}}}
}

func pop(id string, client int, call, ret int, val string, outcome Outcome) Op {
	return Op{ID: id, Client: client, List: "q", Cmds: []Cmd{{Op: "LPOP"}}, Call: at(call), Return: at(ret), Outcome: outcome,
		Answers: []Answer{{Val: val, OK: val != ""}}}
}

func TestNoDoublePop(t *testing.T) {
	ops := []Op{push("p", 0, 0, 1, "a", "b"), pop("x", 1, 2, 3, "a", Done), pop("y", 2, 2, 3, "b", Done)}
	if v := CheckNoDoublePop(ops); v != nil {
		t.Fatal(v)
	}
	ops[2] = pop("y", 2, 2, 3, "a", Done)
	wantProp(t, CheckNoDoublePop(ops), property.LNoDoublePop)
	// A pop whose answer was lost returned nothing anyone saw.
	ops[2] = pop("y", 2, 2, 3, "a", Unknown)
	if v := CheckNoDoublePop(ops); v != nil {
		t.Fatal(v)
	}
}

func TestNoLostItem(t *testing.T) {
	tr := NewTruth()
	tr.Register("tp", "p", "q", []Cmd{{Op: "RPUSH", Vals: []string{"a", "b", "c"}}})
	tr.Register("tx", "x", "q", []Cmd{{Op: "LPOP"}})
	tr.Register("ty", "y", "q", []Cmd{{Op: "LPOP"}})
	for _, txn := range []string{"tp", "tx", "ty"} {
		if v := tr.Committed(txn, at(1)); v != nil {
			t.Fatal(v)
		}
	}
	final := map[string][]string{"q": {"c"}}
	ops := []Op{push("p", 0, 0, 1, "a", "b", "c"), pop("x", 1, 2, 3, "a", Done), pop("y", 2, 2, 3, "b", Unknown)}
	if v := CheckNoLostItem(ops, tr, final); v != nil {
		t.Fatalf("b left with a pop whose answer was lost: %v", v)
	}
	// The second pop answered "a" (a double pop): b left with no one told.
	ops[2] = pop("y", 2, 2, 3, "a", Done)
	wantProp(t, CheckNoLostItem(ops, tr, final), property.LNoLostItem)
	// c vanished from the rows though no command removed it.
	ops[2] = pop("y", 2, 2, 3, "b", Done)
	wantProp(t, CheckNoLostItem(ops, tr, map[string][]string{"q": nil}), property.LNoLostItem)
	// An acknowledged push that never committed.
	ops = append(ops, push("w", 3, 4, 5, "d"))
	wantProp(t, CheckNoLostItem(ops, tr, final), property.LNoLostItem)
}

func TestLinearizable(t *testing.T) {
	tr := NewTruth()
	ops := []Op{push("p", 0, 0, 10, "a", "b"), pop("x", 1, 20, 30, "a", Done),
		{ID: "r", Client: 2, List: "q", Cmds: []Cmd{{Op: "LRANGE"}, {Op: "LLEN"}}, Call: at(40), Return: at(50), Answers: []Answer{{Items: []string{"b"}}, {N: 1}}}}
	if v, viol, n := CheckLinearizable(ops, tr, 5*time.Second); v != property.VerdictOK || n != 3 {
		t.Fatalf("%s %v %d", v, viol, n)
	}
	// A pop of an item pushed after it returned.
	bad := append(ops, pop("y", 1, 60, 70, "c", Done), push("late", 0, 80, 90, "c"))
	v, viol, _ := CheckLinearizable(bad, tr, 5*time.Second)
	if v != property.VerdictViolation {
		t.Fatalf("%s", v)
	}
	wantProp(t, viol, property.LLinearizable)
	// A pop whose answer was lost counts when the truth saw it commit, and
	// then takes any answer; the read after it must see it gone.
	tr.Register("tz", "z", "q", []Cmd{{Op: "LPOP"}})
	_ = tr.Committed("tz", at(55)) // this truth never saw the pushes; only the commit time matters here
	amb := append(ops, pop("z", 3, 52, 0, "", Unknown),
		Op{ID: "r2", Client: 2, List: "q", Cmds: []Cmd{{Op: "LLEN"}}, Call: at(60), Return: at(61), Answers: []Answer{{N: 1}}})
	if v, viol, _ := CheckLinearizable(amb, tr, 5*time.Second); v != property.VerdictViolation {
		t.Fatalf("a read that missed a committed pop passed: %s %v", v, viol)
	}
	amb[len(amb)-1].Answers = []Answer{{N: 0}}
	if v, viol, _ := CheckLinearizable(amb, tr, 5*time.Second); v != property.VerdictOK {
		t.Fatalf("%s %v", v, viol)
	}
}

// When two orders of a history get equally far (two concurrent one-item
// pushes both answered with length 1: either can come first, not both),
// the report is the same every time: porcupine lists its partial
// linearizations in map order, and the detail reaches the trace's digest
// (it once made lists runs with listdelta.push-one-end differ from run to
// run).
func TestLinearizableReportIsTheSameWhateverOrderPorcupineListsTies(t *testing.T) {
	ops := []Op{push("p", 0, 0, 10, "a"), push("q", 1, 0, 10, "b")}
	first := ""
	for i := 0; i < 40; i++ {
		v, viol, _ := CheckLinearizable(ops, NewTruth(), 5*time.Second)
		if v != property.VerdictViolation || viol == nil {
			t.Fatalf("verdict %s, want a violation", v)
		}
		if i == 0 {
			first = viol.Detail
		} else if viol.Detail != first {
			t.Fatalf("check %d reported\n%s\nafter\n%s", i, viol.Detail, first)
		}
	}
	if !strings.Contains(first, "fits nowhere") {
		t.Fatalf("the report names no operation: %s", first)
	}
}
