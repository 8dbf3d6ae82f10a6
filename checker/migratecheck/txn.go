package migratecheck

import (
	"fmt"
	"shardsim/property"
	"slices"
	"sort"
	"strings"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/simclock"
)

// TxnOutcome is what a transaction's client learned of it.
type TxnOutcome int

// Transaction outcomes.
const (
	TxnUnknown   TxnOutcome = iota // no definite answer (it may or may not have committed)
	TxnCommitted                   // the client was told it committed
	TxnAborted                     // the client was told it did not (rolled back, refused)
)

// TxnObs is one read-modify-write transaction as its client saw it: what
// it read (at ReadTS, before preparing), the keys it wrote, and how it
// ended.
type TxnObs struct {
	ID           string
	Call, Return simclock.Time // Return: when the outcome was learned
	ReadTS       hlc.TS
	Reads        []TxnRead
	Keys         []string
	Outcome      TxnOutcome
}

// TxnRead is one key a transaction read: the version it saw, if any.
type TxnRead struct {
	Key    string
	Chosen bool
	TS     hlc.TS
}

// CheckTxns checks M.TxnSerializable. It is an Elle-style dependency-graph
// check, not porcupine: the version order of every key is known exactly
// (the oracle's commit timestamps, taken from the state machines' applies),
// so the write-write, write-read and read-write dependencies of Adya's
// phenomena can be built directly, with real-time edges between
// transactions whose client saw one end before the other began; a cycle
// among them means no serial order explains what the clients saw. Porcupine
// would need a sequential model of the whole multi-key store and searches
// orders exponentially in concurrency; with the version order known, the
// check is linear plus a strongly-connected-components pass.
//
// First atomicity: a committed transaction's versions are all there, at one
// timestamp; an aborted one left none; an unknown one all or none. What it
// cannot see: transactions whose client gave up before learning anything
// and whose versions never appeared (they are no different from aborted
// ones), and reads made outside transactions (M.Linearizable and
// M.SnapshotReads judge those).
func CheckTxns(txns []TxnObs, oracle *VersionOracle) *property.Violation {
	g := newDepGraph()
	applied := make([]TxnObs, 0, len(txns))
	for _, t := range txns {
		ok, err := txnAtomic(t, oracle)
		if err != nil {
			return err
		}
		if ok {
			applied = append(applied, t)
		}
	}
	for _, t := range applied {
		g.txnEdges(t, oracle)
	}
	g.realTimeEdges(applied)
	if cyc := g.cycle(); cyc != "" {
		return property.Violated(property.MTxnSerializable, "the committed transactions' dependencies form a cycle: %s", cyc)
	}
	return nil
}

// txnAtomic checks t's versions against its outcome and reports whether it
// took effect.
func txnAtomic(t TxnObs, oracle *VersionOracle) (bool, *property.Violation) {
	ws := oracle.OpWrites(t.ID)
	var at hlc.TS
	wrote := 0 // distinct keys written, commit and rollback records aside
	for i, w := range ws {
		if txnRecord(w.Key) {
			continue
		}
		if !writesKey(ws[:i], w.Key) {
			wrote++
		}
		if at != 0 && w.TS != at {
			return false, property.Violated(property.MTxnSerializable, "transaction %s wrote at two timestamps, %s and %s", t.ID, at, w.TS)
		}
		at = w.TS
	}
	switch {
	case wrote == 0 && t.Outcome == TxnCommitted:
		return false, property.Violated(property.MTxnSerializable, "transaction %s was acknowledged as committed but none of its %d writes exists", t.ID, len(t.Keys))
	case wrote > 0 && t.Outcome == TxnAborted:
		return false, property.Violated(property.MTxnSerializable, "transaction %s was refused or rolled back but wrote %d keys", t.ID, wrote)
	case wrote == 0:
		return false, nil
	}
	for _, k := range t.Keys {
		if txnRecord(k) || !writesKey(ws, k) {
			return false, property.Violated(property.MTxnSerializable, "transaction %s wrote only part of its keys: %s is missing", t.ID, keys.Quote(k))
		}
	}
	return true, nil
}

// txnRecord reports whether key is a transaction's commit or rollback
// record (not one of the keys it writes).
func txnRecord(key string) bool {
	f := familyPrefix(key)
	return f == "!txn|cmt|" || f == "!txn|rb|"
}

// writesKey reports whether ws has a version of key (a transaction writes a
// handful of keys: a scan is cheaper than a set).
func writesKey(ws []AppliedWrite, key string) bool {
	for _, w := range ws {
		if w.Key == key {
			return true
		}
	}
	return false
}

// depGraph is a dependency graph over operation ids.
type depGraph struct {
	out map[string][]depEdge
}

type depEdge struct {
	to, kind string
}

func newDepGraph() *depGraph { return &depGraph{out: map[string][]depEdge{}} }

func (g *depGraph) edge(from, to, kind string) {
	if from == "" || to == "" || from == to {
		return
	}
	g.out[from] = append(g.out[from], depEdge{to, kind})
	if _, ok := g.out[to]; !ok {
		g.out[to] = nil
	}
}

// txnEdges adds t's dependencies: on the writer of each version it read
// (wr), to the writer of the next version of each key it read (rw), and on
// the writer of the version before each it wrote (ww).
func (g *depGraph) txnEdges(t TxnObs, oracle *VersionOracle) {
	// Each key's record is looked up once (writerAt is oracle.At on it).
	for _, r := range t.Reads {
		kr := oracle.keys[r.Key]
		var vs []mvcc.Version // newest first
		if kr != nil {
			vs = kr.vs
		}
		if r.Chosen {
			if w := kr.writerAt(r.TS); w != nil {
				g.edge(w.Op, t.ID, "wr")
			}
		}
		seen := r.TS
		if !r.Chosen {
			seen = t.ReadTS
		}
		for i := len(vs) - 1; i >= 0; i-- {
			if vs[i].TS > seen {
				if w := kr.writerAt(vs[i].TS); w != nil {
					g.edge(t.ID, w.Op, "rw")
				}
				break
			}
		}
	}
	for _, k := range t.Keys {
		kr := oracle.keys[k]
		if kr == nil {
			continue
		}
		vs := kr.vs
		for i, v := range vs {
			w := kr.writerAt(v.TS)
			if w == nil || w.Op != t.ID {
				continue
			}
			if i+1 < len(vs) {
				if p := kr.writerAt(vs[i+1].TS); p != nil {
					g.edge(p.Op, t.ID, "ww")
				}
			}
		}
	}
}

// realTimeEdges adds an "rt" edge from each committed transaction of
// applied to each committed one whose client called it after the first's
// returned, in applied's order. A transaction's real-time edges are most
// of its edges: its list of them gets its room once (counted first), not
// by append after append.
func (g *depGraph) realTimeEdges(applied []TxnObs) {
	for _, a := range applied {
		if a.Outcome != TxnCommitted {
			continue
		}
		// The count repeats edge's filter (no empty id, no self edge): room
		// made for a transaction that gets no edge would add it as a node
		// (TestRealTimeEdgesAgreesWithPairs fails without it).
		n := 0
		for _, b := range applied {
			if b.Outcome == TxnCommitted && a.Return < b.Call && a.ID != b.ID && a.ID != "" && b.ID != "" {
				n++
			}
		}
		if n > 0 {
			g.out[a.ID] = slices.Grow(g.out[a.ID], n)
		}
		for _, b := range applied {
			if b.Outcome == TxnCommitted && a.Return < b.Call {
				g.edge(a.ID, b.ID, "rt")
			}
		}
	}
}

// cycle returns one cycle of the graph, rendered, or "" (Tarjan's strongly
// connected components, over sorted nodes so the report is deterministic).
// Nodes are numbered in sorted order and the search keeps its marks in
// slices; it visits nodes and edges in the same order as over names.
func (g *depGraph) cycle() string {
	nodes := make([]string, 0, len(g.out))
	for n := range g.out {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	number := make(map[string]int, len(nodes))
	for i, n := range nodes {
		number[n] = i
	}
	adj := g.adjacency(nodes, number)
	index, low := make([]int, len(nodes)), make([]int, len(nodes))
	for i := range index {
		index[i] = -1
	}
	on := make([]bool, len(nodes))
	var stack []int
	next := 0
	var found []string
	var strong func(v int)
	strong = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for _, w := range adj[v] {
			if index[w] < 0 {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		top := len(stack)
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			on[w] = false
			if w == v {
				break
			}
		}
		// The component is what was popped, stack[len(stack):top] (still
		// in the array); its names are sorted, so their order is no matter.
		if scc := stack[len(stack):top]; len(scc) > 1 && found == nil {
			for _, w := range scc {
				found = append(found, nodes[w])
			}
			sort.Strings(found)
		}
	}
	for i := range nodes {
		if index[i] < 0 && found == nil {
			strong(i)
		}
	}
	return g.describe(found)
}

// adjacency returns each node's edge targets by number (nodes numbered as
// number says), in g.out's order: all of them in one backing array.
func (g *depGraph) adjacency(nodes []string, number map[string]int) [][]int {
	total := 0
	for _, n := range nodes {
		total += len(g.out[n])
	}
	flat := make([]int, 0, total)
	adj := make([][]int, len(nodes))
	for i, n := range nodes {
		start := len(flat)
		for _, e := range g.out[n] {
			flat = append(flat, number[e.to]) // every target is a node (edge adds it)
		}
		adj[i] = flat[start:len(flat):len(flat)]
	}
	return adj
}

// describe lists the edges among the nodes of cycle (a strongly connected
// component, sorted), or "" for none: the report of M.TxnSerializable.
func (g *depGraph) describe(cycle []string) string {
	if cycle == nil {
		return ""
	}
	in := map[string]bool{}
	for _, n := range cycle {
		in[n] = true
	}
	var parts []string
	for _, n := range cycle {
		for _, e := range g.out[n] {
			if in[e.to] {
				parts = append(parts, fmt.Sprintf("%s -%s-> %s", n, e.kind, e.to))
			}
		}
	}
	return strings.Join(parts, ", ")
}
