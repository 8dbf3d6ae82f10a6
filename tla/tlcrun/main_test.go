package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const passOut = `Model checking completed. No error has been found.
  Estimates of the probability that TLC did not check all reachable states
579,234 states generated, 109,488 distinct states found, 0 states left on queue.
The depth of the complete state graph search is 15.
`

const invOut = `Error: Invariant C_ZombieRejection is violated.
Error: The behavior up to this point is:
3412 states generated, 674 distinct states found, 551 states left on queue.
The depth of the complete state graph search is 9.
`

const actionOut = `Error: Action property C_MutualExclusion is violated.
305 states generated, 108 distinct states found, 92 states left on queue.
`

const temporalOut = `Error: Temporal properties were violated.
Error: The following behavior constitutes a counter-example:
3973 states generated, 1430 distinct states found, 0 states left on queue.
`

func TestParseOutput(t *testing.T) {
	one := config{properties: []string{"M_JobTerminates"}}
	two := config{properties: []string{"A", "B"}}
	cases := []struct {
		name     string
		out      string
		cfg      config
		passed   bool
		violated string
		failure  bool
		distinct int64
		depth    int64
	}{
		{"pass", passOut, config{}, true, "", false, 109488, 15},
		{"invariant", invOut, config{}, false, "C_ZombieRejection", false, 674, 9},
		{"action", actionOut, config{}, false, "C_MutualExclusion", false, 108, -1},
		{"temporal attributed", temporalOut, one, false, "M_JobTerminates", false, 1430, -1},
		{"temporal ambiguous", temporalOut, two, false, "temporal property", false, 1430, -1},
		{"deadlock", "Error: Deadlock reached.\n", config{}, false, "", true, 0, -1},
		{"garbage", "java: command not found", config{}, false, "", true, 0, -1},
	}
	for _, c := range cases {
		r := parseOutput(c.out, c.cfg)
		if r.passed != c.passed || r.violated != c.violated || (r.failure != "") != c.failure ||
			r.distinct != c.distinct || r.depth != c.depth {
			t.Errorf("%s: got %+v", c.name, r)
		}
	}
}

func TestJudge(t *testing.T) {
	safe := config{name: "X.cfg"}
	gap := config{name: "X_gap_b.cfg", expect: "C_A", base: "X.cfg"}
	cases := []struct {
		name string
		cfg  config
		res  result
		ok   bool
	}{
		{"safe passes", safe, result{passed: true}, true},
		{"safe violated", safe, result{violated: "C_A"}, false},
		{"gap violated as expected", gap, result{violated: "C_A"}, true},
		{"gap violated otherwise", gap, result{violated: "C_B"}, false},
		{"gap passes", gap, result{passed: true}, false},
		{"tlc error", safe, result{failure: "Deadlock reached."}, false},
	}
	for _, c := range cases {
		r := row{cfg: c.cfg, result: c.res}
		r.judge()
		if r.ok != c.ok {
			t.Errorf("%s: ok=%v (%s)", c.name, r.ok, r.problem)
		}
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const baseCfg = "CONSTANTS\n    N = 2\n    Bugs = {}\nINIT Init\nNEXT Next\nINVARIANT Inv\n"

func TestConfigsAndBase(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"Spec.tla":           "",
		"SpecTwo.tla":        "",
		"Spec.cfg":           baseCfg,
		"SpecTwo_x.cfg":      baseCfg,
		"Spec_gap_b.cfg":     "\\* EXPECT: Inv\n\\* BASE: Spec.cfg\nCONSTANTS\n    N = 2\n    Bugs = {\"b\"}\nPROPERTY P\n",
		"Spec_gap_n.cfg":     "\\* EXPECT: Inv\n\\* BASE: Spec.cfg\nCONSTANTS\n    N = 3\n    Bugs = {\"b\"}\n",
		"Spec_gap_off.cfg":   "\\* EXPECT: Inv\n\\* BASE: Spec.cfg\nCONSTANTS\n    N = 2\n    Bugs = {}\n",
		"Spec_gap_noexp.cfg": "\\* BASE: Spec.cfg\nCONSTANTS\n    N = 2\n",
	})
	names := []string{"Spec", "SpecTwo"}
	if _, err := readConfig(filepath.Join(dir, "Spec_gap_noexp.cfg"), names); err == nil {
		t.Error("a BASE without EXPECT was accepted")
	}
	two, err := readConfig(filepath.Join(dir, "SpecTwo_x.cfg"), names)
	if err != nil || two.module != "SpecTwo" {
		t.Fatalf("SpecTwo_x.cfg: module %q, %v", two.module, err)
	}
	gap, err := readConfig(filepath.Join(dir, "Spec_gap_b.cfg"), names)
	if err != nil || gap.module != "Spec" || gap.expect != "Inv" || len(gap.properties) != 1 {
		t.Fatalf("Spec_gap_b.cfg: %+v, %v", gap, err)
	}
	if err := checkBase(gap); err != nil {
		t.Errorf("a gap that only switches a bug on was refused: %v", err)
	}
	for _, name := range []string{"Spec_gap_n.cfg", "Spec_gap_off.cfg"} {
		c, err := readConfig(filepath.Join(dir, name), names)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkBase(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := readConfig(filepath.Join(dir, "Spec.cfg"), []string{"Other"}); err == nil ||
		!strings.Contains(err.Error(), "no module") {
		t.Errorf("a configuration without a module: %v", err)
	}
}
