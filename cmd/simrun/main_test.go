package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"shardsim/property"
	"shardsim/scenarios"
	"shardsim/simclock"
)

func simrun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// Bad input gets one line on stderr and exit status 2, never a panic or a pass.
func TestBadInputIsOneLineAndExit2(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.bin")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "missing command"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"unknown scenario", []string{"run", "-scenario", "nope"}, "unknown scenario"},
		{"missing scenario", []string{"run"}, "-scenario is required"},
		{"bad flag", []string{"run", "-scenario", "kv", "-bogus"}, "flag provided but not defined"},
		{"bad seed", []string{"run", "-scenario", "kv", "-seed", "x"}, "invalid value"},
		{"stray argument", []string{"run", "-scenario", "kv", "extra"}, "unexpected argument"},
		{"unknown bug", []string{"run", "-scenario", "kv", "-bug", "kv.nope"}, "unknown bug"},
		{"bug of another protocol", []string{"run", "-scenario", "kv", "-bug", "coord.no-fence-check"}, "does not apply"},
		{"unreadable choices", []string{"run", "-scenario", "kv", "-choices", missing}, "cannot read choices"},
		{"seed and choices", []string{"run", "-scenario", "kv", "-seed", "3", "-choices", missing}, "exclusive"},
		{"bad option", []string{"run", "-scenario", "kv", "-opt", "clients"}, "NAME=VALUE"},
		{"unknown option", []string{"run", "-scenario", "kv", "-opt", "nope=1"}, "no option"},
		{"bad option value", []string{"run", "-scenario", "kv", "-opt", "clients=many"}, "cannot use"},
		{"bad seed range", []string{"sweep", "-scenario", "kv", "-seeds", "9-3"}, "range is empty"},
		{"garbled seed range", []string{"sweep", "-scenario", "kv", "-seeds", "a-b"}, "not a seed"},
		{"missing seed range", []string{"sweep", "-scenario", "kv"}, "-seeds is required"},
		{"bad parallel", []string{"sweep", "-scenario", "kv", "-seeds", "1-2", "-parallel", "0"}, "at least 1"},
		{"list with argument", []string{"list", "x"}, "unexpected argument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := simrun(t, tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "simrun: ") {
				t.Fatalf("want one 'simrun: ...' line on stderr, got %q", stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Fatalf("stderr %q does not mention %q", stderr, tc.want)
			}
		})
	}
}

func TestRunJSONContract(t *testing.T) {
	code, out, stderr := simrun(t, "run", "-scenario", "kv", "-seed", "3", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("last line is not JSON: %v", err)
	}
	for _, k := range []string{"scenario", "seed", "verdict", "property", "events", "virtual_ns", "digest", "swarm"} {
		if _, ok := got[k]; !ok {
			t.Fatalf("JSON lacks %q: %v", k, got)
		}
	}
	if got["verdict"] != "ok" || got["scenario"] != "kv" || got["seed"].(float64) != 3 {
		t.Fatalf("unexpected summary %v", got)
	}
	if _, ok := got["swarm"].(map[string]any)["clients"]; !ok {
		t.Fatalf("swarm options missing: %v", got["swarm"])
	}
}

// A failing run prints the property, the last events and the exact replay
// command; running that command reproduces the same digest.
func TestViolationPrintsReplayThatReproduces(t *testing.T) {
	checkViolationReplays(t, "kv", "kv.phantom-ack", 100, "verdict  violation", "last events", "replay   simrun run -scenario kv -seed")
}

// checkViolationReplays runs scenario with bug from seed 1 until a run
// fails (within seeds), requires its report to contain each of want, and
// runs the replay command the report prints: it must fail again with the
// same digest.
func checkViolationReplays(t *testing.T, scenario, bug string, seeds int, want ...string) {
	t.Helper()
	var failing string
	for seed := 1; seed <= seeds && failing == ""; seed++ {
		code, out, _ := simrun(t, "run", "-scenario", scenario, "-seed", itoa(seed), "-bug", bug)
		if code == 1 {
			failing = out
		}
	}
	if failing == "" {
		t.Fatalf("%s was not caught in %d seeds of %s", bug, seeds, scenario)
	}
	for _, w := range want {
		if !strings.Contains(failing, w) {
			t.Fatalf("report lacks %q:\n%s", w, failing)
		}
	}
	replay := failing[strings.Index(failing, "replay   ")+len("replay   "):]
	replay = strings.TrimSpace(strings.SplitN(replay, "\n", 2)[0])
	args := strings.Fields(replay)[1:] // drop "simrun"
	code, again, _ := simrun(t, args...)
	if code != 1 || digestOf(again) != digestOf(failing) {
		t.Fatalf("replay gave exit %d digest %s, want 1 and %s", code, digestOf(again), digestOf(failing))
	}
}

func TestChoicesFileReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zeros.bin")
	if err := os.WriteFile(path, make([]byte, 64), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := simrun(t, "run", "-scenario", "kv", "-choices", path)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	if !strings.Contains(out, "choices "+path) {
		t.Fatalf("output does not name the choices file:\n%s", out)
	}
}

func TestListShowsEverything(t *testing.T) {
	code, out, _ := simrun(t, "list", "-json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var got listJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Scenarios) == 0 || len(got.Bugs) == 0 || len(got.Properties) == 0 {
		t.Fatalf("list is missing sections: %+v", got)
	}
}

func TestSweepSummary(t *testing.T) {
	code, out, _ := simrun(t, "sweep", "-scenario", "kv", "-seeds", "1-6", "-parallel", "2", "-json", "-no-save")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	sum := decodeOne[sweepSummary](t, out)
	if sum.Runs != 6 || sum.Violations != 0 || sum.SeedsPerSec <= 0 {
		t.Fatalf("summary %+v", sum)
	}
}

func digestOf(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "digest") {
			return strings.TrimSpace(strings.TrimPrefix(l, "digest"))
		}
	}
	return ""
}

func itoa(i int) string { return strconv.Itoa(i) }

// A world that panics is a finding of the sweep like any other: a
// violation with a replay command and a saved corpus entry, never a
// crashed sweep.
func TestSweepReportsAPanickingWorld(t *testing.T) {
	scenarios.Register(scenarios.Scenario{Name: "panic-sweep-test", Description: "test only", Properties: []property.Name{property.HPanic},
		Run: func(cfg scenarios.Config) (scenarios.Result, error) {
			w := scenarios.NewWorld("panic-sweep-test", cfg, simclock.Budget{MaxTime: simclock.Time(time.Second)})
			w.Loop.Spawn("boom", panicker{}, nil, nil)
			w.Run()
			return w.Result(), nil
		}})
	dir := t.TempDir()
	code, out, stderr := simrun(t, "sweep", "-scenario", "panic-sweep-test", "-seeds", "1-3", "-corpus", dir, "-parallel", "1")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (violation); stderr %q", code, stderr)
	}
	for _, want := range []string{"H.Panic", "replay simrun run -scenario panic-sweep-test -seed 1", "saved"} {
		if !strings.Contains(out, want) {
			t.Fatalf("sweep output lacks %q:\n%s", want, out)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) == 0 {
		t.Fatal("no corpus entry saved")
	}
}

// panicker panics when it starts.
type panicker struct{}

func (panicker) Receive(_ *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); ok {
		panic("boom")
	}
}
