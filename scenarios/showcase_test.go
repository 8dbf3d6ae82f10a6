package scenarios

import (
	"testing"

	"shardsim/model/bugs"
	"shardsim/property"
)

// showcaseRun is one world run that must be caught by exactly one
// property: a registered bug (or options that make the world impossible
// to finish) and the seed.
type showcaseRun struct {
	property property.Name
	scenario string
	bug      string
	options  map[string]string
	seed     uint64
}

// checkShowcase requires each run to be a violation of exactly its
// property, and every property in judged (each in the catalog) to be shown
// failing by some run: every checker fails in a world, not merely on a
// hand-built history.
func checkShowcase(t *testing.T, runs []showcaseRun, judged []property.Name) {
	t.Helper()
	seen := map[property.Name]bool{}
	for _, c := range runs {
		res, err := Run(c.scenario, Config{Seed: c.seed, Bugs: bugs.MustParse(c.bug), Options: c.options})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != property.VerdictViolation || res.Property != c.property {
			t.Errorf("%s seed %d with %q %v: %s %s, want a violation of %s", c.scenario, c.seed, c.bug, c.options, res.Verdict, res.Property, c.property)
		}
		seen[c.property] = true
	}
	for _, p := range judged {
		if !property.Known(p) {
			t.Errorf("%s is not in the property catalog", p)
		}
		if !seen[p] {
			t.Errorf("no world run shows %s failing", p)
		}
	}
}
