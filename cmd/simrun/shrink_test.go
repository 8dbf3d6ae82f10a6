package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shardsim/corpus"
)

// A saved failure shrinks to a smaller corpus entry that `simrun replay`
// reproduces, with the same property; the report says how much smaller.
func TestShrinkCorpusEntryReplays(t *testing.T) {
	in := filepath.Join("..", "..", "corpus", "kv", "kv.phantom-ack-KV.Linearizable-seed3.json")
	out := filepath.Join(t.TempDir(), "shrunk.json")
	code, stdout, stderr := simrun(t, "shrink", "-in", in, "-out", out, "-json", "-max-replays", "400")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var sum shrinkJSON
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("last line is not JSON: %v\n%s", err, stdout)
	}
	if sum.Property != "KV.Linearizable" || sum.Replays < 2 {
		t.Fatalf("summary %+v", sum)
	}
	if sum.After.Bytes >= sum.Before.Bytes || sum.After.Draws > sum.Before.Draws || sum.After.Chosen >= sum.Before.Chosen {
		t.Fatalf("nothing shrank: before %+v after %+v", sum.Before, sum.After)
	}
	e, err := corpus.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if e.Seed != nil || e.Choices == "" || e.Property != "KV.Linearizable" || !strings.Contains(e.Note, "simrun shrink of") {
		t.Fatalf("entry %+v", e)
	}
	code, replay, _ := simrun(t, "replay", out)
	if code != 1 || !strings.Contains(replay, "record   reproduced: violation KV.Linearizable") {
		t.Fatalf("replay exit %d:\n%s", code, replay)
	}
}

// shrink never overwrites a file unasked, and refuses what it cannot shrink.
func TestShrinkRefusals(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "exists.json")
	if err := os.WriteFile(existing, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	clean := filepath.Join("..", "..", "corpus", "kv", "clean-seed7.json")
	failing := filepath.Join("..", "..", "corpus", "kv", "kv.phantom-ack-KV.Linearizable-seed3.json")
	raw := filepath.Join(dir, "raw.bin")
	if err := os.WriteFile(raw, []byte{1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no -in", []string{"shrink", "-out", filepath.Join(dir, "o.json")}, "-in and -out are required"},
		{"existing -out", []string{"shrink", "-in", failing, "-out", existing}, "exists"},
		{"passing input", []string{"shrink", "-in", clean, "-out", filepath.Join(dir, "o.json")}, "does not fail"},
		{"entry plus flags", []string{"shrink", "-in", failing, "-out", filepath.Join(dir, "o.json"), "-scenario", "kv"}, "names its own"},
		{"raw without scenario", []string{"shrink", "-in", raw, "-out", filepath.Join(dir, "o.json")}, "-scenario is required"},
		{"other property", []string{"shrink", "-in", failing, "-out", filepath.Join(dir, "o.json"), "-property", "KV.WatchOrdered"}, "does not fail with the property"},
		{"missing input", []string{"shrink", "-in", filepath.Join(dir, "nope"), "-out", filepath.Join(dir, "o.json")}, "cannot read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := simrun(t, tc.args...)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
	if data, _ := os.ReadFile(existing); string(data) != "keep me" {
		t.Fatal("an existing -out file was changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "o.json")); err == nil {
		t.Fatal("a refused shrink wrote its output")
	}
}

// sweep -shrink saves the shrunk run, which replays to the same property.
func TestSweepShrinkSavesTheShrunkRun(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := simrun(t, "sweep", "-scenario", "kv", "-bug", "kv.phantom-ack", "-seeds", "3",
		"-corpus", dir, "-shrink", "-shrink-replays", "400")
	if code != 1 || !strings.Contains(stdout, "shrunk   seed 3:") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	files, err := corpus.Files(dir)
	if err != nil || len(files) != 1 || !strings.Contains(files[0], "bytes-") {
		t.Fatalf("saved %v (%v), want one bytes entry", files, err)
	}
	e, err := corpus.Load(files[0])
	if err != nil || e.Seed != nil || !strings.Contains(e.Note, "seed 3") {
		t.Fatalf("entry %+v (%v)", e, err)
	}
	code, replay, _ := simrun(t, "replay", files[0])
	if code != 1 || !strings.Contains(replay, "record   reproduced: violation KV.Linearizable") {
		t.Fatalf("replay exit %d:\n%s", code, replay)
	}
}
