package corpus

import (
	"path/filepath"
	"strings"
	"testing"

	"shardsim/scenarios"
	"shardsim/simclock"
)

func TestExcerptPathIsUnderTestdata(t *testing.T) {
	got := ExcerptPath(filepath.Join("..", "..", "corpus", "kv", "clean-seed7.json"))
	if want := filepath.Join("..", "..", "corpus", "testdata", "kv", "clean-seed7.trace"); got != want {
		t.Fatalf("ExcerptPath = %s, want %s", got, want)
	}
	if got := ExcerptPath(filepath.Join("kv", "x.json")); got != filepath.Join("testdata", "kv", "x.trace") {
		t.Fatalf("relative ExcerptPath = %s", got)
	}
}

func TestExcerptDiffNamesTheFirstDifference(t *testing.T) {
	if d := ExcerptDiff("a\nb\n", "a\nb\n"); d != "" {
		t.Fatalf("equal excerpts differ: %s", d)
	}
	d := ExcerptDiff("a\nb\nc\n", "a\nB\nc\nd\n")
	for _, want := range []string{"2 excerpt lines differ", "line 2", "-b", "+B"} {
		if !strings.Contains(d, want) {
			t.Fatalf("diff %q lacks %q", d, want)
		}
	}
}

// A run that moves shows in the excerpt: its kinds, its windows and its
// records; a long record is clipped but still fingerprinted in full.
func TestExcerptShowsWhatMoved(t *testing.T) {
	seed := uint64(1)
	e := Entry{Scenario: "kv", Seed: &seed}
	mk := func(last string) []simclock.Record {
		var rs []simclock.Record
		for i := 1; i <= 300; i++ {
			rs = append(rs, simclock.Record{Seq: uint64(i), At: simclock.Time(i), Kind: "k", Detail: "x"})
		}
		rs[299].Detail = strings.Repeat("y", 2*excerptLineMax) + last
		return rs
	}
	a, b := Excerpt(e, scenarios.Result{}, mk("1")), Excerpt(e, scenarios.Result{}, mk("2"))
	if a == b {
		t.Fatal("a change past the clipped part of a line does not show")
	}
	d := ExcerptDiff(a, b)
	if !strings.Contains(d, "1 excerpt lines differ") || !strings.Contains(d, "257-300") {
		t.Fatalf("only the last window's fingerprint should move: %s", d)
	}
	if !strings.Contains(a, "…(+") || !strings.Contains(a, "records  300") || !strings.Contains(a, "records per kind\n  k ") {
		t.Fatalf("excerpt lacks the clip marker, the count or the kind line:\n%s", a)
	}
}
