package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input to the coordination scenarios and to replay is one line on
// stderr and exit 2.
func TestCoordBadInputIsOneLineAndExit2(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	if err := os.WriteFile(corrupt, []byte(`{"scenario":"coord","seed":1,"verdict":"ok"`), 0o644); err != nil {
		t.Fatal(err)
	}
	wrong := filepath.Join(dir, "wrong.json")
	if err := os.WriteFile(wrong, []byte(`{"scenario":"coord","seed":1,"bugs":["coord.nope"],"verdict":"ok","digest":"`+strings.Repeat("ab", 32)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"kv bug on coord", []string{"run", "-scenario", "coord", "-bug", "kv.phantom-ack"}, "does not apply"},
		{"unknown coord bug", []string{"run", "-scenario", "coord", "-bug", "coord.nope"}, "unknown bug"},
		{"unknown option", []string{"run", "-scenario", "coord-zombie", "-opt", "nope=1"}, "no option"},
		{"bad option value", []string{"sweep", "-scenario", "coord", "-seeds", "1-2", "-opt", "workers=x"}, "cannot use"},
		{"bad seed range", []string{"sweep", "-scenario", "coord-zombie", "-seeds", "5-1"}, "range is empty"},
		{"corrupt corpus file", []string{"replay", corrupt}, "corpus"},
		{"corpus file naming an unknown bug", []string{"replay", wrong}, "unknown bug"},
		{"missing corpus file", []string{"replay", filepath.Join(dir, "none.json")}, "no such file"},
		{"replay without a file", []string{"replay"}, "exactly one"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := simrun(t, tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "simrun: ") || !strings.Contains(stderr, tc.want) {
				t.Fatalf("want one 'simrun: ...%s...' line, got %q", tc.want, stderr)
			}
		})
	}
}

func TestCoordRunJSON(t *testing.T) {
	code, out, stderr := simrun(t, "run", "-scenario", "coord", "-seed", "5", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var got runJSON
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("last line is not JSON: %v", err)
	}
	var swarm map[string]any
	if err := json.Unmarshal(got.Swarm, &swarm); err != nil {
		t.Fatal(err)
	}
	if got.Verdict != "ok" || got.Scenario != "coord" || got.Events == 0 || swarm["workers"] == nil || swarm["stall"] == nil {
		t.Fatalf("unexpected summary %+v swarm %v", got, swarm)
	}
}

// A coordination violation prints the property, the requests on the
// shard it names and the replay command, and the command reproduces it.
func TestCoordViolationReplays(t *testing.T) {
	checkViolationReplays(t, "coord-zombie", "coord.no-fence-check", 60,
		"verdict  violation  C.", "last events", "coord.", "replay   simrun run -scenario coord-zombie -seed")
}

// A saved failing run replays to its recorded violation; a tampered record
// is reported as differing.
func TestCoordCorpusEntryReplays(t *testing.T) {
	path := filepath.Join("..", "..", "corpus", "coord-zombie", "coord.no-fence-check-C.ZombieRejection-seed15.json")
	code, out, stderr := simrun(t, "replay", path, "-json")
	if code != 1 || !strings.Contains(stderr, "record   reproduced: violation C.ZombieRejection") || !strings.Contains(out, `"reproduced":true`) {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tampered := filepath.Join(t.TempDir(), "tampered.json")
	if err := os.WriteFile(tampered, []byte(strings.Replace(string(data), "C.ZombieRejection", "C.MutualExclusion", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := simrun(t, "replay", tampered); code != exitDiffers || !strings.Contains(out, "DIFFERS") {
		t.Fatalf("tampered record: exit %d\n%s", code, out)
	}
}

func TestCoordSweepSummary(t *testing.T) {
	code, out, _ := simrun(t, "sweep", "-scenario", "coord", "-seeds", "1-8", "-parallel", "2", "-json", "-no-save")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	sum := decodeOne[sweepSummary](t, out)
	if sum.Runs != 8 || sum.Violations != 0 || sum.SeedsPerSec <= 0 || sum.EventsPerSec <= 0 {
		t.Fatalf("summary %+v", sum)
	}
	code, out, _ = simrun(t, "sweep", "-scenario", "coord", "-seeds", "1-40", "-bug", "coord.split-two-txns", "-first", "-json", "-no-save")
	if code != 1 || !strings.Contains(out, "C.SplitAtomicity") {
		t.Fatalf("bug sweep: exit %d\n%s", code, out)
	}
}

// -record writes a run's choice stream; -choices replays it to the same
// digest, and -record-fuzz writes it as a Go fuzz corpus entry.
func TestCoordRecordingReplaysWithChoices(t *testing.T) {
	dir := t.TempDir()
	raw, fz := filepath.Join(dir, "run.bin"), filepath.Join(dir, "run.fuzz")
	code, out, _ := simrun(t, "run", "-scenario", "coord", "-seed", "9", "-record", raw, "-record-fuzz", fz)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, again, _ := simrun(t, "run", "-scenario", "coord", "-choices", raw)
	if code != 0 || digestOf(again) != digestOf(out) {
		t.Fatalf("replay from bytes: exit %d digest %s, want %s", code, digestOf(again), digestOf(out))
	}
	data, err := os.ReadFile(fz)
	if err != nil || !strings.HasPrefix(string(data), "go test fuzz v1\n[]byte(\"") {
		t.Fatalf("fuzz entry: %v %.40q", err, data)
	}
}

// A Go fuzz corpus entry (what the fuzzer writes for a failing input) is a
// valid -choices file, and replays like the raw bytes it holds.
func TestChoicesAcceptFuzzCorpusEntries(t *testing.T) {
	dir := t.TempDir()
	raw, fz := filepath.Join(dir, "run.bin"), filepath.Join(dir, "run.fuzz")
	code, out, _ := simrun(t, "run", "-scenario", "coord", "-seed", "9", "-bug", "coord.split-two-txns", "-record", raw, "-record-fuzz", fz)
	if code != 1 {
		t.Fatalf("seed 9 with coord.split-two-txns: exit %d\n%s", code, out)
	}
	for _, f := range []string{raw, fz} {
		code, again, _ := simrun(t, "run", "-scenario", "coord", "-choices", f, "-bug", "coord.split-two-txns")
		if code != 1 || digestOf(again) != digestOf(out) {
			t.Fatalf("%s: exit %d digest %s, want 1 and %s", f, code, digestOf(again), digestOf(out))
		}
	}
	bad := filepath.Join(dir, "bad.fuzz")
	if err := os.WriteFile(bad, []byte("go test fuzz v1\nint(3)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := simrun(t, "run", "-scenario", "coord", "-choices", bad); code != 2 || !strings.Contains(stderr, "[]byte") {
		t.Fatalf("bad fuzz entry: exit %d %q", code, stderr)
	}
}
