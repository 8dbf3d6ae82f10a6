package migratecheck

import (
	"cmp"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/property"
	"shardsim/simclock"
)

// cycle (numbered nodes, marks in slices) reports exactly what the search
// over names reported, on random graphs with and without cycles, edges of
// several kinds, repeated edges and self-loops refused by edge.
func TestCycleAgreesWithByName(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	cyclic := 0
	for i := 0; i < 3000; i++ {
		g := newDepGraph()
		n := 1 + r.Intn(8)
		for e := r.Intn(3 * n); e > 0; e-- {
			from, to := fmt.Sprint("t", r.Intn(n)), fmt.Sprint("t", r.Intn(n))
			if r.Intn(3) > 0 && from > to { // mostly forward: many graphs stay acyclic
				from, to = to, from
			}
			g.edge(from, to, []string{"wr", "rw", "ww", "rt"}[r.Intn(4)])
		}
		got, want := g.cycle(), g.cycleByName()
		if got != want {
			t.Fatalf("graph %v: cycle %q, by name %q", g.out, got, want)
		}
		if got != "" {
			cyclic++
		}
	}
	if cyclic < 300 || cyclic > 2700 {
		t.Fatalf("%d of 3000 graphs had a cycle: the graphs judge too little of one kind", cyclic)
	}
}

// cycleByName is cycle as it was written over node names with maps: the
// reference its numbered search must agree with.
func (g *depGraph) cycleByName() string {
	nodes := make([]string, 0, len(g.out))
	for n := range g.out {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	index := map[string]int{}
	low := map[string]int{}
	on := map[string]bool{}
	var stack []string
	next := 0
	var found []string
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for _, e := range g.out[v] {
			if _, seen := index[e.to]; !seen {
				strong(e.to)
				low[v] = min(low[v], low[e.to])
			} else if on[e.to] {
				low[v] = min(low[v], index[e.to])
			}
		}
		if low[v] != index[v] {
			return
		}
		var scc []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			on[w] = false
			scc = append(scc, w)
			if w == v {
				break
			}
		}
		if len(scc) > 1 && found == nil {
			sort.Strings(scc)
			found = scc
		}
	}
	for _, n := range nodes {
		if _, seen := index[n]; !seen && found == nil {
			strong(n)
		}
	}
	return g.describe(found)
}

// txnAtomicByMap is txnAtomic as it was written with a set of the keys
// written: the reference the scans must agree with.
func txnAtomicByMap(t TxnObs, oracle *VersionOracle) (bool, *property.Violation) {
	got := map[string]hlc.TS{}
	var at hlc.TS
	for _, w := range oracle.OpWrites(t.ID) {
		if f := familyPrefix(w.Key); f == "!txn|cmt|" || f == "!txn|rb|" {
			continue
		}
		got[w.Key] = w.TS
		if at != 0 && w.TS != at {
			return false, property.Violated(property.MTxnSerializable, "transaction %s wrote at two timestamps, %s and %s", t.ID, at, w.TS)
		}
		at = w.TS
	}
	switch {
	case len(got) == 0 && t.Outcome == TxnCommitted:
		return false, property.Violated(property.MTxnSerializable, "transaction %s was acknowledged as committed but none of its %d writes exists", t.ID, len(t.Keys))
	case len(got) > 0 && t.Outcome == TxnAborted:
		return false, property.Violated(property.MTxnSerializable, "transaction %s was refused or rolled back but wrote %d keys", t.ID, len(got))
	case len(got) == 0:
		return false, nil
	}
	for _, k := range t.Keys {
		if _, ok := got[k]; !ok {
			return false, property.Violated(property.MTxnSerializable, "transaction %s wrote only part of its keys: %s is missing", t.ID, keys.Quote(k))
		}
	}
	return true, nil
}

// txnAtomic gives exactly the answer and message of the map version on
// random transactions: keys written twice, commit and rollback records,
// two timestamps, nothing written, keys missing, every outcome.
func TestTxnAtomicAgreesWithMap(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	pool := []string{"a", "b", "c", "!txn|cmt|t", "!txn|rb|t"}
	answers := map[string]int{}
	for i := 0; i < 5000; i++ {
		o := NewVersionOracle()
		for w := r.Intn(5); w > 0; w-- {
			o.Add(AppliedWrite{Op: "t", Key: pool[r.Intn(len(pool))], Version: mvcc.Version{TS: hlc.TS(10 + r.Intn(2)*r.Intn(2))}})
		}
		tx := TxnObs{ID: "t", Outcome: TxnOutcome(r.Intn(3))}
		for k := r.Intn(4); k > 0; k-- {
			tx.Keys = append(tx.Keys, pool[r.Intn(len(pool))])
		}
		ok, v := txnAtomic(tx, o)
		wok, wv := txnAtomicByMap(tx, o)
		if ok != wok || (v == nil) != (wv == nil) || v != nil && *v != *wv {
			t.Fatalf("txn %+v over %v: %v %v, by map %v %v", tx, o.OpWrites("t"), ok, v, wok, wv)
		}
		switch {
		case v != nil:
			answers[strings.Fields(v.Detail)[2]]++
		default:
			answers[fmt.Sprint(ok)]++
		}
	}
	t.Logf("answers %v", answers)
	for _, a := range []string{"true", "false", "wrote", "was"} {
		if answers[a] < 100 {
			t.Fatalf("too few answers %q: %v", a, answers)
		}
	}
}

// txnEdgesByLookup is txnEdges as it was written before it looked each
// key's record up once: every version's writer looked up one by one. It
// finds versions and writers by plain scans of the writes added
// (versionsByScan, writerByScan), not through the oracle, so that it
// shares neither writerAt nor the oracle's version lists with the code
// under test.
func txnEdgesByLookup(g *depGraph, t TxnObs, added []AppliedWrite) {
	for _, r := range t.Reads {
		vs := versionsByScan(added, r.Key)
		if r.Chosen {
			if w, ok := writerByScan(added, r.Key, r.TS); ok {
				g.edge(w.Op, t.ID, "wr")
			}
		}
		seen := r.TS
		if !r.Chosen {
			seen = t.ReadTS
		}
		for i := len(vs) - 1; i >= 0; i-- {
			if vs[i].TS > seen {
				if w, ok := writerByScan(added, r.Key, vs[i].TS); ok {
					g.edge(t.ID, w.Op, "rw")
				}
				break
			}
		}
	}
	for _, k := range t.Keys {
		vs := versionsByScan(added, k)
		for i, v := range vs {
			w, ok := writerByScan(added, k, v.TS)
			if !ok || w.Op != t.ID {
				continue
			}
			if i+1 < len(vs) {
				if p, ok := writerByScan(added, k, vs[i+1].TS); ok {
					g.edge(p.Op, t.ID, "ww")
				}
			}
		}
	}
}

// versionsByScan returns key's versions among added as the oracle promises
// them: newest first, and among versions at one timestamp the later added
// first.
func versionsByScan(added []AppliedWrite, key string) []mvcc.Version {
	var vs []mvcc.Version
	for i := len(added) - 1; i >= 0; i-- {
		if added[i].Key == key {
			vs = append(vs, added[i].Version)
		}
	}
	slices.SortStableFunc(vs, func(a, b mvcc.Version) int { return cmp.Compare(b.TS, a.TS) })
	return vs
}

// writerByScan returns the write of added that created key's version at
// ts, the last one added if several did (what VersionOracle.At promises).
func writerByScan(added []AppliedWrite, key string, ts hlc.TS) (AppliedWrite, bool) {
	for i := len(added) - 1; i >= 0; i-- {
		if w := added[i]; w.Key == key && w.Version.TS == ts {
			return w, true
		}
	}
	return AppliedWrite{}, false
}

// txnEdges adds exactly the edges the lookup-per-version version adds, in
// the same order, on random oracles (several writers at one timestamp,
// keys no write created) and transactions reading chosen, unchosen and
// unknown versions.
func TestTxnEdgesAgreesWithLookups(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	edges := 0
	for i := 0; i < 3000; i++ {
		o := NewVersionOracle()
		var added []AppliedWrite
		for n := r.Intn(12); n > 0; n-- {
			w := AppliedWrite{Op: fmt.Sprint("t", r.Intn(5)), Key: fmt.Sprint("k", r.Intn(3)), Version: mvcc.Version{TS: hlc.TS(1 + r.Intn(6))}}
			o.Add(w)
			added = append(added, w)
		}
		tx := TxnObs{ID: fmt.Sprint("t", r.Intn(5)), ReadTS: hlc.TS(r.Intn(8))}
		for n := r.Intn(4); n > 0; n-- {
			tx.Reads = append(tx.Reads, TxnRead{Key: fmt.Sprint("k", r.Intn(4)), Chosen: r.Intn(2) == 0, TS: hlc.TS(r.Intn(8))})
		}
		for n := r.Intn(4); n > 0; n-- {
			tx.Keys = append(tx.Keys, fmt.Sprint("k", r.Intn(4)))
		}
		got, want := newDepGraph(), newDepGraph()
		got.txnEdges(tx, o)
		txnEdgesByLookup(want, tx, added)
		edges += sameEdges(t, got, want, "txn", tx)
	}
	if edges < 1000 {
		t.Fatalf("only %d edges in all: the cases test little", edges)
	}
}

// realTimeEdges adds exactly the edges, in the same order, that the
// double loop over all pairs of transactions added through edge, on random
// lists of transactions (outcomes mixed, equal and empty ids, calls and
// returns that tie), with edges already in the graph.
func TestRealTimeEdgesAgreesWithPairs(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	edges := 0
	for i := 0; i < 3000; i++ {
		var txns []TxnObs
		for n := r.Intn(10); n > 0; n-- {
			id, call := fmt.Sprint("t", r.Intn(6)), simclock.Time(r.Intn(10))
			if r.Intn(10) == 0 {
				id = ""
			}
			txns = append(txns, TxnObs{ID: id, Call: call, Return: call + simclock.Time(r.Intn(4)), Outcome: TxnOutcome(r.Intn(3))})
		}
		got, want := newDepGraph(), newDepGraph()
		for _, g := range []*depGraph{got, want} {
			g.edge("t1", "t2", "wr")
			g.edge("t3", "t1", "rw")
		}
		got.realTimeEdges(txns)
		for _, a := range txns {
			for _, b := range txns {
				if a.Outcome == TxnCommitted && b.Outcome == TxnCommitted && a.Return < b.Call {
					want.edge(a.ID, b.ID, "rt")
				}
			}
		}
		edges += sameEdges(t, got, want, "txns", txns)
	}
	if edges < 5000 {
		t.Fatalf("only %d edges in all: the cases test little", edges)
	}
}

// sameEdges fails the test unless got and want hold the same edges in the
// same order (the message names the input: what, in), and returns how
// many want holds.
func sameEdges(t *testing.T, got, want *depGraph, what string, in any) int {
	t.Helper()
	if fmt.Sprint(got.out) != fmt.Sprint(want.out) {
		t.Fatalf("%s %+v: edges %v, want %v", what, in, got.out, want.out)
	}
	n := 0
	for _, es := range want.out {
		n += len(es)
	}
	return n
}
