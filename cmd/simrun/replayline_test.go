package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shardsim/scenarios"
)

// runDigest runs a printed replay command and returns its exit status and
// digest.
func runDigest(t *testing.T, command string) (int, string) {
	t.Helper()
	fields := strings.Fields(command)
	if len(fields) < 2 || fields[0] != "simrun" {
		t.Fatalf("not a simrun command: %q", command)
	}
	code, out, stderr := simrun(t, append(fields[1:], "-json")...)
	got := decodeOne[runJSON](t, out)
	if got.Digest == "" {
		t.Fatalf("%s: no digest (exit %d, %s)", command, code, stderr)
	}
	return code, got.Digest
}

// Every replay command simrun prints, text or JSON, reproduces the run's
// digest: for runs with options, with bugs and with choices, from run and
// from every group, failing seed and undecided seed of a sweep.
func TestReplayLinesReproduce(t *testing.T) {
	// run: options and a bug, text and JSON.
	args := []string{"run", "-scenario", "kv", "-seed", "3", "-bug", "kv.phantom-ack", "-opt", "lose_request=0.2", "-opt", "keys=3"}
	code, out, _ := simrun(t, args...)
	line := lineAfter(t, out, "replay   ")
	if code != 1 || !strings.Contains(line, "-opt keys=3 -opt lose_request=0.2") || !strings.Contains(line, "-bug kv.phantom-ack") {
		t.Fatalf("exit %d, replay line %q", code, line)
	}
	if c, d := runDigest(t, line); c != 1 || d != digestOf(out) {
		t.Fatalf("text replay line: exit %d digest %s, want 1 and %s", c, d, digestOf(out))
	}
	_, jout, _ := simrun(t, append(args, "-json")...)
	j := decodeOne[runJSON](t, jout)
	if j.Replay != line || j.Options["lose_request"] != "0.2" {
		t.Fatalf("JSON replay %q options %v, want %q", j.Replay, j.Options, line)
	}

	// run: choices (recorded from a failing seeded run).
	rec := filepath.Join(t.TempDir(), "run.bin")
	simrun(t, "run", "-scenario", "coord", "-seed", "4", "-bug", "coord.split-two-txns", "-opt", "split=0.1", "-record", rec)
	code, out, _ = simrun(t, "run", "-scenario", "coord", "-choices", rec, "-bug", "coord.split-two-txns", "-opt", "split=0.1")
	line = lineAfter(t, out, "replay   ")
	if code != 1 || !strings.Contains(line, "-choices "+rec) || !strings.Contains(line, "-opt split=0.1") {
		t.Fatalf("exit %d, replay line %q", code, line)
	}
	if c, d := runDigest(t, line); c != 1 || d != digestOf(out) {
		t.Fatalf("choices replay line: exit %d digest %s, want %s", c, d, digestOf(out))
	}

	// sweep: every group's replay line and every failing seed, with options.
	_, sout, _ := simrun(t, "sweep", "-scenario", "kv", "-seeds", "1-12", "-bug", "kv.phantom-ack", "-opt", "lose_request=0.2", "-no-save", "-json")
	sum := decodeOne[sweepSummary](t, sout)
	if sum.Violations == 0 || len(sum.Groups) == 0 {
		t.Fatalf("the sweep found nothing: %+v", sum)
	}
	for _, g := range sum.Groups {
		c, d := runDigest(t, g.Replay)
		if c != 1 || d != g.Fastest.Digest || !strings.Contains(g.Replay, "-opt lose_request=0.2") {
			t.Fatalf("group replay %q: exit %d digest %s, want 1 and %s", g.Replay, c, d, g.Fastest.Digest)
		}
	}
	if uint64(len(sum.FailingSeeds)) != sum.Violations {
		t.Fatalf("%d failing seeds listed for %d violations", len(sum.FailingSeeds), sum.Violations)
	}
	for _, seed := range sum.FailingSeeds {
		res, err := scenarios.Run("kv", scenarios.Config{Seed: seed, Bugs: sum.bugSet(), Options: map[string]string{"lose_request": "0.2"}})
		if err != nil || res.Verdict != "violation" {
			t.Fatalf("listed failing seed %d: %v %s", seed, err, res.Verdict)
		}
	}
}

// An undecided run is named with a replay command that gives the check
// more time, and the command reproduces the run. No check finishes within
// 1ns, and a check that overruns its budget is always Unknown
// (checker.CheckWithin), so every seed here is undecided on any machine.
func TestUndecidedSeedsAreNamedWithReplays(t *testing.T) {
	code, out, _ := simrun(t, "sweep", "-scenario", "kv", "-seeds", "1-3", "-check-timeout", "1ns", "-no-save", "-json")
	sum := decodeOne[sweepSummary](t, out)
	if code != exitUnknown || sum.Unknown != 3 || uint64(len(sum.Undecided)) != sum.Unknown {
		t.Fatalf("exit %d, %d unknown, %d named", code, sum.Unknown, len(sum.Undecided))
	}
	for _, u := range sum.Undecided {
		if !strings.Contains(u.Replay, "-seed "+itoa(int(u.Seed))) || !strings.Contains(u.Replay, "-check-timeout 4ns") {
			t.Fatalf("replay %q", u.Replay)
		}
		want, err := scenarios.Run("kv", scenarios.Config{Seed: u.Seed})
		if err != nil {
			t.Fatal(err)
		}
		if c, d := runDigest(t, u.Replay); c != exitUnknown || d != want.Digest {
			t.Fatalf("replay %q: exit %d digest %s, want %d and %s", u.Replay, c, d, exitUnknown, want.Digest)
		}
	}
	_, text, _ := simrun(t, "sweep", "-scenario", "kv", "-seeds", "1-3", "-check-timeout", "1ns", "-no-save")
	if !strings.Contains(text, "could not be decided within -check-timeout 1ns") || !strings.Contains(text, sum.Undecided[0].Replay) {
		t.Fatalf("text summary does not name the unknown seeds:\n%s", text)
	}
	code, run1, _ := simrun(t, "run", "-scenario", "kv", "-seed", "1", "-check-timeout", "1ns")
	if code != exitUnknown || !strings.Contains(run1, "give it more with -check-timeout") {
		t.Fatalf("an undecided run does not say how to raise the budget:\n%s", run1)
	}
}

// replay -json tells a reproduced record from one that differs, and the
// exit status does too (4 for differs, whatever the verdict).
func TestReplayJSONSaysWhetherItReproduced(t *testing.T) {
	path := filepath.Join("..", "..", "corpus", "kv", "kv.phantom-ack-KV.Linearizable-seed3.json")
	code, out, stderr := simrun(t, "replay", "-json", path)
	got := decodeOne[replayJSON](t, out)
	if code != exitViolation || !got.Reproduced || got.Recorded.Digest != got.Digest || !strings.Contains(stderr, "record   reproduced") {
		t.Fatalf("exit %d reproduced %v", code, got.Reproduced)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tampered := writeFile(t, t.TempDir(), "tampered.json", strings.Replace(string(data), got.Digest, strings.Repeat("0", 64), 1))
	code, out, _ = simrun(t, "replay", "-json", tampered)
	got = decodeOne[replayJSON](t, out)
	if code != exitDiffers || got.Reproduced || got.Recorded.Digest != strings.Repeat("0", 64) || got.Verdict != "violation" {
		t.Fatalf("tampered: exit %d reproduced %v", code, got.Reproduced)
	}
	clean := filepath.Join("..", "..", "corpus", "kv", "clean-seed7.json")
	if code, out, _ := simrun(t, "replay", clean, "-json"); code != exitOK || !decodeOne[replayJSON](t, out).Reproduced {
		t.Fatalf("clean entry: exit %d", code)
	}
}

// A run driven by choices reports no seed but the hash of its bytes.
func TestChoicesRunsCarryTheirHash(t *testing.T) {
	path := writeFile(t, t.TempDir(), "quiet.bin", "\x00")
	code, out, stderr := simrun(t, "run", "-scenario", "kv", "-choices", path, "-json")
	if code != 0 {
		t.Fatalf("exit %d %s", code, stderr)
	}
	if strings.Contains(out, `"seed"`) {
		t.Fatalf("a choices run reports a seed: %s", out)
	}
	got := decodeOne[runJSON](t, out)
	if got.ChoicesHash != scenarios.ChoicesHash([]byte{0}) || got.Seed != nil || got.ChoicesFile != path {
		t.Fatalf("choices hash %q seed %v file %q", got.ChoicesHash, got.Seed, got.ChoicesFile)
	}
	if !strings.Contains(stderr, "choices "+path+" (1 bytes, blake3 "+got.ChoicesHash[:16]+")") || strings.Contains(stderr, "seed") {
		t.Fatalf("text report:\n%s", stderr)
	}
}

// lineAfter returns the rest of the first line of out starting with prefix.
func lineAfter(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimSpace(strings.TrimPrefix(l, prefix))
		}
	}
	t.Fatalf("no line starting %q in:\n%s", prefix, out)
	return ""
}
