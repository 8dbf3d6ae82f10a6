package group

import (
	"testing"

	"shardsim/model/migrate/fsm"
)

// Entries kept in the slab are distinct and keep their contents while
// later entries fill the same and further chunks.
func TestEntrySlabKeepsEntriesApart(t *testing.T) {
	var s entrySlab
	var kept []*fsm.Entry
	for i := uint64(1); i <= 3*entryChunk+3; i++ {
		kept = append(kept, s.keep(fsm.Entry{Index: i, Term: i * 10, Kind: fsm.KindCeiling, Ceiling: i * 100}))
	}
	seen := map[*fsm.Entry]bool{}
	for i, e := range kept {
		want := uint64(i + 1)
		if seen[e] {
			t.Fatalf("entry %d shares storage with an earlier one", want)
		}
		seen[e] = true
		if e.Index != want || e.Term != want*10 || e.Ceiling != want*100 {
			t.Fatalf("entry %d holds %+v", want, *e)
		}
	}
}
