package scenarios

import (
	"testing"

	"shardsim/model/bugs"
	"shardsim/property"
)

// Every property a scenario or a bug names is in the catalog, so a name in a
// report always leads to its statement in PROPERTIES.md.
func TestNamesComeFromThePropertyCatalog(t *testing.T) {
	for _, s := range All() {
		if len(s.Properties) == 0 {
			t.Errorf("scenario %s names no properties", s.Name)
		}
		for _, p := range s.Properties {
			if !property.Known(p) {
				t.Errorf("scenario %s: %q is not in the property catalog", s.Name, p)
			}
		}
	}
	for _, b := range bugs.All() {
		for _, p := range b.Properties {
			if !property.Known(p) {
				t.Errorf("bug %s: %q is not in the property catalog", b.Name, p)
			}
		}
		if _, err := Lookup(b.Scenario); err != nil {
			t.Errorf("bug %s: %v", b.Name, err)
		}
	}
}

// A scenario refuses a bug of another protocol: a sweep that silently ran
// with the bug ignored would report a pass that proves nothing.
func TestScenariosRejectForeignBugs(t *testing.T) {
	for _, s := range All() {
		for _, b := range bugs.All() {
			if b.Scenario == s.Name || appliesTo(b, s.Name) {
				continue
			}
			if _, err := s.Run(Config{Seed: 1, Bugs: bugs.MustParse(b.Name)}); err == nil {
				t.Errorf("scenario %s accepted foreign bug %s", s.Name, b.Name)
			}
		}
	}
}

// appliesTo reports whether bug b belongs to the protocol scenario name runs.
func appliesTo(b bugs.Bug, name string) bool {
	protocol := map[string]string{
		"kv": "kv", "coord": "coord", "coord-zombie": "coord", "coord-churn": "coord",
		"migrate": "migrate", "migrate-abandon": "migrate", "migrate-stale": "migrate", "hotspot": "migrate",
		"keymove": "keymove", "keymove-resume": "keymove",
		"lists": "listdelta", "lists-migrate": "listdelta",
	}
	return protocol[name] == b.Protocol
}
