package main

import (
	"strings"
	"testing"
)

// sweep -coverage prints the reachability table of the scenario's group
// with the summary (on stderr with -json, leaving stdout one JSON object),
// and is bad usage for a scenario that declares no points.
func TestSweepCoverageTable(t *testing.T) {
	code, out, _ := simrun(t, "sweep", "-scenario", "coord", "-seeds", "1-2", "-coverage", "-no-save")
	if code != exitOK || !strings.Contains(out, "reachability (coord, 2 runs)") || !strings.Contains(out, "\nacquire.ok ") {
		t.Fatalf("exit %d, no reachability table:\n%s", code, out)
	}
	code, out, stderr := simrun(t, "sweep", "-scenario", "coord", "-seeds", "1-2", "-coverage", "-no-save", "-json")
	decodeOne[sweepSummary](t, out)
	if code != exitOK || !strings.Contains(stderr, "reachability (coord, 2 runs)") {
		t.Fatalf("-json: exit %d, stderr lacks the table:\n%s", code, stderr)
	}
	code, _, stderr = simrun(t, "sweep", "-scenario", "kv", "-seeds", "1-2", "-coverage", "-no-save")
	if code != exitUsage || !strings.Contains(stderr, "declares no reachability points") {
		t.Fatalf("kv -coverage: exit %d %q", code, stderr)
	}
}
