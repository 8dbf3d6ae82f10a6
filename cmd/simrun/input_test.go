package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every bad input of the commands and flags this package added is one line
// on stderr and exit 2: meaningless or huge options, refused choice files,
// bad shards from flags or from each batch engine's environment, bad
// merges and reports.
func TestMoreBadInputIsOneLineAndExit2(t *testing.T) {
	dir := t.TempDir()
	empty := writeFile(t, dir, "empty.bin", "")
	corpusEntry := filepath.Join("..", "..", "corpus", "kv", "kv.phantom-ack-KV.Linearizable-seed3.json")
	notJSON := writeFile(t, dir, "notes.txt", "hello\n")
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"zero clients", nil, []string{"run", "-scenario", "kv", "-opt", "clients=0"}, "clients=0: must be between 1 and 5000"},
		{"negative clients", nil, []string{"run", "-scenario", "kv", "-opt", "clients=-1"}, "must be between 1"},
		{"huge clients", nil, []string{"run", "-scenario", "kv", "-opt", "clients=100000"}, "must be between 1 and 5000"},
		{"zero workers", nil, []string{"run", "-scenario", "coord", "-opt", "workers=0"}, "workers=0: must be between 1"},
		{"probability above 1", nil, []string{"run", "-scenario", "kv", "-opt", "partition=1.5"}, "a probability between 0 and 1"},
		{"negative probability", nil, []string{"sweep", "-scenario", "coord", "-seeds", "1-2", "-opt", "crash=-0.1"}, "a probability between 0 and 1"},
		{"mode out of range", nil, []string{"run", "-scenario", "keymove", "-opt", "verification=3"}, "between 0 and 2"},
		{"negative duration", nil, []string{"run", "-scenario", "keymove", "-opt", "client_pace=-1s"}, "client_pace=-1s"},
		{"zero check timeout", nil, []string{"run", "-scenario", "kv", "-check-timeout", "0s"}, "-check-timeout must be positive"},
		{"empty choices", nil, []string{"run", "-scenario", "kv", "-choices", empty}, "holds no choice bytes"},
		{"corpus entry as choices", nil, []string{"run", "-scenario", "kv", "-choices", corpusEntry}, "is a corpus entry (a saved run), not choice bytes: replay it with simrun replay"},
		{"bad shard", nil, []string{"sweep", "-scenario", "kv", "-seeds", "1-4", "-shard", "4/4"}, "want i/n with 0 <= i < n"},
		{"garbled shard", nil, []string{"sweep", "-scenario", "kv", "-seeds", "1-4", "-shard", "x"}, "want i/n"},
		{"shard and shards", nil, []string{"sweep", "-scenario", "kv", "-seeds", "1-4", "-shard", "0/2", "-shards", "2"}, "exclusive"},
		{"shards without an index", nil, []string{"sweep", "-scenario", "kv", "-seeds", "1-4", "-shards", "2"}, "needs JOB_COMPLETION_INDEX"},
		{"indexed job without shards", map[string]string{"JOB_COMPLETION_INDEX": "1"}, []string{"sweep", "-scenario", "kv", "-seeds", "1-4"}, "give -shards N"},
		{"indexed job index too big", map[string]string{"JOB_COMPLETION_INDEX": "4"}, []string{"sweep", "-scenario", "kv", "-seeds", "1-4", "-shards", "4"}, "JOB_COMPLETION_INDEX=\"4\" is not a shard index in 0..3"},
		{"bazel index too big", map[string]string{"TEST_TOTAL_SHARDS": "3", "TEST_SHARD_INDEX": "3"}, []string{"sweep", "-scenario", "kv", "-seeds", "1-4"}, "TEST_SHARD_INDEX"},
		{"bazel bad count", map[string]string{"TEST_TOTAL_SHARDS": "0", "TEST_SHARD_INDEX": "0"}, []string{"sweep", "-scenario", "kv", "-seeds", "1-4"}, "TEST_TOTAL_SHARDS"},
		{"slurm id below min", map[string]string{"SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_ID": "0"}, []string{"sweep", "-scenario", "kv", "-seeds", "1-4"}, "SLURM_ARRAY_TASK_ID=\"0\" is not a shard index in 1..4"},
		{"slurm bad min", map[string]string{"SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "x", "SLURM_ARRAY_TASK_ID": "0"}, []string{"sweep", "-scenario", "kv", "-seeds", "1-4"}, "SLURM_ARRAY_TASK_MIN"},
		{"bad progress", nil, []string{"sweep", "-scenario", "kv", "-seeds", "1-4", "-progress", "sometimes"}, "want auto, always or never"},
		{"corpus and no-save", nil, []string{"sweep", "-scenario", "kv", "-seeds", "1-4", "-corpus", dir, "-no-save"}, "exclusive"},
		{"negative max-saved", nil, []string{"sweep", "-scenario", "kv", "-seeds", "1-4", "-max-saved", "-1"}, "must not be negative"},
		{"seed above 2^64-1", nil, []string{"sweep", "-scenario", "kv", "-seeds", "18446744073709551615-18446744073709551616"}, "is not a seed"},
		{"merge nothing", nil, []string{"merge"}, "want the JSON result of every shard"},
		{"merge a non-result", nil, []string{"merge", notJSON}, "is not a sweep result"},
		{"merge a missing file", nil, []string{"merge", filepath.Join(dir, "none.json")}, "no such file"},
		{"report a file", nil, []string{"report", notJSON}, "is not a directory"},
		{"report nothing", nil, []string{"report"}, "want one directory"},
		{"help for nothing", nil, []string{"help", "nope"}, "unknown command"},
		{"replay two files", nil, []string{"replay", corpusEntry, corpusEntry}, "exactly one"},
		{"version with argument", nil, []string{"version", "x"}, "unexpected argument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := simrunEnv(t, tc.env, false, tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (stdout %q stderr %q)", code, out, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "simrun: ") || !strings.Contains(stderr, tc.want) {
				t.Fatalf("want one 'simrun: ...%s...' line, got %q", tc.want, stderr)
			}
		})
	}
}

// Merging results that are not every shard of one sweep is refused.
func TestMergeRefusesAnIncompleteOrMixedSet(t *testing.T) {
	dir := t.TempDir()
	shard := func(i int, extra ...string) string {
		out := filepath.Join(dir, "r"+itoa(i)+strings.Join(extra, "")+".json")
		args := append([]string{"sweep", "-scenario", "kv", "-seeds", "1-4", "-shard", itoa(i) + "/2", "-no-save", "-quiet", "-out", out}, extra...)
		if code, _, stderr := simrun(t, args...); code != 0 {
			t.Fatalf("shard %d: exit %d %s", i, code, stderr)
		}
		return out
	}
	a, b := shard(0), shard(1)
	other := shard(1, "-opt", "clients=3")
	whole := filepath.Join(dir, "whole.json")
	if code, _, _ := simrun(t, "sweep", "-scenario", "kv", "-seeds", "1-4", "-no-save", "-quiet", "-out", whole); code != 0 {
		t.Fatal("whole sweep failed")
	}
	for name, files := range map[string][]string{
		"a missing shard":    {a},
		"a shard twice":      {a, a, b},
		"another sweep":      {a, other},
		"an unsharded sweep": {whole, a},
	} {
		code, _, stderr := simrun(t, append([]string{"merge"}, files...)...)
		if code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d %q", name, code, stderr)
		}
	}
	if code, _, stderr := simrun(t, "merge", a, b); code != 0 {
		t.Fatalf("a complete set: exit %d %s", code, stderr)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
