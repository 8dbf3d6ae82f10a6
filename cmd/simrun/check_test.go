package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The CI-sized smoke test of simrun check: on tiny bounds (the coord small
// world, one non-zero choice per path) it finds a coordination bug, writes
// a choice file that simrun run -choices replays to the same property, and
// passes the clean world, each in about a second.
func TestCheckFindsACoordBugAndPassesClean(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "w.choices")
	code, stdout, stderr := simrun(t, "check", "-scenario", "coord", "-depth", "1", "-bug", "coord.cursor-out-of-bounds", "-out", out, "-json")
	if code != exitViolation {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	got := decodeOne[checkJSON](t, stdout)
	if got.Verdict != "violation" || got.Property != "C.CursorBounds" || got.WitnessDepth != 1 || got.Choices != out || got.States == 0 || got.Distinct == 0 {
		t.Fatalf("check -json: %+v", got)
	}
	if !strings.Contains(got.Replay, "-choices "+out) || !strings.Contains(got.Replay, "-bug coord.cursor-out-of-bounds") {
		t.Fatalf("replay command %q", got.Replay)
	}
	args := strings.Fields(got.Replay)[1:]
	code, stdout, stderr = simrun(t, append(args, "-json")...)
	if code != exitViolation || !strings.Contains(stdout, `"property":"C.CursorBounds"`) {
		t.Fatalf("the witness replays with exit %d:\n%s\n%s", code, stdout, stderr)
	}

	code, stdout, stderr = simrun(t, "check", "-scenario", "coord", "-depth", "1", "-json")
	if code != exitOK {
		t.Fatalf("clean coord, depth 1: exit %d\n%s\n%s", code, stdout, stderr)
	}
	clean := decodeOne[checkJSON](t, stdout)
	if clean.Verdict != "ok" || !clean.Complete || clean.Runs < 10 || clean.StatesPerSec <= 0 {
		t.Fatalf("clean check: %+v", clean)
	}
	// A bounded search is not exhaustive: -exhaustive says so with exit 3.
	if code, _, _ := simrun(t, "check", "-scenario", "coord", "-depth", "0", "-exhaustive"); code != exitUnknown {
		t.Fatalf("-exhaustive on a bounded search: exit %d, want 3", code)
	}
}

func TestCheckNeverOverwritesAndRejectsBadBounds(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "taken.choices")
	if err := os.WriteFile(out, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"check", "-scenario", "coord", "-out", out, "-bug", "coord.complete-keeps-lease"},
		{"check", "-scenario", "coord", "-bounds", "huge"},
		{"check", "-scenario", "coord", "-depth", "-1"},
		{"check", "-scenario", "coord", "-values", "1"},
		{"check", "-scenario", "coord", "-menu", "-1"},
		{"check", "-scenario", "coord", "-strategy", "dfs"},
		{"check", "-scenario", "coord", "-max-memory", "3XB"},
		{"check", "-scenario", "coord", "-max-memory", "-1GB"},
		{"check", "-scenario", "coord", "-depth", "300"},
		{"check", "-scenario", "nope"},
		{"check"},
	} {
		code, _, stderr := simrun(t, args...)
		if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, stderr)
		}
	}
	if b, _ := os.ReadFile(out); string(b) != "keep" {
		t.Fatal("check overwrote an existing file")
	}
	// Without -out, a second violation goes to a fresh name.
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for i := 0; i < 2; i++ {
		if code, _, stderr := simrun(t, "check", "-scenario", "coord", "-bug", "coord.complete-keeps-lease"); code != exitViolation {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	for _, name := range []string{"check-coord-C.TerminalUnleased.choices", "check-coord-C.TerminalUnleased-2.choices"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCheckListsPresets(t *testing.T) {
	code, stdout, _ := simrun(t, "check", "-bounds", "list")
	if code != exitOK || !strings.Contains(stdout, "coord -bounds small") || !strings.Contains(stdout, "coord -bounds medium") {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
}

// A search that reaches -max-memory stops with the verdict incomplete (in
// the text and in JSON), exit 3, its tables within three quarters of it.
func TestCheckMemoryBoundIsIncomplete(t *testing.T) {
	code, stdout, stderr := simrun(t, "check", "-scenario", "coord", "-depth", "1", "-max-memory", "1MB", "-json")
	if code != exitUnknown {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	got := decodeOne[checkJSON](t, stdout)
	if got.Verdict != "incomplete" || got.Incomplete != "memory bound reached" || got.Complete || got.Distinct == 0 || got.TableBytes > 768<<10 {
		t.Fatalf("check -json: %+v", got)
	}
	if !strings.Contains(stderr, "verdict  incomplete: memory bound reached") {
		t.Fatalf("the text does not say so:\n%s", stderr)
	}
	if _, stdout, _ = simrun(t, "check", "-scenario", "coord", "-depth", "1", "-max-states", "100", "-json"); !strings.Contains(stdout, `"incomplete":"time or state bound reached"`) {
		t.Fatalf("-max-states: %s", stdout)
	}
}
