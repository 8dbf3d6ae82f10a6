package scenarios

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"shardsim/model/bugs"
	"shardsim/property"
)

// detection is how one bug fared in its sweep.
type detection struct {
	bug      bugs.Bug
	seed     int           // first seed that caught it, 0 if none
	property property.Name // what caught it
}

// TestBugTable is H.BugsDetected: every registered bug, switched on alone, is
// caught by its scenario's sweep within the budget the registry records, by
// one of the properties the registry names for it. With `go test -v` (or
// `make bugtable`) it prints the table: bug, property, seeds to first
// detection. The clean sweeps of each scenario (no bug) live beside each
// scenario's tests. Each bug's sweep stops at its first detection, so it
// is as short as the budget rule allows; the bugs run in parallel
// (independent worlds), the table in the registry's order.
func TestBugTable(t *testing.T) {
	all := bugs.All()
	rows := make([]detection, len(all))
	t.Run("bugs", func(t *testing.T) {
		for i, b := range all {
			t.Run(b.Name, func(t *testing.T) {
				t.Parallel()
				sweepBug(t, b, &rows[i])
			})
		}
	})
	var out strings.Builder
	fmt.Fprintf(&out, "%-38s %-16s %-28s %s\n", "bug", "scenario", "caught by", "seeds to first detection (budget)")
	for _, r := range rows {
		seed := "-"
		if r.seed > 0 {
			seed = fmt.Sprint(r.seed)
		}
		fmt.Fprintf(&out, "%-38s %-16s %-28s %s (%d)\n", r.bug.Name, r.bug.Scenario, r.property, seed, r.bug.Budget)
	}
	t.Log("\n" + out.String())
	if path := os.Getenv("SHARDSIM_BUGTABLE_OUT"); path != "" {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sweepBug sweeps b's scenario with b on, seed by seed within b's budget,
// until a run is caught, and notes the detection in d.
func sweepBug(t *testing.T, b bugs.Bug, d *detection) {
	d.bug = b
	if _, err := Lookup(b.Scenario); err != nil {
		t.Fatalf("%s names scenario %q, which is not registered", b.Name, b.Scenario)
	}
	for s := 1; s <= b.Budget; s++ {
		res, err := Run(b.Scenario, Config{Seed: uint64(s), Bugs: bugs.MustParse(b.Name)})
		if err != nil {
			t.Fatalf("seed %d: %v", s, err)
		}
		if res.Verdict != property.VerdictViolation {
			continue
		}
		d.seed, d.property = s, res.Property
		if !contains(b.Properties, res.Property) {
			t.Fatalf("seed %d: caught by %s, but the registry names %v", s, res.Property, b.Properties)
		}
		return
	}
	t.Fatalf("not caught within its budget of %d seeds of %s", b.Budget, b.Scenario)
}
