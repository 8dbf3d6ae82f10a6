package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// conventions are the ways a batch engine tells a sweep its shard: each
// returns the environment and extra arguments of shard i of n.
var conventions = []struct {
	name  string
	shard func(t *testing.T, dir string, i, n int) (map[string]string, []string)
	check func(t *testing.T, dir string, i int)
}{
	{"explicit -shard", func(t *testing.T, dir string, i, n int) (map[string]string, []string) {
		return nil, []string{"-shard", itoa(i) + "/" + itoa(n)}
	}, nil},
	{"Bazel TEST_SHARD_INDEX", func(t *testing.T, dir string, i, n int) (map[string]string, []string) {
		return map[string]string{"TEST_SHARD_INDEX": itoa(i), "TEST_TOTAL_SHARDS": itoa(n),
			"TEST_SHARD_STATUS_FILE": filepath.Join(dir, "status-"+itoa(i))}, nil
	}, func(t *testing.T, dir string, i int) {
		if _, err := os.Stat(filepath.Join(dir, "status-"+itoa(i))); err != nil {
			t.Errorf("TEST_SHARD_STATUS_FILE of shard %d not touched: %v", i, err)
		}
	}},
	{"Kubernetes JOB_COMPLETION_INDEX", func(t *testing.T, dir string, i, n int) (map[string]string, []string) {
		return map[string]string{"JOB_COMPLETION_INDEX": itoa(i)}, []string{"-shards", itoa(n)}
	}, nil},
	{"Slurm SLURM_ARRAY_TASK_ID", func(t *testing.T, dir string, i, n int) (map[string]string, []string) {
		// an array of tasks 1..n, as `sbatch --array=1-4` makes
		return map[string]string{"SLURM_ARRAY_TASK_ID": itoa(i + 1), "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": itoa(n)}, nil
	}, nil},
}

// A sweep run as 4 shards and merged equals the single-process sweep, seed
// for seed (the runs' fingerprint), with the same counts, groups, failing
// and undecided seeds and the same text summary, for every convention, with
// and without -first.
func TestShardedSweepMergesToTheSingleMachineSummary(t *testing.T) {
	for _, mode := range [][]string{
		{"-seeds", "1-42", "-opt", "lose_request=0.05"},
		{"-seeds", firstInThirdShard(t), "-opt", "lose_request=0.002", "-first"},
	} {
		base := append([]string{"sweep", "-scenario", "kv", "-bug", "kv.phantom-ack", "-no-save"}, mode...)
		code, whole, wholeText := simrunEnv(t, nil, false, append(base, "-json")...)
		single := decodeOne[sweepSummary](t, whole)
		if single.Violations == 0 || code != 1 {
			t.Fatalf("the single sweep found nothing to compare (exit %d)", code)
		}
		if r, _ := parseSeedRange(single.Seeds); single.First {
			third, _ := r.shard(2, 4)
			if *single.FirstViolationSeed != third.lo || single.Runs != third.lo-r.lo+1 {
				t.Fatalf("-first over %s: first failing seed %d after %d runs; the test wants it to start shard 2/4 (%v)", single.Seeds, *single.FirstViolationSeed, single.Runs, third)
			}
		}
		for _, conv := range conventions {
			t.Run(conv.name+" "+strings.Join(mode, " "), func(t *testing.T) {
				dir := t.TempDir()
				var files []string
				for i := 0; i < 4; i++ {
					vars, extra := conv.shard(t, dir, i, 4)
					out := filepath.Join(dir, "shard"+itoa(i)+".json")
					args := append(append(slices.Clone(base), extra...), "-json", "-out", out)
					code, stdout, stderr := simrunEnv(t, vars, false, args...)
					if code != exitOK && code != exitViolation {
						t.Fatalf("shard %d: exit %d %s", i, code, stderr)
					}
					shard := decodeOne[sweepSummary](t, stdout)
					if shard.Shard == nil || shard.Shard.Index != i || shard.Shard.Count != 4 {
						t.Fatalf("shard %d ran as %+v", i, shard.Shard)
					}
					if conv.check != nil {
						conv.check(t, dir, i)
					}
					files = append(files, out)
				}
				slices.Reverse(files) // merge does not care about the order
				mcode, mout, mtext := simrunEnv(t, nil, false, append([]string{"merge", "-json"}, files...)...)
				merged := decodeOne[sweepSummary](t, mout)
				if mcode != code {
					t.Errorf("merge exit %d, single %d", mcode, code)
				}
				sameRuns(t, merged, single)
				if a, b := summaryBody(mtext), summaryBody(wholeText); a != b {
					t.Errorf("merged text summary differs:\n%s\n--- single ---\n%s", a, b)
				}
			})
		}
	}
}

// firstInThirdShard finds a seed range A-B whose lowest failing seed (kv
// with kv.phantom-ack, lose_request=0.002) starts the third of four shards,
// so that a -first merge must walk two clean shards and stop in the third.
func firstInThirdShard(t *testing.T) string {
	t.Helper()
	_, out, _ := simrun(t, "sweep", "-scenario", "kv", "-seeds", "1-200", "-bug", "kv.phantom-ack", "-opt", "lose_request=0.002", "-no-save", "-json")
	lo := uint64(1)
	for _, f := range decodeOne[sweepSummary](t, out).FailingSeeds {
		if gap := f - lo; gap >= 2 {
			// 2*gap seeds: shard 2 of 4 starts at offset gap, at f
			return seedRange{lo, lo + 2*gap - 1}.String()
		}
		lo = f + 1
	}
	t.Fatal("no failing seed after a gap of two clean seeds in 1-200")
	return ""
}

// sameRuns compares everything of two summaries that is a function of the
// runs alone.
func sameRuns(t *testing.T, got, want sweepSummary) {
	t.Helper()
	strip := func(s sweepSummary) sweepSummary {
		s.WallSeconds, s.SeedsPerSec, s.EventsPerSec, s.VirtualPerWall = 0, 0, 0, 0
		s.Shard, s.Merged, s.CorpusDir, s.Saved, s.NotSaved = nil, 0, "", nil, 0
		return s
	}
	g, w := strip(got), strip(want)
	var gb, wb bytes.Buffer
	writeJSON(&gb, g)
	writeJSON(&wb, w)
	if gb.String() != wb.String() {
		t.Fatalf("merged summary differs from the single sweep:\n%s\n%s", gb.String(), wb.String())
	}
	if got.Fingerprint != want.Fingerprint || got.Runs != want.Runs {
		t.Fatalf("fingerprint %s runs %d, want %s %d", got.Fingerprint, got.Runs, want.Fingerprint, want.Runs)
	}
}

// summaryBody is a text summary without the lines about the machine (the
// rate, or the merge).
func summaryBody(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "rate ") && !strings.HasPrefix(l, "merged ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// More shards than seeds: the empty shards run nothing and still merge.
func TestEmptyShardsMerge(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i := 0; i < 5; i++ {
		out := filepath.Join(dir, "s"+itoa(i)+".json")
		if code, _, stderr := simrun(t, "sweep", "-scenario", "kv", "-seeds", "5-7", "-shard", itoa(i)+"/5", "-no-save", "-quiet", "-out", out); code != 0 {
			t.Fatalf("shard %d: exit %d %s", i, code, stderr)
		}
		files = append(files, out)
	}
	_, out, _ := simrun(t, append([]string{"merge", "-json"}, files...)...)
	_, whole, _ := simrun(t, "sweep", "-scenario", "kv", "-seeds", "5-7", "-no-save", "-json")
	sameRuns(t, decodeOne[sweepSummary](t, out), decodeOne[sweepSummary](t, whole))
}
