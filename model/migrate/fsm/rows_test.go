package fsm

import (
	"fmt"
	"testing"

	"shardsim/model/bugs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/mvcc"
)

// The one-row Puts of writes are carved from shared chunks: each must stay
// what its write made whatever the voter (or a clone of it) applies later
// and whatever a holder appends to another one.
func TestWritePutsNeverAlias(t *testing.T) {
	a := newApplier(bugs.None)
	var results []Result
	var clones []applier
	for i := 0; i < 3*rowSlabChunk; i++ {
		results = append(results, a.apply(write(fmt.Sprintf("k%03d", i), hlc.TS(10+i))))
		if i%50 == 7 {
			// A clone starts with its own chunk: its writes must not land
			// in rows the original hands out (or has handed out).
			c := applier{a.f.Clone()}
			clones = append(clones, c)
			results = append(results, c.apply(write("clone", hlc.TS(100000+i))))
		}
		// A holder appending to its Puts must not reach the next one.
		last := results[len(results)-1]
		_ = append(last.Puts, mvcc.Row{Key: "appended"})
	}
	for _, c := range clones {
		for i := 0; i < rowSlabChunk; i++ {
			c.apply(write(fmt.Sprintf("c%03d", i), hlc.TS(200000+i)))
		}
	}
	for i := 0; i < 3*rowSlabChunk; i++ {
		a.apply(write(fmt.Sprintf("z%03d", i), hlc.TS(300000+i)))
	}
	n := 0
	for _, r := range results {
		if len(r.Puts) != 1 || cap(r.Puts) != 1 {
			t.Fatalf("puts %v (cap %d), want one row of capacity one", r.Puts, cap(r.Puts))
		}
		p := r.Puts[0]
		if p.Key == "clone" {
			if p.TS < 100000 {
				t.Fatalf("clone's row changed: %+v", p)
			}
			continue
		}
		if want := fmt.Sprintf("k%03d", n); p.Key != want || p.TS != hlc.TS(10+n) || p.Value != "v@"+hlc.TS(10+n).String() {
			t.Fatalf("row %d is %+v, want %s@%d", n, p, want, 10+n)
		}
		n++
	}
}
