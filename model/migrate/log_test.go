package migrate

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
)

// The mig.phase and mig.copy records' text is byte for byte what fmt
// wrote before the lines were built by appending: a digest covers it.
func TestMigratorLogLinesMatchFmt(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		id := rapid.Uint64().Draw(t, "id")
		from, to := job.Phase(rapid.IntRange(0, 12).Draw(t, "from")), job.Phase(rapid.IntRange(0, 12).Draw(t, "to"))
		want := fmt.Sprintf("j%d %s->%s", id, from, to)
		if got := string(appendPhaseLine(nil, id, from, to, nil)); got != want {
			t.Fatalf("appendPhaseLine = %q, want %q", got, want)
		}
		cat := catalog.Catalog{Version: 3, Routes: []catalog.Route{{ID: 1, End: "k", Group: 0}, {ID: 2, Start: "k", Group: 1, State: catalog.WriteFenced}}}
		if got, want := string(appendPhaseLine(nil, id, from, to, &cat)), want+` catalog=v3{r1[,k)@g0 r2[k,+inf)@g1 WriteFenced}`; got != want {
			t.Fatalf("appendPhaseLine = %q, want %q", got, want)
		}
		pass, fam := uint8(rapid.IntRange(0, 255).Draw(t, "pass")), keys.Family(rapid.IntRange(0, 12).Draw(t, "family"))
		seq, rows, scanned, done := rapid.Uint64().Draw(t, "seq"), rapid.IntRange(0, 1<<20).Draw(t, "rows"), rapid.Int().Draw(t, "scanned"), rapid.Bool().Draw(t, "done")
		want = fmt.Sprintf("j%d pass=%d %s seq=%d rows=%d scanned=%d done=%v", id, pass, fam, seq, rows, scanned, done)
		if got := string(appendCopyLine(nil, id, pass, fam, seq, rows, scanned, done)); got != want {
			t.Fatalf("appendCopyLine = %q, want %q", got, want)
		}
	})
}
