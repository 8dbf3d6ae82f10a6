package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shardsim/corpus"
)

// A default sweep writes nothing where it was started: failing runs go to
// a new directory under the OS temp dir, which the summary names.
func TestDefaultSweepSavesOnlyUnderTheTempDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	work := t.TempDir()
	t.Chdir(work)
	code, out, stderr := simrun(t, "sweep", "-scenario", "kv", "-seeds", "1-8", "-bug", "kv.phantom-ack", "-json")
	sum := decodeOne[sweepSummary](t, out)
	if code != 1 || sum.Violations == 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Fatalf("the sweep wrote %d files where it was started", len(entries))
	}
	if !strings.HasPrefix(sum.CorpusDir, tmp) || len(sum.Saved) == 0 || !strings.Contains(stderr, "saved    ") || !strings.Contains(stderr, sum.CorpusDir) {
		t.Fatalf("saved %v under %q (TMPDIR %s); summary:\n%s", sum.Saved, sum.CorpusDir, tmp, stderr)
	}
	for _, p := range sum.Saved {
		if _, err := corpus.Load(p); err != nil {
			t.Fatal(err)
		}
	}
	// A clean sweep saves nothing and makes no directory.
	if code, _, _ := simrun(t, "sweep", "-scenario", "kv", "-seeds", "1-4"); code != 0 {
		t.Fatalf("clean sweep: exit %d", code)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
		t.Fatalf("%d directories under TMPDIR, want the one of the failing sweep", len(entries))
	}
}

// -corpus DIR never overwrites an entry, and the cap says how many
// failing runs it did not save.
func TestSweepNeverOverwritesAndCountsWhatItDropped(t *testing.T) {
	args := []string{"sweep", "-scenario", "kv", "-seeds", "1-12", "-bug", "kv.phantom-ack", "-json"}
	_, out, _ := simrun(t, append(args, "-no-save")...)
	found := decodeOne[sweepSummary](t, out)
	if found.Violations < 4 {
		t.Fatalf("want at least 4 failing seeds in 1-12, got %v", found.FailingSeeds)
	}
	dir := t.TempDir()
	seed := found.FailingSeeds[0]
	first := filepath.Join(dir, "kv", "kv.phantom-ack-KV.Linearizable-seed"+itoa(int(seed))+".json")
	if err := os.MkdirAll(filepath.Dir(first), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(first, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := simrun(t, append(args, "-corpus", dir, "-max-saved", "2")...)
	sum := decodeOne[sweepSummary](t, out)
	if code != 1 || sum.Violations != found.Violations {
		t.Fatalf("exit %d, %d violations", code, sum.Violations)
	}
	if data, _ := os.ReadFile(first); string(data) != "mine\n" {
		t.Fatalf("an existing file was overwritten: %q", data)
	}
	if !strings.Contains(stderr, "exists, not overwritten") {
		t.Fatalf("the refused overwrite is not reported:\n%s", stderr)
	}
	// the first failing seed was refused (not saved, not counted as
	// dropped); two saved.
	if len(sum.Saved) != 2 || sum.NotSaved != sum.Violations-3 {
		t.Fatalf("saved %d, not saved %d, of %d violations", len(sum.Saved), sum.NotSaved, sum.Violations)
	}
	if !strings.Contains(stderr, "more not saved (-max-saved)") {
		t.Fatalf("the cap does not say what it dropped:\n%s", stderr)
	}
	// run -save never overwrites either.
	if code, _, stderr := simrun(t, "run", "-scenario", "kv", "-seed", itoa(int(seed)), "-bug", "kv.phantom-ack", "-save", dir); code != 2 || !strings.Contains(stderr, "exists, not overwritten") {
		t.Fatalf("run -save over an existing entry: exit %d %q", code, stderr)
	}
}

// Seed ranges reach 2^64-1 without wrapping: the last seeds run once
// each, and shard arithmetic covers the whole space exactly.
func TestSeedRangeEdges(t *testing.T) {
	const top = math.MaxUint64
	for _, tc := range []struct {
		seeds string
		runs  uint64
	}{
		{"18446744073709551615", 1},
		{"18446744073709551613-18446744073709551615", 3},
		{"0-2", 3},
		{"0", 1},
	} {
		code, out, stderr := simrun(t, "sweep", "-scenario", "kv", "-seeds", tc.seeds, "-no-save", "-json", "-parallel", "2")
		sum := decodeOne[sweepSummary](t, out)
		if code != 0 || sum.Runs != tc.runs || sum.Covered != tc.seeds || !sum.Complete {
			t.Fatalf("-seeds %s: exit %d runs %d covered %s (%s)", tc.seeds, code, sum.Runs, sum.Covered, stderr)
		}
	}
	// Dispatching the top of the space stops after the last seed.
	d := &dispatcher{r: seedRange{top - 2, top}}
	var got []uint64
	for s, ok := d.take(); ok; s, ok = d.take() {
		got = append(got, s)
		if len(got) > 3 {
			t.Fatalf("dispatch wrapped: %v", got)
		}
	}
	if len(got) != 3 || got[2] != top {
		t.Fatalf("dispatched %v", got)
	}
	// Shards of ranges up to the whole space are contiguous and cover it.
	for _, r := range []seedRange{{0, top}, {1, top}, {top - 5, top}, {7, 7}, {10, 12}} {
		for _, n := range []int{1, 2, 3, 4, 7, 64} {
			next, first := r.lo, true
			for i := 0; i < n; i++ {
				part, ok := r.shard(i, n)
				if !ok {
					continue
				}
				if !first && part.lo != next || first && part.lo != r.lo || part.hi < part.lo {
					t.Fatalf("%v shard %d/%d = %v, want it to start at %d", r, i, n, part, next)
				}
				first, next = false, part.hi+1
				if part.hi == r.hi && i != n-1 {
					// only empty shards may follow the one that ends the range
					for j := i + 1; j < n; j++ {
						if _, ok := r.shard(j, n); ok {
							t.Fatalf("%v: shard %d/%d after the end", r, j, n)
						}
					}
					break
				}
			}
			if next-1 != r.hi {
				t.Fatalf("%v in %d shards ends at %d", r, n, next-1)
			}
		}
	}
	half, _ := seedRange{0, top}.shard(0, 2)
	if half.hi != 1<<63-1 {
		t.Fatalf("first half of the space ends at %d", half.hi)
	}
}

// The text summary lists every failing seed, grouped and capped with a
// count of the rest; -json lists them all.
func TestFailingSeedsAreListed(t *testing.T) {
	_, out, _ := simrun(t, "sweep", "-scenario", "kv", "-seeds", "1-60", "-bug", "kv.phantom-ack", "-no-save", "-json")
	sum := decodeOne[sweepSummary](t, out)
	if sum.Violations <= textCap {
		t.Fatalf("want more than %d failures to see the cap, got %d", textCap, sum.Violations)
	}
	var total int
	for _, g := range sum.Groups {
		total += g.Runs
	}
	if uint64(total) != sum.Violations || uint64(len(sum.FailingSeeds)) != sum.Violations {
		t.Fatalf("groups count %d, failing seeds %d, violations %d", total, len(sum.FailingSeeds), sum.Violations)
	}
	_, text, _ := simrun(t, "sweep", "-scenario", "kv", "-seeds", "1-60", "-bug", "kv.phantom-ack", "-no-save")
	want := "… and " + itoa(int(sum.Violations)-textCap) + " more (-json lists them all)"
	if !strings.Contains(text, want) || !strings.Contains(text, "KV.Linearizable  kv.phantom-ack") {
		t.Fatalf("text summary lacks %q:\n%s", want, text)
	}
}

// -first stops at the lowest failing seed, on any number of workers.
func TestSweepFirstStopsAtTheLowestFailingSeed(t *testing.T) {
	var firsts []uint64
	for _, parallel := range []string{"1", "4"} {
		_, out, _ := simrun(t, "sweep", "-scenario", "kv", "-seeds", "1-60", "-bug", "kv.phantom-ack", "-first", "-no-save", "-json", "-parallel", parallel)
		sum := decodeOne[sweepSummary](t, out)
		if sum.Violations != 1 || sum.FirstViolationSeed == nil || sum.Runs != *sum.FirstViolationSeed {
			t.Fatalf("-parallel %s: %d violations, first %v, runs %d", parallel, sum.Violations, sum.FirstViolationSeed, sum.Runs)
		}
		firsts = append(firsts, *sum.FirstViolationSeed)
	}
	if firsts[0] != firsts[1] {
		t.Fatalf("first failing seed depends on -parallel: %v", firsts)
	}
}

// Progress goes to a terminal, with seeds done, rate, violations, unknowns
// and ETA; nothing is printed when stderr is not a terminal.
func TestProgressOnlyOnATerminal(t *testing.T) {
	args := []string{"sweep", "-scenario", "kv", "-seeds", "1-6", "-bug", "kv.phantom-ack", "-no-save", "-json"}
	_, _, stderr := simrunEnv(t, nil, true, args...)
	for _, want := range []string{"\r\033[Ksweep kv: 6/6 seeds (100.0%)", "seeds/s", "violations ", "unknown 0", "ETA "} {
		if !strings.Contains(stderr, want) {
			t.Fatalf("terminal progress lacks %q: %q", want, stderr)
		}
	}
	_, _, stderr = simrunEnv(t, nil, false, args...)
	if strings.Contains(stderr, "sweep kv:") {
		t.Fatalf("progress printed when stderr is not a terminal: %q", stderr)
	}
}
